/**
 * Retention's background run on a worker thread of its own (issue 18: "without blocking a turn"). On the gateway's
 * thread a run's 15 ms slices were the event-loop blocks it caused, and in a gateway on a loaded machine a slice with
 * 4-19 ms of CPU took 25-113 ms by the wall clock (the thread waiting for a core, or for a blocking write of the log);
 * on a worker, the gateway's thread only starts the run and receives its report, and the slices (still short
 * transactions: the gateway's writes wait for the lock without blocking, sqlite/database.ts) hold no turn. The report
 * says where the run went and the longest delay of the calling thread's event loop while it went.
 *
 * Where no worker can start (no worker threads, or the entry cannot be loaded, e.g. a host that loads the plugin from
 * memory), `runOnRetentionThread` runs the same work on the calling thread instead, time-sliced, and logs why once.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { Logger } from "../contracts.js";
import { logOnce } from "../runtime/log-once.js";
import { type RetentionBudget, type RetentionReport, roundTenth } from "./retention-service.js";
import type { RetentionSettings } from "./retention-policy.js";

/** What the worker gets (structured clone: plain data only). */
export interface RetentionThreadRequest {
  /** The database file, or on PostgreSQL the label the settings give (what the archives record as their origin). */
  databasePath: string;
  /** On PostgreSQL: the server's URL; the worker opens a pool of its own on it. */
  databaseUrl?: string;
  archiveDirectory: string;
  settings: RetentionSettings;
  budget: RetentionBudget;
  sliceMs?: number;
}

export type RetentionThreadMessage =
  | { type: "started" }
  | { type: "report"; report: RetentionReport }
  | { type: "error"; message: string }
  | { type: "log"; level: keyof Logger; message: string };

/** The worker's entry next to this module: the built .js, or the .ts source under tsx (tests, `npm run` scripts). */
function workerEntry(): { url: URL; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith(".ts");
  return {
    url: new URL(fromSource ? "./retention-worker.ts" : "./retention-worker.js", import.meta.url),
    execArgv: fromSource ? ["--import", "tsx"] : [],
  };
}

/**
 * Runs one retention run (apply, within `request.budget`) on a new worker thread and resolves with its report
 * (`thread: "worker"`; `callerLoopMaxDelayMs` and `callerBusyMs` measured here). When the worker cannot start,
 * resolves with `onCallingThread()` instead. Rejects when the run failed on the worker (the message says why;
 * nothing half-done is visible: every step is its own transaction and re-checks what it planned). `entry` replaces
 * the worker's module (tests).
 */
export function runOnRetentionThread(
  request: RetentionThreadRequest,
  options: { logger: Logger; onCallingThread: () => Promise<RetentionReport>; entry?: { url: URL; execArgv: string[] } },
): Promise<RetentionReport> {
  const delays = monitorEventLoopDelay({ resolution: 1 });
  const fallBack = (reason: string) => {
    logOnce(options.logger, "warn", "retention-thread", `retention: no worker thread (${reason}); retention runs on the gateway's thread, in time slices.`);
    return options.onCallingThread();
  };
  // The longest stretch of this run's own work on the calling thread: starting the worker, handling a message.
  let busyMs = 0;
  const timed = <T>(work: () => T): T => {
    const started = performance.now();
    try {
      return work();
    } finally {
      busyMs = Math.max(busyMs, performance.now() - started);
    }
  };
  let worker: Worker;
  try {
    const entry = options.entry ?? workerEntry();
    worker = timed(() => new Worker(entry.url, { workerData: request, execArgv: entry.execArgv }));
  } catch (error) {
    return fallBack(error instanceof Error ? error.message : String(error));
  }
  delays.enable();
  return new Promise<RetentionReport>((resolve, reject) => {
    let started = false;
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      delays.disable();
      outcome();
      void worker.terminate();
    };
    worker.on("message", (message: RetentionThreadMessage) => timed(() => {
      switch (message.type) {
        case "started":
          started = true;
          return;
        case "log":
          options.logger[message.level](message.message);
          return;
        case "report":
          settle(() => resolve({
            ...message.report, thread: "worker", callerLoopMaxDelayMs: roundTenth(delays.max / 1e6), callerBusyMs: roundTenth(busyMs),
          }));
          return;
        case "error":
          settle(() => reject(new Error(message.message)));
      }
    }));
    const failed = (reason: string) => {
      // A worker that never opened the database did nothing: the run goes on the calling thread.
      settle(() => (started ? reject(new Error(`the retention thread ${reason}`)) : fallBack(reason).then(resolve, reject)));
    };
    worker.on("error", (error) => failed(error.message));
    worker.on("exit", (code) => failed(`exited (code ${code}) before it reported`));
  });
}
