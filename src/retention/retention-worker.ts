/**
 * The entry of retention's worker thread (retention-thread.ts starts it, one per background run): it opens its own
 * connection to the database the gateway has open, runs the bounded retention run there (retention/retention-service.ts,
 * the same time-sliced transactions and archives as on the calling thread) and posts the report back. Messages:
 * `started` once the connection is open, then `report` or `error`; `log` for what the run logs.
 */
import { parentPort, workerData } from "node:worker_threads";
import { systemClock, type Logger } from "../contracts.js";
import { openWorkerConnection } from "../sqlite/connection-registry.js";
import { describeError } from "../errors.js";
import { RetentionService } from "./retention-service.js";
import { SqliteRetentionStore } from "../sqlite/sqlite-retention-store.js";
import { SqliteStore } from "../sqlite/sqlite-store.js";
import { SqliteExportStore } from "../sqlite/sqlite-export-store.js";
import { exportConversationRecords } from "../transfer/jsonl-export.js";
import { GzipJsonlArchiveWriter } from "./archive-writer.js";
import type { RetentionThreadMessage, RetentionThreadRequest } from "./retention-thread.js";

const port = parentPort!;
const post = (message: RetentionThreadMessage) => port.postMessage(message);
const logger: Logger = {
  debug: (message) => post({ type: "log", level: "debug", message }),
  info: (message) => post({ type: "log", level: "info", message }),
  warn: (message) => post({ type: "log", level: "warn", message }),
  error: (message) => post({ type: "log", level: "error", message }),
};

async function main(request: RetentionThreadRequest): Promise<void> {
  const database = openWorkerConnection(request.databasePath);
  try {
    post({ type: "started" });
    const service = new RetentionService({
      store: new SqliteRetentionStore(database), conversations: new SqliteStore(database),
      exportConversation: (conversationId) => exportConversationRecords(new SqliteExportStore(database), conversationId),
      archives: new GzipJsonlArchiveWriter(request.archiveDirectory), config: { ...request.settings, databasePath: request.databasePath },
      clock: systemClock, logger, ...(request.sliceMs === undefined ? {} : { sliceMs: request.sliceMs }),
    });
    post({ type: "report", report: await service.run({ apply: true, budget: request.budget }) });
  } finally {
    database.close();
  }
}

main(workerData as RetentionThreadRequest).catch((error: unknown) => post({ type: "error", message: describeError(error) }));
