/**
 * Backlog indexing on a worker thread of its own (issue 30, specs/030-ten-million.md). A backlog past
 * BACKLOG_WORKER_MESSAGES (a bulk import with `--no-index`, a long bootstrap, a burst of sub-agent traffic) is indexed
 * by a worker with its own connection, at full speed, in chunks of up to BACKLOG_SLICE_ROWS rows analysed before their
 * transaction, which holds the lock about BACKLOG_SLICE_MS (the gateway's writes wait asynchronously, database.ts); the
 * gateway's thread only starts it and receives its report. One process's worker at a time (index-lease.ts). The
 * worker stops after its current slice when the connection closes; a killed process's backlog is resumed by the next
 * start. A worker that fails, or cannot start, leaves indexing to the turns' maintenance, logged once.
 */
import { Worker } from "node:worker_threads";
import type { Logger } from "../contracts.js";
import { leaseHolder } from "../runtime/lease-holder.js";
import { logOnce } from "../runtime/log-once.js";
import type { Database } from "./database.js";
import { leaseHolderNow } from "./index-lease.js";

/** Messages waiting at which the worker takes over from the turns' maintenance (two maintains' worth). */
export const BACKLOG_WORKER_MESSAGES = 10_000;
/** Rows per worker chunk at most, and how long its transaction holds the lock (what the gateway's writes wait). */
export const BACKLOG_SLICE_ROWS = 5_000;
export const BACKLOG_SLICE_MS = 250;

/** What the worker gets (structured clone). */
export interface BacklogThreadRequest {
  databasePath: string;
  holder: string;
  sliceRows: number;
  sliceMs: number;
  /** An Int32Array's buffer: 1 asks the worker to stop after its current slice. */
  stop: SharedArrayBuffer;
}

export type BacklogThreadMessage =
  | { type: "held-elsewhere" }
  | { type: "started" }
  | { type: "done"; indexed: number; fileBytes: number; seconds: number; ending: "caught-up" | "stopped" | "lease-lost" }
  | { type: "error"; message: string };

/** The worker's entry: the built .js, or the .ts source under tsx (tests, `npm run` scripts). */
export interface WorkerEntry {
  url: URL;
  execArgv: string[];
}

function defaultEntry(): WorkerEntry {
  const fromSource = import.meta.url.endsWith(".ts");
  return {
    url: new URL(fromSource ? "./backlog-index-worker.ts" : "./backlog-index-worker.js", import.meta.url),
    execArgv: fromSource ? ["--import", "tsx"] : [],
  };
}

/** What the gateway's maintenance does about a backlog. */
export type BacklogIndexing = "worker" | "elsewhere" | "in-turn";

export class BacklogIndexThread {
  private worker: Worker | null = null;
  private isFailed = false;
  private isClosed = false;
  private readonly stop = new Int32Array(new SharedArrayBuffer(4));
  private readonly holder = leaseHolder();
  /** The last run's report (tests, the benchmark). */
  lastRun: Extract<BacklogThreadMessage, { type: "done" }> | null = null;
  /** Settles when the running worker has exited (at once when none runs). */
  exited: Promise<void> = Promise.resolve();

  constructor(private readonly db: Database, private readonly entry: WorkerEntry = defaultEntry()) {}

  get isRunning(): boolean {
    return this.worker !== null;
  }

  /**
   * Starts the worker for a backlog, unless this process's worker runs already or another process's holds the
   * lease. "in-turn": no worker can index (it failed, or the connection is closed): the caller indexes.
   */
  ensure(logger: Logger): BacklogIndexing {
    if (this.isFailed || this.isClosed || this.db.readOnly) return "in-turn";
    if (this.worker) return "worker";
    if (leaseHolderNow(this.db) !== null) return "elsewhere";
    const request: BacklogThreadRequest = {
      databasePath: this.db.path, holder: this.holder, sliceRows: BACKLOG_SLICE_ROWS, sliceMs: BACKLOG_SLICE_MS, stop: this.stop.buffer as SharedArrayBuffer,
    };
    let worker: Worker;
    try {
      worker = new Worker(this.entry.url, { workerData: request, execArgv: this.entry.execArgv });
    } catch (error) {
      this.fail(logger, error instanceof Error ? error.message : String(error));
      return "in-turn";
    }
    // A gateway that ends while the worker runs ends it: the open slice rolls back, and the next start resumes.
    worker.unref();
    this.worker = worker;
    let settled = false;
    this.exited = new Promise((resolve) => worker.once("exit", () => resolve()));
    worker.on("message", (message: BacklogThreadMessage) => {
      if (message.type === "done") {
        settled = true;
        this.lastRun = message;
        logger.info(
          `search index: the backlog worker indexed ${message.indexed} row(s) and ${message.fileBytes} byte(s) of stored content in ` +
            `${message.seconds.toFixed(1)} s (${message.ending}).`,
        );
      } else if (message.type === "held-elsewhere") {
        settled = true;
      } else if (message.type === "error") {
        settled = true;
        this.fail(logger, message.message);
      }
    });
    worker.once("error", (error) => {
      settled = true;
      this.fail(logger, error.message);
    });
    worker.once("exit", (code) => {
      if (this.worker === worker) this.worker = null;
      if (!settled && !this.isClosed) this.fail(logger, `it exited (code ${code}) before it reported`);
    });
    return "worker";
  }

  /** Asks the worker to stop after its current slice (it gives the lease up and closes its connection). */
  close(): void {
    this.isClosed = true;
    Atomics.store(this.stop, 0, 1);
  }

  private fail(logger: Logger, reason: string): void {
    this.isFailed = true;
    logOnce(logger, "warn", `backlog-index-thread:${this.db.path}`,
      `search index: the backlog worker failed (${reason}); the turns' maintenance indexes the backlog instead, in bounded steps.`);
  }
}
