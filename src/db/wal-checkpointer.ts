/**
 * WAL checkpoints on a worker thread. SQLite's automatic checkpoint runs inside the COMMIT that crosses its
 * threshold, on the committing thread, and with synchronous=NORMAL it syncs the WAL and the database file: on a
 * busy disk that COMMIT blocked the event loop 100-350 ms every few dozen turns (docs/benchmarks.md). Here the
 * connection's automatic checkpoint is switched off once a worker with its own connection is running, and after
 * commits the worker is asked (at most every CHECKPOINT_INTERVAL_MS) to checkpoint. Durability is unchanged: the
 * same syncs happen, on another thread.
 *
 * The worker starts after WORKER_AFTER_COMMITS commits, so short-lived connections (tests, tools) never pay for a
 * thread. If the worker cannot run, the connection goes back to SQLite's automatic checkpoints.
 *
 * The same worker merges the messages' full-text index segments when asked (requestIndexMerge). FTS5 merges a
 * term's whole doclist in one step whatever page budget it is given, so one step that reaches a word found in
 * most messages wrote megabytes and held the event loop 30-70 ms at a million messages; on the worker it holds
 * only the write lock, which the main thread's writes wait for asynchronously (Database.write).
 */
import { Worker } from "node:worker_threads";

/** Commits on one connection before its checkpoint worker starts. */
export const WORKER_AFTER_COMMITS = 64;
/** Least time between two checkpoint requests. */
export const CHECKPOINT_INTERVAL_MS = 200;
/** SQLite's default automatic checkpoint, restored when the worker fails. */
const AUTOMATIC_CHECKPOINT_PAGES = 1_000;

/** WAL frames after which the worker also restarts the log (8 KiB pages: 16 MiB). */
export const RESTART_AFTER_FRAMES = 2_048;
/** Index pages per FTS5 merge step on the worker, and steps per request at most (the next request goes on). */
export const MERGE_STEP_PAGES = 256;
const MAX_MERGE_STEPS = 256;
/** Pause between two merge steps, so the main thread's writes get the lock in between. */
const MERGE_PAUSE_MS = 20;
/** A merge step waits until the main thread has been quiet this long, but no longer than MAX_MERGE_WAIT_MS. */
const MERGE_IDLE_MS = 30;
const MAX_MERGE_WAIT_MS = 5_000;

// CommonJS source evaluated in the worker, with its own connection. A PASSIVE checkpoint copies what it can
// without ever waiting for or blocking the writer. While the main thread keeps committing, a PASSIVE checkpoint
// never ends with the whole log copied, so SQLite never rewinds the log and it would grow without bound: once it
// is long, a RESTART checkpoint takes the write lock for the few frames left and rewinds it. The main thread's
// writes meanwhile get SQLITE_BUSY and retry asynchronously (Database.write), so its event loop does not wait.
// Busy results are dropped: the next request checkpoints what is left.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { DatabaseSync } = require("node:sqlite");
const db = new DatabaseSync(workerData.path, { timeout: 2000 });
const passive = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const restart = db.prepare("PRAGMA wal_checkpoint(RESTART)");
const isBusy = (error) => /busy|locked/i.test(String(error && error.message));
let merge = null;
let totalChanges = null;
let merging = false;
let waitedMs = 0;
const lastCommitAt = new Float64Array(workerData.activity);
// One merge step per timer tick, each once the main thread has not committed for mergeIdleMs (or has waited
// maxMergeWaitMs), so a step rarely holds the write lock while the main thread wants it.
function mergeStep(step) {
  const busyFor = workerData.mergeIdleMs - (Date.now() - lastCommitAt[0]);
  if (busyFor > 0 && waitedMs < workerData.maxMergeWaitMs) {
    waitedMs += busyFor;
    return setTimeout(mergeStep, busyFor, step);
  }
  waitedMs = 0;
  try {
    merge = merge || db.prepare("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)");
    totalChanges = totalChanges || db.prepare("SELECT total_changes() AS n");
    const before = totalChanges.get().n;
    merge.run(workerData.mergeStepPages);
    // FTS5 documents this test: the command changed two or more rows only when it merged something.
    const worked = totalChanges.get().n - before >= 2;
    if (worked && step + 1 < workerData.maxMergeSteps) return setTimeout(mergeStep, workerData.mergePauseMs, step + 1);
  } catch (error) {
    if (!isBusy(error)) throw error;
  }
  merging = false;
}
parentPort.on("message", (task) => {
  if (task === "merge-index") {
    if (!merging) {
      merging = true;
      mergeStep(0);
    }
    return;
  }
  try {
    const result = passive.get();
    if (result && result.log >= workerData.restartAfterFrames) restart.get();
  } catch (error) {
    if (!isBusy(error)) throw error;
  }
});
parentPort.postMessage("ready");
`;

/** The part of a connection the checkpointer needs. */
export interface CheckpointedConnection {
  readonly path: string;
  exec(sql: string): void;
}

export class WalCheckpointer {
  private commits = 0;
  private worker: Worker | null = null;
  private isFailed = false;
  private isScheduled = false;
  private lastRequestAt = 0;

  /** When the main thread last committed (ms since the epoch), shared with the worker. */
  private readonly activity = new Float64Array(new SharedArrayBuffer(8));

  constructor(private readonly connection: CheckpointedConnection) {}

  /** Called after every committed write transaction of the connection. Never throws, never blocks. */
  noteCommit(): void {
    if (this.isFailed) return;
    this.activity[0] = Date.now();
    this.commits++;
    if (!this.worker) {
      if (this.commits >= WORKER_AFTER_COMMITS) this.start();
      return;
    }
    if (this.isScheduled) return;
    const wait = Math.max(0, this.lastRequestAt + CHECKPOINT_INTERVAL_MS - Date.now());
    this.isScheduled = true;
    setTimeout(() => this.request(), wait).unref();
  }

  /**
   * Asks the worker to merge full-text index segments; with `startWorker`, starts it first if this connection has
   * not (the request waits in the worker's queue while it opens). False when no worker runs: the caller then
   * merges in bounded steps itself.
   */
  requestIndexMerge(startWorker = false): boolean {
    if (this.isFailed) return false;
    if (!this.worker && startWorker) this.start();
    if (!this.worker) return false;
    this.worker.postMessage("merge-index");
    return true;
  }

  /**
   * Stops the worker. Its connection closes asynchronously, so the main connection is not the last one and SQLite
   * will not fold the log into the file when it closes: a TRUNCATE checkpoint here does it, when the worker is
   * not in the middle of one (if it is, the log stays and is read on the next open; nothing is lost).
   */
  close(): void {
    const hadWorker = this.worker !== null;
    this.isFailed = true;
    void this.worker?.terminate();
    this.worker = null;
    if (!hadWorker) return;
    try {
      this.connection.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // Busy or already closed: the log is complete and valid, only not folded into the file yet.
    }
  }

  private start(): void {
    try {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          path: this.connection.path, restartAfterFrames: RESTART_AFTER_FRAMES, mergeStepPages: MERGE_STEP_PAGES, maxMergeSteps: MAX_MERGE_STEPS,
          mergePauseMs: MERGE_PAUSE_MS, mergeIdleMs: MERGE_IDLE_MS, maxMergeWaitMs: MAX_MERGE_WAIT_MS,
          activity: this.activity.buffer,
        },
      });
      worker.unref();
      worker.once("message", () => {
        // Only once the worker's connection is open does the main connection stop checkpointing itself.
        if (this.worker === worker) this.connection.exec("PRAGMA wal_autocheckpoint = 0");
      });
      worker.once("error", () => this.fallBack());
      worker.once("exit", () => this.fallBack());
      this.worker = worker;
    } catch {
      this.fallBack(); // no worker threads here: SQLite's automatic checkpoint keeps the WAL bounded
    }
  }

  private request(): void {
    this.isScheduled = false;
    this.lastRequestAt = Date.now();
    this.worker?.postMessage("checkpoint");
  }

  private fallBack(): void {
    if (this.isFailed) return;
    this.isFailed = true;
    this.worker = null;
    try {
      this.connection.exec(`PRAGMA wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
    } catch {
      // The connection is closed: nothing left to checkpoint from here.
    }
  }
}
