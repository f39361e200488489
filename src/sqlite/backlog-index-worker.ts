/**
 * The entry of the backlog indexer's worker thread (backlog-index-thread.ts starts it): its own connection to the
 * gateway's database, the lease (index-lease.ts), then the pending messages, summaries and stored content indexed
 * in slices (sqlite-search-index.ts indexBacklog) until none wait or the gateway asks it to stop. Messages:
 * `held-elsewhere` (another process's worker indexes: nothing done), `started`, then `done` or `error`.
 */
import { statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { parentPort, workerData } from "node:worker_threads";
import { describeError } from "../errors.js";
import { openWorkerConnection } from "./connection-registry.js";
import { holdLease, releaseLease } from "./index-lease.js";
import { SqliteSearchIndex } from "./sqlite-search-index.js";
import type { Database } from "./database.js";
import { WAL_TRUNCATE_BYTES } from "./wal-checkpointer.js";
import type { BacklogThreadMessage, BacklogThreadRequest } from "./backlog-index-thread.js";

const port = parentPort!;
const post = (message: BacklogThreadMessage) => port.postMessage(message);
/** Stored content indexed per transaction-run of the file index between two lease renewals. */
const FILE_BYTES_PER_RUN = 4 * 1024 * 1024;
/**
 * Log size past which the worker, before its next chunk, waits for checkpoints to have copied the whole log, so that
 * its next write rewinds it (SQLite rewinds only a log whose every frame was copied); also the connection's
 * journal_size_limit, so the commit after a rewind cuts the file back to this size. Without it the file stayed at its
 * largest extent, what one merge's transaction wrote (58 MB at 1M): the file and log after a 1M run were 2.90× the
 * text, 2.76× with it (bytes written and time unchanged).
 */
const LOG_REWIND_BYTES = WAL_TRUNCATE_BYTES;
/** Longest that wait per chunk (a reader's old snapshot keeps frames from being copied): the run then goes on. */
const REWIND_WAIT_MS = 1_000;
const REWIND_POLL_MS = 5;

/**
 * Once the log file is past LOG_REWIND_BYTES: PASSIVE checkpoints (which never block a reader or a writer) until the
 * log is all copied, so the worker's next write rewinds it; at most REWIND_WAIT_MS.
 */
async function letLogRewind(db: Database, walPath: string): Promise<void> {
  if ((statSync(walPath, { throwIfNoEntry: false })?.size ?? 0) <= LOG_REWIND_BYTES) return;
  const deadline = performance.now() + REWIND_WAIT_MS;
  for (;;) {
    const state = db.get<{ busy: number; log: number; checkpointed: number }>("PRAGMA wal_checkpoint(PASSIVE)");
    if ((state && state.busy === 0 && state.log === state.checkpointed) || performance.now() > deadline) return;
    await sleep(REWIND_POLL_MS);
  }
}

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
    db.raw.exec(`PRAGMA journal_size_limit = ${LOG_REWIND_BYTES}`);
    const walPath = `${request.databasePath}-wal`;
    const indexed = await index.indexBacklog({
      rows: request.sliceRows, budgetMs: request.sliceMs, analyseFirst: true, shouldStop, holds, afterChunk: () => letLogRewind(db, walPath),
    });
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
