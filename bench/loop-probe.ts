/**
 * Watches the event loop while a job runs: a 1 ms interval notes every stretch between two of its ticks (a stretch
 * is how long the loop was held), with the CPU time the main thread spent in it (process.threadCpuUsage). On a
 * loaded machine the two differ: a stretch of 80 ms with 5 ms of CPU is the process waiting for a core, not code
 * holding the loop. Both are reported; the bound of docs/operations.md (50 ms) is about the code.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

export interface LoopStretch {
  from: number;
  to: number;
  wallMs: number;
  /** CPU time of the main thread during the stretch. */
  cpuMs: number;
}

export interface LoopProbeResult {
  /** The longest stretch by wall-clock time, and its CPU time. */
  longest: LoopStretch;
  /** The stretch with the most main-thread CPU time (the longest the code itself held the loop). */
  longestCpu: LoopStretch;
  /** perf_hooks' event-loop delay histogram (1 ms resolution): maximum and 99th percentile. */
  delayMaxMs: number;
  delayP99Ms: number;
  /** Every stretch longer than 2 ms. */
  stretches: LoopStretch[];
}

export function startLoopProbe(): { stop(): LoopProbeResult } {
  const threadCpuMs = () => {
    const usage = process.threadCpuUsage();
    return (usage.user + usage.system) / 1_000;
  };
  const stretches: LoopStretch[] = [];
  const none: LoopStretch = { from: 0, to: 0, wallMs: 0, cpuMs: 0 };
  let longest = none;
  let longestCpu = none;
  let last = performance.now();
  let lastCpu = threadCpuMs();
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    const stretch = { from: last, to: now, wallMs: now - last, cpuMs: cpu - lastCpu };
    if (stretch.wallMs > longest.wallMs) longest = stretch;
    if (stretch.cpuMs > longestCpu.cpuMs) longestCpu = stretch;
    if (stretch.wallMs > 2) stretches.push(stretch);
    last = now;
    lastCpu = cpu;
  }, 1);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return {
    stop() {
      clearInterval(timer);
      histogram.disable();
      return { longest, longestCpu, delayMaxMs: histogram.max / 1e6, delayP99Ms: histogram.percentile(99) / 1e6, stretches };
    },
  };
}

export function round(value: number): number {
  return Math.round(value * 10) / 10;
}
