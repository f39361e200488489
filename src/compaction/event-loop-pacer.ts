/**
 * EventLoopPacer: lets the event loop turn during a long compaction run. A pass whose summarizer answers without
 * I/O (the deterministic summary when the spend guard diverts calls or the circuit is open, a local model, a
 * test fake) resolves as microtasks, so without this a sweep of a large backlog ran every pass in one synchronous
 * stretch: 25 s with the event loop held at 100k messages (issue 15). The engine asks before each pass; a turn of
 * the loop is taken once `intervalMs` have passed since the last one (by default before every pass).
 */
import { nextLoopTurn } from "../runtime/time-slice.js";

/**
 * Longest stretch of a run between two turns of the event loop, before the pass that follows it. 0: a turn before
 * every pass. A pass of the deterministic summary over a full chunk takes 2-10 ms; letting 10 ms of them run
 * between turns held the loop 18-29 ms at 100k messages (up to the 50 ms bar on a loaded machine, and more when a
 * garbage collection fell inside), for no measurable saving: a turn costs microseconds (issue 15).
 */
export const YIELD_INTERVAL_MS = 0;

export class EventLoopPacer {
  private lastTurn: number;

  /** `now`: monotonic milliseconds (the engine's deadline clock). */
  constructor(private readonly now: () => number, private readonly intervalMs = YIELD_INTERVAL_MS) {
    this.lastTurn = now();
  }

  /** Takes one turn of the event loop if `intervalMs` have passed since the last one. Contract: never rejects. */
  async yieldIfDue(): Promise<void> {
    if (this.now() - this.lastTurn < this.intervalMs) return;
    await nextLoopTurn(); // a full turn: timers run even when the pass was resumed by I/O
    this.lastTurn = this.now();
  }
}
