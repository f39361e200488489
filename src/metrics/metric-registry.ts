/**
 * Counters, gauges and histograms with labels, rendered in Prometheus' text format (prometheus-text.ts). Small on
 * purpose: the plugin needs a dozen instruments, no push, no default process metrics, and its state must live on
 * globalThis (the host loads the module several times per process), which a library's module-level registry does
 * not allow. Contract: recording never throws and costs a map lookup.
 */

/** Label values of one series, by label name. */
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** Suffix added to the family name (`_bucket`, `_sum`, `_count`), or "" for the family's own value. */
  suffix: string;
  labels: Labels;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  samples: Sample[];
}

/** The series key of a label set: stable whatever the order the labels were given in. */
function keyOf(labels: Labels): string {
  return JSON.stringify(Object.keys(labels).sort().map((name) => [name, labels[name]]));
}

abstract class Instrument {
  protected readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(readonly name: string, readonly help: string) {}

  protected add(labels: Labels, change: (value: number) => number): void {
    const key = keyOf(labels);
    const entry = this.series.get(key);
    if (entry) entry.value = change(entry.value);
    else this.series.set(key, { labels: { ...labels }, value: change(0) });
  }

  /** The value of one series (0 when never recorded): for tests and status. */
  value(labels: Labels = {}): number {
    return this.series.get(keyOf(labels))?.value ?? 0;
  }
}

/** A value that only goes up (resets when the process restarts, as Prometheus expects). */
export class Counter extends Instrument {
  inc(labels: Labels = {}, by = 1): void {
    if (Number.isFinite(by) && by > 0) this.add(labels, (value) => value + by);
  }

  collect(): MetricFamily {
    return { name: this.name, help: this.help, type: "counter", samples: [...this.series.values()].map(({ labels, value }) => ({ suffix: "", labels, value })) };
  }
}

/** A value that is set (the longest block seen so far, a state). */
export class Gauge extends Instrument {
  set(labels: Labels, value: number): void {
    if (Number.isFinite(value)) this.add(labels, () => value);
  }

  /** Raises the value to `value` when it is larger (a running maximum). */
  max(labels: Labels, value: number): void {
    if (Number.isFinite(value)) this.add(labels, (current) => Math.max(current, value));
  }

  collect(): MetricFamily {
    return { name: this.name, help: this.help, type: "gauge", samples: [...this.series.values()].map(({ labels, value }) => ({ suffix: "", labels, value })) };
  }
}

/** Observations counted into cumulative buckets, with their sum and count. */
export class Histogram {
  private readonly series = new Map<string, { labels: Labels; buckets: number[]; sum: number; count: number }>();

  constructor(readonly name: string, readonly help: string, readonly bounds: readonly number[]) {}

  observe(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    const key = keyOf(labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: { ...labels }, buckets: this.bounds.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    for (const [index, bound] of this.bounds.entries()) if (value <= bound) entry.buckets[index]!++;
    entry.sum += value;
    entry.count++;
  }

  /** Observations of one series so far (0 when none): for tests and status. */
  count(labels: Labels = {}): number {
    return this.series.get(keyOf(labels))?.count ?? 0;
  }

  collect(): MetricFamily {
    const samples: Sample[] = [];
    for (const { labels, buckets, sum, count } of this.series.values()) {
      this.bounds.forEach((bound, index) => samples.push({ suffix: "_bucket", labels: { ...labels, le: String(bound) }, value: buckets[index]! }));
      samples.push({ suffix: "_bucket", labels: { ...labels, le: "+Inf" }, value: count });
      samples.push({ suffix: "_sum", labels, value: sum });
      samples.push({ suffix: "_count", labels, value: count });
    }
    return { name: this.name, help: this.help, type: "histogram", samples };
  }
}

/** Milliseconds from 1 ms to 2 minutes: model calls, searches and hooks all fall in this range. */
export const LATENCY_BUCKETS_MS: readonly number[] = [1, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000];
/** Milliseconds of one event-loop block: anything past 50 ms is felt by every other session of the gateway. */
export const BLOCK_BUCKETS_MS: readonly number[] = [5, 10, 20, 50, 100, 200, 500, 1_000, 5_000];
