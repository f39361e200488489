/**
 * Measurement primitives: latency samples with p50 / p95 / max, the longest event-loop block of a phase
 * (perf_hooks.monitorEventLoopDelay at 1 ms resolution), and the peak resident set size seen during it.
 * Each timed operation starts from a fresh macrotask (setImmediate), as a host hook does, so a histogram
 * maximum is the longest synchronous stretch of one operation (or a GC pause), never the whole phase.
 */
import { monitorEventLoopDelay, performance } from "node:perf_hooks";

export interface LatencyStats {
  count: number;
  p50: number;
  p95: number;
  max: number;
  mean: number;
}

export type PhaseStatus = "measured" | "pending" | "skipped";

export interface PhaseResult {
  /** Dotted name, e.g. "assemble.raw". */
  name: string;
  status: PhaseStatus;
  /** Why the phase was not measured (a feature that has not landed, a size the phase does not apply to). */
  reason?: string;
  /** Milliseconds per operation. */
  latency?: LatencyStats;
  /** Operations or messages per second, when the phase is about throughput. */
  rate?: { value: number; unit: string };
  /** Other figures of the phase (counts, totals, ratios), named. */
  values?: Record<string, number | string | boolean>;
  eventLoopMaxMs?: number;
  peakRssMb?: number;
  /** Wall and CPU time of the whole phase: CPU well below wall means the machine was busy with other work. */
  wallMs?: number;
  cpuMs?: number;
}

export function latencyOf(samples: readonly number[]): LatencyStats {
  const sorted = [...samples].sort((left, right) => left - right);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    max: round(sorted.at(-1) ?? 0),
    mean: round(sorted.length ? total / sorted.length : 0),
  };
}

export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One phase's recorder: time operations, then `finish` into a PhaseResult. */
export class Phase {
  readonly samples: number[] = [];
  private readonly histogram: ReturnType<typeof monitorEventLoopDelay>;
  private peakRss = process.memoryUsage.rss();
  private readonly started = performance.now();
  private readonly cpuStarted = process.cpuUsage();

  constructor(readonly name: string) {
    // Every phase starts from a collected heap (children run with --expose-gc): a full collection owed to the
    // previous phase's garbage would otherwise land in this phase's samples at one size and not at another (it
    // moved a 200-sample p95 of assemble by about 2 ms). The phase's own garbage is still collected in its samples.
    (globalThis as { gc?: () => void }).gc?.();
    this.histogram = monitorEventLoopDelay({ resolution: 1 });
    this.histogram.enable();
  }

  /** Times one operation from a fresh macrotask; returns its result. */
  async time<T>(operation: () => Promise<T> | T): Promise<T> {
    await yieldToEventLoop();
    const started = performance.now();
    const result = await operation();
    this.samples.push(performance.now() - started);
    this.sampleRss();
    return result;
  }

  sampleRss(): void {
    const rss = process.memoryUsage.rss();
    if (rss > this.peakRss) this.peakRss = rss;
  }

  get elapsedMs(): number {
    return performance.now() - this.started;
  }

  /** CPU time of this process (all threads, user + system) since the phase began. */
  get cpuMs(): number {
    const usage = process.cpuUsage(this.cpuStarted);
    return (usage.user + usage.system) / 1000;
  }

  finish(extra: Partial<PhaseResult> = {}): PhaseResult {
    this.histogram.disable();
    this.sampleRss();
    return {
      name: this.name,
      status: "measured",
      ...(this.samples.length > 0 ? { latency: latencyOf(this.samples) } : {}),
      eventLoopMaxMs: round(this.histogram.max / 1e6, 1),
      peakRssMb: round(this.peakRss / 2 ** 20, 1),
      wallMs: Math.round(this.elapsedMs),
      cpuMs: Math.round(this.cpuMs),
      ...extra,
    };
  }

  /** Ends the phase without figures: the feature it measures has not landed (or does not apply). */
  abandon(status: Exclude<PhaseStatus, "measured">, reason: string): PhaseResult {
    this.histogram.disable();
    return { name: this.name, status, reason };
  }
}

export function pending(name: string, reason: string): PhaseResult {
  return { name, status: "pending", reason };
}

/**
 * The longest gap between two ticks of a 1 ms timer, with the main thread's CPU time inside it: a block whose CPU
 * time is near its length is work on the event loop; one with little CPU is the thread waiting (a synchronous
 * sync or sleep) or, on a busy machine, the thread not scheduled at all. For attributing blocks, not for the bar.
 */
export class BlockMeter {
  private timer: NodeJS.Timeout | null = null;
  private lastWall = 0;
  private lastCpu = 0;
  longest = { wallMs: 0, cpuMs: 0 };

  start(): this {
    this.reset();
    this.timer = setInterval(() => this.tick(), 1);
    return this;
  }

  reset(): void {
    this.lastWall = performance.now();
    this.lastCpu = threadCpuMs();
    this.longest = { wallMs: 0, cpuMs: 0 };
  }

  /** Counts the stretch up to now (call at the end of an operation, so a block at its very end is included). */
  tick(): void {
    const wall = performance.now();
    const cpu = threadCpuMs();
    if (wall - this.lastWall > this.longest.wallMs) this.longest = { wallMs: wall - this.lastWall, cpuMs: cpu - this.lastCpu };
    this.lastWall = wall;
    this.lastCpu = cpu;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

function threadCpuMs(): number {
  const usage = (process as unknown as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.() ?? process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}
