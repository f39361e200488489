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

  constructor(private readonly databasePath: string) {}

  /** Samples every `intervalMs` while the event loop turns, until `stop`. */
  start(intervalMs = 10): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    return this;
  }

  sample(): void {
    const wal = fileSize(`${this.databasePath}-wal`);
    this.sizes.samples++;
    if (wal > this.sizes.maxWalBytes) this.sizes.maxWalBytes = wal;
    const file = wal + fileSize(this.databasePath);
    if (file > this.sizes.maxFileBytes) this.sizes.maxFileBytes = file;
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
