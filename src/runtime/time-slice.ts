/**
 * Time slices for long jobs that run on the gateway's thread (retention, imports): a job works until its slice has
 * run SLICE_MS, commits what it did, and lets the event loop run before the next slice. Work is cut by elapsed time,
 * not by a row count alone, because the cost of a row varies by orders of magnitude (a chat line or a tool output
 * with a hundred parts, a warm or a cold page cache, another process on the same core). The bound that matters is
 * the longest stretch without a turn of the event loop (docs/operations.md: 50 ms); a slice of 15 ms leaves room for
 * the read before a transaction and the commit after it. The slicer also measures the longest slice a job ran (wall
 * clock and the main thread's CPU), which retention reports.
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
  /**
   * Awaits `work` that waits with the event loop running (a file written, a write lock held elsewhere): the slice
   * ends where the wait begins and a new one starts when it is over. Contract: settles as `work` does.
   */
  waitFor<T>(work: () => Promise<T>): Promise<T>;
}

/** The longest slice of a job: wall-clock time, and the main thread's CPU time in it (null where Node cannot tell). */
export interface LongestSlice {
  wallMs: number;
  cpuMs: number | null;
}

export class TimeSlicer implements SliceDeadline {
  private started: number;
  private cpuStarted: number | null;
  private longest: LongestSlice = { wallMs: 0, cpuMs: null };
  /** How many times the job let the event loop run. */
  yields = 0;

  /**
   * `sliceMs` 0 ends every slice after its first row. `now` is a monotonic clock in ms; `cpuNow` the main thread's
   * CPU time in ms (null when unknown).
   */
  constructor(
    readonly sliceMs: number = DEFAULT_SLICE_MS,
    private readonly now: () => number = () => performance.now(),
    private readonly cpuNow: () => number | null = threadCpuMs,
  ) {
    this.started = now();
    this.cpuStarted = cpuNow();
  }

  expired(): boolean {
    return this.now() - this.started >= this.sliceMs;
  }

  /** Milliseconds this slice has run. */
  elapsed(): number {
    return this.now() - this.started;
  }

  /**
   * The longest stretch the job held the thread without letting the event loop run: from the start of a slice to
   * the yield (or the wait) that ended it, the slice running now included. This is the event-loop block the job
   * caused, by the wall clock: on a loaded machine it also counts time the thread waited for a core or for a
   * blocking system call, which its CPU time does not.
   */
  longestSlice(): LongestSlice {
    const current = this.current();
    return current.wallMs > this.longest.wallMs ? current : { ...this.longest };
  }

  /** Lets the event loop run a full turn (nextLoopTurn), then starts a new slice. */
  async yield(): Promise<void> {
    this.endSlice();
    await nextLoopTurn();
    this.yields++;
    this.startSlice();
  }

  /**
   * Awaits `work` that waits with the event loop running (a file written, a stream drained, a lock held elsewhere):
   * the slice ends where the wait begins (after `work`'s synchronous start) and a new one starts when it is over.
   * Work done by callbacks during the wait (a stream producing its chunks) is counted in no slice.
   */
  async waitFor<T>(work: () => Promise<T>): Promise<T> {
    try {
      const pending = work();
      this.endSlice();
      return await pending;
    } finally {
      this.startSlice();
    }
  }

  /** Yields only when the slice has run out: call it between steps of work done outside a transaction. */
  async checkpoint(): Promise<void> {
    if (this.expired()) await this.yield();
  }

  private current(): LongestSlice {
    const cpu = this.cpuNow();
    return { wallMs: this.elapsed(), cpuMs: cpu === null || this.cpuStarted === null ? null : cpu - this.cpuStarted };
  }

  private startSlice(): void {
    this.started = this.now();
    this.cpuStarted = this.cpuNow();
  }

  private endSlice(): void {
    const current = this.current();
    if (current.wallMs > this.longest.wallMs) this.longest = current;
  }
}

/** This thread's CPU time in ms (process.threadCpuUsage, Node 23.9 and later; a worker's own in a worker), or null. */
function threadCpuMs(): number | null {
  if (typeof process.threadCpuUsage !== "function") return null;
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1_000;
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
