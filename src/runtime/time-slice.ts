/**
 * Time slices for long jobs that run on the gateway's thread (retention, imports): a job works until its slice has
 * run SLICE_MS, commits what it did, and lets the event loop run before the next slice. Work is cut by elapsed time,
 * not by a row count alone, because the cost of a row varies by orders of magnitude (a chat line or a tool output
 * with a hundred parts, a warm or a cold page cache, another process on the same core). The bound that matters is
 * the longest stretch without a turn of the event loop (docs/operations.md: 50 ms); a slice of 15 ms leaves room for
 * the read before a transaction and the commit after it.
 */
import { setImmediate as nextTurn } from "node:timers/promises";

/** How long one slice of a long job runs before it commits and yields. */
export const DEFAULT_SLICE_MS = 15;

/**
 * What a store method consults between the rows of one transaction. Contract: cheap, never throws; once expired it
 * stays expired until the caller starts a new slice. A method that takes one does at least one row of work, so a
 * job always moves on, however slow a row is.
 */
export interface SliceDeadline {
  expired(): boolean;
}

export class TimeSlicer implements SliceDeadline {
  private started: number;
  /** How many times the job let the event loop run. */
  yields = 0;

  /** `sliceMs` 0 ends every slice after its first row. `now` is a monotonic clock in ms. */
  constructor(readonly sliceMs: number = DEFAULT_SLICE_MS, private readonly now: () => number = () => performance.now()) {
    this.started = now();
  }

  expired(): boolean {
    return this.now() - this.started >= this.sliceMs;
  }

  /** Milliseconds this slice has run. */
  elapsed(): number {
    return this.now() - this.started;
  }

  /** Lets the event loop run a full turn (nextLoopTurn), then starts a new slice. */
  async yield(): Promise<void> {
    await nextLoopTurn();
    this.yields++;
    this.started = this.now();
  }

  /** Yields only when the slice has run out: call it between steps of work done outside a transaction. */
  async checkpoint(): Promise<void> {
    if (this.expired()) await this.yield();
  }
}

/**
 * Resolves once the event loop has run a full turn: timers, new I/O, other sessions' hooks. Twice setImmediate: code
 * resumed by an I/O callback (a file written, a read) runs in the poll phase, and one setImmediate from there fires in
 * the same loop iteration's check phase, before any timer or new I/O is handled; the second fires in the next
 * iteration, after both.
 */
export async function nextLoopTurn(): Promise<void> {
  await nextTurn();
  await nextTurn();
}
