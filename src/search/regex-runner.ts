/**
 * Runs a search regex in a worker thread with a hard deadline. A JavaScript regex cannot be interrupted once it
 * starts backtracking, so running it on the gateway's thread would let one bad pattern freeze every session;
 * in a worker, the deadline terminates the thread and the search reports that it stopped early. The worker
 * has a memory cap. Starting a worker costs 50-150 ms on a busy machine, so a healthy one is parked after a
 * search (one per module copy, unref'd, ended after a minute idle); a timed-out or failed one is terminated.
 */
import { Worker } from "node:worker_threads";

/** For each text that matched: its index in the batch and the first match's [start, end). */
export type BatchMatches = [index: number, start: number, end: number][];

export type BatchOutcome =
  | { kind: "matched"; matches: BatchMatches }
  | { kind: "timeout" }
  | { kind: "failed"; reason: string };

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
let key = null;
let regex = null;
parentPort.on("message", ({ id, source, flags, texts }) => {
  if (key !== flags + "/" + source) {
    regex = new RegExp(source, flags);
    key = flags + "/" + source;
  }
  const matches = [];
  for (let index = 0; index < texts.length; index++) {
    const match = regex.exec(texts[index]);
    if (match) matches.push([index, match.index, match.index + match[0].length]);
  }
  parentPort.postMessage({ id, matches });
});
`;

const WORKER_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
const IDLE_WORKER_MS = 60_000;

let parked: { worker: Worker; timer: NodeJS.Timeout } | null = null;

function takeWorker(): Worker {
  if (parked) {
    const { worker, timer } = parked;
    clearTimeout(timer);
    parked = null;
    return worker;
  }
  const worker = new Worker(WORKER_SOURCE, { eval: true, resourceLimits: WORKER_LIMITS });
  worker.unref();
  worker.once("exit", () => {
    if (parked?.worker === worker) {
      clearTimeout(parked.timer);
      parked = null;
    }
  });
  return worker;
}

function parkWorker(worker: Worker): void {
  if (parked) {
    void worker.terminate();
    return;
  }
  const timer = setTimeout(() => {
    if (parked?.worker !== worker) return;
    parked = null;
    void worker.terminate();
  }, IDLE_WORKER_MS);
  timer.unref();
  parked = { worker, timer };
}

export class RegexRunner {
  private worker: Worker | null = null;
  private nextId = 0;

  constructor(private readonly source: string, private readonly flags: string) {}

  /** Matches a batch of texts; gives up (and terminates the worker) after `timeoutMs`. */
  async match(texts: string[], timeoutMs: number): Promise<BatchOutcome> {
    if (texts.length === 0) return { kind: "matched", matches: [] };
    if (timeoutMs <= 0) return { kind: "timeout" };
    const worker = (this.worker ??= takeWorker());
    const id = this.nextId++;
    return new Promise<BatchOutcome>((resolve) => {
      const finish = (outcome: BatchOutcome) => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        if (outcome.kind !== "matched") this.discard();
        resolve(outcome);
      };
      const onMessage = (message: { id: number; matches: BatchMatches }) => {
        if (message.id === id) finish({ kind: "matched", matches: message.matches });
      };
      const onError = (error: Error) => finish({ kind: "failed", reason: error.message });
      const onExit = (code: number) => finish({ kind: "failed", reason: `the regex worker exited (code ${code})` });
      const timer = setTimeout(() => finish({ kind: "timeout" }), timeoutMs);
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.on("exit", onExit);
      worker.postMessage({ id, source: this.source, flags: this.flags, texts });
    });
  }

  /** Ends the search: a healthy worker is parked for the next search. */
  close(): void {
    const worker = this.worker;
    this.worker = null;
    if (worker) parkWorker(worker);
  }

  /** Terminates the worker (it may be stuck in a regex); the next batch or search starts a fresh one. */
  private discard(): void {
    const worker = this.worker;
    this.worker = null;
    if (worker) void worker.terminate();
  }
}
