/**
 * WAL checkpoints on a worker thread. SQLite's automatic checkpoint runs inside the COMMIT that crosses its
 * threshold, on the committing thread, and with synchronous=NORMAL it syncs the WAL and the database file: on a
 * busy disk that COMMIT blocked the event loop 100-350 ms every few dozen turns (docs/benchmarks.md). Here the
 * connection's automatic checkpoint is switched off once a worker with its own connection is running, and after
 * commits the worker is asked (at most every CHECKPOINT_INTERVAL_MS) to checkpoint. Durability is unchanged: the
 * same syncs happen, on another thread.
 *
 * The log stays bounded (spec 012). A PASSIVE checkpoint never ends with the whole log copied while the writer
 * keeps committing, so SQLite never rewinds the log on its own; a RESTART taken in the gaps between the writer's
 * transactions lost against a steady writer too (51-108 MB of log after sustained ingest, 5.7 GB in an independent
 * benchmark). So once the log file passes WAL_TRUNCATE_BYTES, the main thread's next writes wait (asynchronously:
 * the event loop runs) while the worker copies what is left and truncates the log; the commit that crossed the
 * size asks for it at once. The log is then at most that size plus one transaction.
 *
 * The worker starts after WORKER_AFTER_COMMITS commits, so short-lived connections (tests, tools) never pay for a
 * thread. If the worker cannot run, the connection goes back to SQLite's automatic checkpoints.
 *
 * The same worker merges the messages' full-text index segments when asked (requestIndexMerge). FTS5 merges a
 * term's whole doclist in one step whatever page budget it is given, so one step that reaches a word found in
 * most messages wrote megabytes and held the event loop 30-70 ms at a million messages; on the worker it holds
 * only the write lock, which the main thread's writes wait for asynchronously (Database.write).
 */
import { statSync } from "node:fs";
import { Worker } from "node:worker_threads";

/** Commits on one connection before its checkpoint worker starts. */
export const WORKER_AFTER_COMMITS = 64;
/** Least time between two checkpoint requests. */
export const CHECKPOINT_INTERVAL_MS = 200;
/** SQLite's default automatic checkpoint, restored when the worker fails. */
const AUTOMATIC_CHECKPOINT_PAGES = 1_000;

/**
 * Log size at which the worker truncates the log, holding the main thread's next writes until it has. Also the
 * connection's journal_size_limit, so a log SQLite rewinds on its own (automatic checkpoints) shrinks back to it.
 */
export const WAL_TRUNCATE_BYTES = 16 * 2 ** 20;
/** Log growth after which the worker is asked to checkpoint at once, without waiting for CHECKPOINT_INTERVAL_MS. */
export const WAL_CHECKPOINT_STEP_BYTES = 2 * 2 ** 20;
/**
 * Longest a write waits for the truncation; after it, the write goes ahead (and retries while the lock is held).
 * Longer than the worker's busy timeout, so a truncation that cannot finish ends (and says so) before the wait.
 */
export const MAX_WRITE_PAUSE_MS = 2_000;
/** How long the worker's statements wait for a lock or a reader another connection holds. */
const WORKER_BUSY_TIMEOUT_MS = 1_000;
/** Index pages per FTS5 merge step on the worker, and steps per request at most (the next request goes on). */
export const MERGE_STEP_PAGES = 256;
const MAX_MERGE_STEPS = 256;
/** Pause between two merge steps, so the main thread's writes get the lock in between. */
const MERGE_PAUSE_MS = 20;
/** A merge step waits until the main thread has been quiet this long, but no longer than MAX_MERGE_WAIT_MS. */
const MERGE_IDLE_MS = 30;
const MAX_MERGE_WAIT_MS = 5_000;

// CommonJS source evaluated in the worker, with its own connection. A PASSIVE checkpoint copies what it can
// without ever waiting for or blocking the writer. Once the log file passes truncateBytes (after a checkpoint
// request, or after one of the worker's own merge steps), the worker raises the pause flag, so the main thread
// starts no new write transaction, and a TRUNCATE checkpoint copies the frames left and cuts the log to zero
// bytes; the worker starts the new log itself; then the flag drops and waiting writes go on. Busy results are
// dropped: the next request checkpoints what is left.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { statSync } = require("node:fs");
const { DatabaseSync } = require("node:sqlite");
const db = new DatabaseSync(workerData.path, { timeout: workerData.busyTimeoutMs });
const passive = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const truncate = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)");
const userVersion = db.prepare("PRAGMA user_version");
const isBusy = (error) => /busy|locked/i.test(String(error && error.message));
const walPath = workerData.path + "-wal";
const lastCommitAt = new Float64Array(workerData.activity);
const pauseWrites = new Int32Array(workerData.pause);
let merge = null;
let totalChanges = null;
let merging = false;
let waitedMs = 0;
// The log size at which the log is truncated, shared with the main thread: doubled after a truncation that another
// connection's reader kept from finishing, so such a reader costs a few waits, not one per commit or request.
const truncateAt = new Float64Array(workerData.truncateAt);
function walBytes() {
  try {
    return statSync(walPath).size;
  } catch {
    return 0;
  }
}
function checkpoint() {
  let isAllCopied = false;
  try {
    const result = passive.get();
    isAllCopied = Boolean(result && result.busy === 0 && result.checkpointed === result.log);
  } catch (error) {
    if (!isBusy(error)) throw error;
  }
  const size = walBytes();
  // All of a log past the bound copied: no reader keeps it any more, so cutting it will finish (and reset the bound).
  const isCuttable = isAllCopied && size >= workerData.truncateBytes;
  if (Atomics.load(pauseWrites, 0) === 1 || size >= truncateAt[0] || isCuttable) truncateLog();
}
// SQLite syncs a new log's header when the first transaction after a truncation commits. The worker makes that
// commit itself (it rewrites user_version with its own value), while writes are still paused, so the sync runs
// here and not inside the main thread's next COMMIT.
function startLog() {
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec("PRAGMA user_version = " + Number(userVersion.get().user_version));
    db.exec("COMMIT");
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
function truncateLog() {
  Atomics.store(pauseWrites, 0, 1);
  let isDone = false;
  try {
    const result = truncate.get();
    isDone = Boolean(result && result.busy === 0);
    if (isDone) startLog();
  } catch (error) {
    if (!isBusy(error)) throw error;
  } finally {
    truncateAt[0] = isDone ? workerData.truncateBytes : 2 * Math.max(walBytes(), workerData.truncateBytes);
    Atomics.store(pauseWrites, 0, 0);
    Atomics.notify(pauseWrites, 0);
  }
}
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
    if (walBytes() >= truncateAt[0]) checkpoint();
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
  checkpoint();
});
parentPort.postMessage("ready");
`;

/** Atomics.waitAsync (ES2024, in Node since 16), typed here because the project's lib is ES2023. */
type WaitAsync = (array: Int32Array, index: number, value: number, timeoutMs: number) =>
  | { async: false; value: "not-equal" | "timed-out" }
  | { async: true; value: Promise<"ok" | "timed-out"> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** The part of a connection the checkpointer needs. */
export interface CheckpointedConnection {
  readonly path: string;
  exec(sql: string): void;
}

/** How often the log reached its bound, and what holding it cost the writer (for tests and the benchmark). */
export interface WalBoundStats {
  /** Commits after which the log had reached WAL_TRUNCATE_BYTES (each asked the worker to truncate it). */
  boundReached: number;
  /** Writes that waited for a truncation. */
  pausedWrites: number;
  /** Longest wait of one write, and all waits together, in milliseconds. */
  longestPauseMs: number;
  totalPauseMs: number;
}

export class WalCheckpointer {
  private commits = 0;
  private worker: Worker | null = null;
  private isReady = false;
  private isFailed = false;
  private isScheduled = false;
  private lastRequestAt = 0;
  /** Log size at the last request made because the log grew (not by the timer). */
  private requestedAtBytes = 0;
  private readonly stats: WalBoundStats = { boundReached: 0, pausedWrites: 0, longestPauseMs: 0, totalPauseMs: 0 };

  /** When the main thread last committed (ms since the epoch), shared with the worker. */
  private readonly activity = new Float64Array(new SharedArrayBuffer(8));
  /** 1 while the worker truncates the log: the main thread starts no write transaction meanwhile. */
  private readonly pauseWrites = new Int32Array(new SharedArrayBuffer(4));
  /**
   * The log size at which it is truncated, shared with the worker: WAL_TRUNCATE_BYTES, doubled by the worker after
   * a truncation that could not finish (another connection's reader still needed the log) and reset by one that did.
   */
  private readonly truncateAt = new Float64Array(new SharedArrayBuffer(8)).fill(WAL_TRUNCATE_BYTES);

  constructor(private readonly connection: CheckpointedConnection) {
    connection.exec(`PRAGMA journal_size_limit = ${WAL_TRUNCATE_BYTES}`);
  }

  /** Called after every committed write transaction of the connection. Never throws, never blocks. */
  noteCommit(): void {
    if (this.isFailed) return;
    this.activity[0] = Date.now();
    this.commits++;
    if (!this.worker) {
      if (this.commits >= WORKER_AFTER_COMMITS) this.start();
      return;
    }
    if (this.isReady && Atomics.load(this.pauseWrites, 0) === 0) {
      const walBytes = this.walBytes();
      if (walBytes >= this.truncateAt[0]!) {
        // This commit took the log past its bound: hold the next writes and have the worker truncate it now.
        Atomics.store(this.pauseWrites, 0, 1);
        this.stats.boundReached++;
        this.requestedAtBytes = 0;
        this.worker.postMessage("checkpoint");
        return;
      }
      if (walBytes < this.requestedAtBytes) this.requestedAtBytes = 0; // the log was truncated since
      if (walBytes >= this.requestedAtBytes + WAL_CHECKPOINT_STEP_BYTES) {
        // A fast writer: copy what is there now, so that the truncation has little left to do while writes wait.
        this.requestedAtBytes = walBytes;
        this.worker.postMessage("checkpoint");
        return;
      }
    }
    if (this.isScheduled) return;
    const wait = Math.max(0, this.lastRequestAt + CHECKPOINT_INTERVAL_MS - Date.now());
    this.isScheduled = true;
    setTimeout(() => this.request(), wait).unref();
  }

  /**
   * Null when a write may start now; otherwise a promise that settles when the worker has truncated the log (or
   * after MAX_WRITE_PAUSE_MS). Database.write awaits it before it begins a transaction. Never rejects.
   */
  writePause(): Promise<void> | null {
    if (Atomics.load(this.pauseWrites, 0) === 0) return null;
    const started = performance.now();
    const waited = waitAsync(this.pauseWrites, 0, 1, MAX_WRITE_PAUSE_MS);
    if (!waited.async) return null; // the truncation ended meanwhile
    // A pending Atomics wait does not keep the process alive (nor does the unref'd worker): this timer does.
    const keepAlive = setTimeout(() => {}, MAX_WRITE_PAUSE_MS);
    const done = (): void => {
      clearTimeout(keepAlive);
      const pausedMs = performance.now() - started;
      this.stats.pausedWrites++;
      this.stats.totalPauseMs += pausedMs;
      if (pausedMs > this.stats.longestPauseMs) this.stats.longestPauseMs = pausedMs;
    };
    return waited.value.then(done, done);
  }

  /** How often the log reached its bound and how long writes waited for it, since the connection opened. */
  get boundStats(): WalBoundStats {
    return { ...this.stats };
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
    this.releaseWrites();
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
          path: this.connection.path, busyTimeoutMs: WORKER_BUSY_TIMEOUT_MS, truncateBytes: WAL_TRUNCATE_BYTES, mergeStepPages: MERGE_STEP_PAGES, maxMergeSteps: MAX_MERGE_STEPS,
          mergePauseMs: MERGE_PAUSE_MS, mergeIdleMs: MERGE_IDLE_MS, maxMergeWaitMs: MAX_MERGE_WAIT_MS,
          activity: this.activity.buffer, pause: this.pauseWrites.buffer, truncateAt: this.truncateAt.buffer,
        },
      });
      worker.unref();
      worker.once("message", () => {
        // Only once the worker's connection is open does the main connection stop checkpointing itself.
        if (this.worker !== worker) return;
        this.connection.exec("PRAGMA wal_autocheckpoint = 0");
        this.isReady = true;
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

  /** Size of the log file; 0 when there is none (or it cannot be read: the next commit looks again). */
  private walBytes(): number {
    try {
      return statSync(`${this.connection.path}-wal`).size;
    } catch {
      return 0;
    }
  }

  /** Lets paused writes go on (the worker is gone, or is going). */
  private releaseWrites(): void {
    Atomics.store(this.pauseWrites, 0, 0);
    Atomics.notify(this.pauseWrites, 0);
  }

  private fallBack(): void {
    if (this.isFailed) return;
    this.isFailed = true;
    this.isReady = false;
    this.worker = null;
    this.releaseWrites();
    try {
      this.connection.exec(`PRAGMA wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
    } catch {
      // The connection is closed: nothing left to checkpoint from here.
    }
  }
}
