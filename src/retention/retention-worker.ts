/**
 * The entry of retention's worker thread (retention-thread.ts starts it, one per background run): it opens its own
 * connection to the database the gateway has open, runs the bounded retention run there (retention/retention-service.ts,
 * the same time-sliced transactions and archives as on the calling thread; on PostgreSQL a pool of its own) and posts the report back. Messages:
 * `started` once the connection is open, then `report` or `error`; `log` for what the run logs.
 */
import { parentPort, workerData } from "node:worker_threads";
import { systemClock, type Logger } from "../contracts.js";
import { openPostgresBackend } from "../postgres/open-postgres-backend.js";
import { openSqliteBackend } from "../sqlite/open-sqlite-backend.js";
import { describeError } from "../errors.js";
import { retentionServiceOn } from "./retention-wiring.js";
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
  const backend = request.databaseUrl
    ? openPostgresBackend(request.databaseUrl, "private", { poolSize: 2, applicationName: "openclaw-lcm-retention" })
    : openSqliteBackend(request.databasePath, "worker");
  try {
    post({ type: "started" });
    const service = retentionServiceOn(backend, {
      config: { ...request.settings, databasePath: request.databasePath, retentionArchiveDirectory: request.archiveDirectory },
      clock: systemClock, logger, ...(request.sliceMs === undefined ? {} : { sliceMs: request.sliceMs }),
    });
    post({ type: "report", report: await service.run({ apply: true, budget: request.budget }) });
  } finally {
    await backend.close();
  }
}

main(workerData as RetentionThreadRequest).catch((error: unknown) => post({ type: "error", message: describeError(error) }));
