/**
 * The entry of the backlog indexer's worker thread (backlog-index-thread.ts starts it): its own connection to the
 * gateway's database, the lease (index-lease.ts), then the pending messages, summaries and stored content indexed
 * in slices (sqlite-search-index.ts indexBacklog) until none wait or the gateway asks it to stop. Messages:
 * `held-elsewhere` (another process's worker indexes: nothing done), `started`, then `done` or `error`.
 */
import { parentPort, workerData } from "node:worker_threads";
import { describeError } from "../errors.js";
import { openWorkerConnection } from "./connection-registry.js";
import { holdLease, releaseLease } from "./index-lease.js";
import { SqliteSearchIndex } from "./sqlite-search-index.js";
import type { BacklogThreadMessage, BacklogThreadRequest } from "./backlog-index-thread.js";

const port = parentPort!;
const post = (message: BacklogThreadMessage) => port.postMessage(message);
/** Stored content indexed per transaction-run of the file index between two lease renewals. */
const FILE_BYTES_PER_RUN = 4 * 1024 * 1024;

async function main(request: BacklogThreadRequest): Promise<void> {
  const stop = new Int32Array(request.stop);
  const shouldStop = () => Atomics.load(stop, 0) === 1;
  const db = openWorkerConnection(request.databasePath);
  try {
    if (!(await db.write(() => holdLease(db, request.holder)))) {
      post({ type: "held-elsewhere" });
      return;
    }
    post({ type: "started" });
    const started = performance.now();
    const index = new SqliteSearchIndex(db);
    let isHeld = true;
    const holds = () => (isHeld = holdLease(db, request.holder));
    const indexed = await index.indexBacklog({ rows: request.sliceRows, budgetMs: request.sliceMs, analyseFirst: true, shouldStop, holds });
    let fileBytes = 0;
    while (isHeld && !shouldStop()) {
      if (!(await db.write(holds))) break;
      const bytes = await index.files.indexPending(FILE_BYTES_PER_RUN);
      if (bytes === 0) break;
      fileBytes += bytes;
    }
    if (isHeld) await db.write(() => releaseLease(db, request.holder));
    post({
      type: "done", indexed, fileBytes, seconds: (performance.now() - started) / 1000,
      ending: shouldStop() ? "stopped" : isHeld ? "caught-up" : "lease-lost",
    });
  } finally {
    db.close();
  }
}

main(workerData as BacklogThreadRequest).catch((error: unknown) => post({ type: "error", message: describeError(error) }));
