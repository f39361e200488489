/**
 * Samples a database's files on disk while a workload runs: the largest write-ahead log seen, and the largest
 * database + log together. The storage phase measures the file after the log is folded in; a log that grows
 * without bound while writes go on (issue 15: 5.7 GB after a 1M build) only shows while they go on. Sampled after
 * every operation the caller times and on a short timer in between.
 */
import { statSync } from "node:fs";

export interface FileSizes {
  /** Largest -wal file seen, in bytes. */
  maxWalBytes: number;
  /** Largest database file + -wal file seen at one sample, in bytes. */
  maxFileBytes: number;
  samples: number;
}

export class WalSampler {
  private readonly sizes: FileSizes = { maxWalBytes: 0, maxFileBytes: 0, samples: 0 };
  private timer: NodeJS.Timeout | null = null;
  /** The step `mark` named last, and the largest sizes of each step marked so far. */
  private step: { name: string; sizes: FileSizes } | null = null;
  private readonly steps: Record<string, FileSizes> = {};

  constructor(private readonly databasePath: string) {}

  /** Samples every `intervalMs` while the event loop turns, until `stop`. */
  start(intervalMs = 10): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    return this;
  }

  sample(): void {
    const wal = fileSize(`${this.databasePath}-wal`);
    const file = wal + fileSize(this.databasePath);
    for (const sizes of this.step ? [this.sizes, this.step.sizes] : [this.sizes]) {
      sizes.samples++;
      if (wal > sizes.maxWalBytes) sizes.maxWalBytes = wal;
      if (file > sizes.maxFileBytes) sizes.maxFileBytes = file;
    }
  }

  /** Starts a named step of the workload: `bySteps` then reports the largest sizes of each step apart. */
  mark(name: string): void {
    this.sample();
    this.step = { name, sizes: { maxWalBytes: 0, maxFileBytes: 0, samples: 0 } };
    this.steps[name] = this.step.sizes;
    this.sample();
  }

  /** The largest sizes seen during each step `mark` started (a step ends where the next starts, or at `stop`). */
  get bySteps(): Record<string, FileSizes> {
    return Object.fromEntries(Object.entries(this.steps).map(([name, sizes]) => [name, { ...sizes }]));
  }

  stop(): FileSizes {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
    return { ...this.sizes };
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // not there (yet): nothing on disk
  }
}

/** Bytes as MB with one decimal, for tables and values. */
export function megabytes(bytes: number): number {
  return Math.round((bytes / 2 ** 20) * 10) / 10;
}
