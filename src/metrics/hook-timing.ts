/**
 * Times the context-engine hooks and measures the longest event-loop block while each runs. A block is what a
 * synchronous stretch costs every other session of the gateway (a long SQLite statement, a big JSON parse): while
 * any hook is running, a 20 ms interval timer measures how late it fires; the lateness is a block. Each hook call
 * records the longest block seen during its life (attributed to every hook running at the time: good enough to
 * see a stall coming and where). The timer runs only while a hook runs, and is unref'd.
 *
 * `instrumentHooks` wraps an engine object: every hook that exists is wrapped, nothing is added, `info` is kept.
 */
import { processShared } from "../runtime/process-shared.js";
import type { LcmMetrics } from "./lcm-metrics.js";

/** The hooks that are timed (the others are trivial). */
export const TIMED_HOOKS = ["bootstrap", "maintain", "ingest", "ingestBatch", "afterTurn", "commitTurn", "assemble", "compact"] as const;

const TICK_MS = 20;

interface ActiveHook {
  longestBlockMs: number;
}

/** The interval timer and the hooks it watches, shared by every copy of the module. */
class BlockMonitor {
  private readonly active = new Set<ActiveHook>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private lastTick = 0;

  start(): ActiveHook {
    const hook: ActiveHook = { longestBlockMs: 0 };
    this.active.add(hook);
    if (this.timer === null) {
      this.lastTick = performance.now();
      this.timer = setInterval(() => this.tick(), TICK_MS);
      this.timer.unref?.();
    }
    return hook;
  }

  stop(hook: ActiveHook): number {
    // The stretch that ends with the hook's own last step has no tick after it yet: measure it here.
    this.note(performance.now() - this.lastTick - TICK_MS);
    this.active.delete(hook);
    if (this.active.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
    return hook.longestBlockMs;
  }

  private tick(): void {
    const now = performance.now();
    this.note(now - this.lastTick - TICK_MS);
    this.lastTick = now;
  }

  private note(blockMs: number): void {
    if (blockMs <= 0) return;
    for (const hook of this.active) hook.longestBlockMs = Math.max(hook.longestBlockMs, blockMs);
  }
}

function monitor(): BlockMonitor {
  return processShared("hook-block-monitor.v1", () => new BlockMonitor());
}

/** Runs `body` as hook `hook`, recording its duration and the longest event-loop block while it ran. */
export async function timeHook<T>(hook: string, metrics: LcmMetrics, body: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const watched = monitor().start();
  try {
    return await body();
  } finally {
    const longest = monitor().stop(watched);
    metrics.hookDuration.observe({ hook }, performance.now() - started);
    metrics.hookBlock.observe({ hook }, longest);
    metrics.hookBlockMax.max({ hook }, longest);
  }
}

/**
 * The same engine with each of its TIMED_HOOKS timed. The returned object delegates to `engine` (same `info`, same
 * optional hooks present or absent); methods not timed are bound through unchanged.
 */
export function instrumentHooks<E extends object>(engine: E, metrics: LcmMetrics): E {
  const timed = new Set<string>(TIMED_HOOKS);
  return new Proxy(engine, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== "string" || typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!timed.has(property)) return method.bind(target);
      return (...args: unknown[]) => timeHook(property, metrics, async () => method.apply(target, args));
    },
  });
}

/**
 * A context-engine factory whose engines are timed. Only engines that own compaction (LCM's own) are wrapped: the
 * engine served when the database cannot be used hands `compact` to OpenClaw's own function, which the host
 * recognises by identity, so it is returned as it is.
 */
export function timedEngineFactory<A extends unknown[], E extends object>(factory: (...args: A) => E, metrics: LcmMetrics): (...args: A) => E {
  return (...args) => {
    const engine = factory(...args);
    const owns = (engine as { info?: { ownsCompaction?: boolean } }).info?.ownsCompaction === true;
    return owns ? instrumentHooks(engine, metrics) : engine;
  };
}
