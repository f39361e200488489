/**
 * Per-session serialization of mutating operations. Operations on one session run one after another, in call
 * order; different sessions never wait on each other. The queues live on globalThis because the host loads the
 * plugin module several times per process and builds a new engine for every turn: all copies must share them.
 * Across processes, SQLite transactions keep each write atomic.
 */
import { processShared } from "./process-shared.js";
function registry(): { tails: Map<string, Promise<unknown>> } {
  return processShared("session-queues.v1", () => ({ tails: new Map<string, Promise<unknown>>() }));
}

/** Runs `task` after every earlier task queued under `key` has settled (whatever its outcome). */
export function runSerialized<T>(key: string, task: () => Promise<T>): Promise<T> {
  const tails = registry().tails;
  const previous = tails.get(key) ?? Promise.resolve();
  const result = previous.then(task, task);
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return result;
}
