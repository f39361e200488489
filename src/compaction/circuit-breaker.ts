/**
 * A circuit breaker around the summarizer. After `failureThreshold` consecutive failed calls (errors, timeouts,
 * empty or reasoning-only output) it opens: model calls are skipped and compaction falls back to truncation
 * instead of waiting on a broken model every turn. After `coolDownMs` it lets calls through again (half-open);
 * one success closes it, one failure re-opens it for another cool-down. It never blocks compaction itself.
 * Breakers are shared per process through globalThis, because the host builds a new engine for every turn and
 * may load this module several times.
 */
import { processShared } from "../runtime/process-shared.js";

export const DEFAULT_FAILURE_THRESHOLD = 3;
export const DEFAULT_COOL_DOWN_MS = 60_000;

export type CircuitState = "closed" | "open" | "half-open";

export interface CircuitBreakerOptions {
  failureThreshold?: number;
  coolDownMs?: number;
  /** Milliseconds; injected by tests. */
  now?: () => number;
}

export class CircuitBreaker {
  private consecutiveFailures = 0;
  private openedAt: number | null = null;
  private readonly failureThreshold: number;
  private readonly coolDownMs: number;
  private readonly now: () => number;

  constructor(options: CircuitBreakerOptions = {}) {
    this.failureThreshold = options.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
    this.coolDownMs = options.coolDownMs ?? DEFAULT_COOL_DOWN_MS;
    this.now = options.now ?? Date.now;
  }

  state(): CircuitState {
    if (this.openedAt === null) return "closed";
    return this.now() - this.openedAt >= this.coolDownMs ? "half-open" : "open";
  }

  /** Whether a model call may be attempted now. */
  allowsCall(): boolean {
    return this.state() !== "open";
  }

  recordSuccess(): void {
    this.consecutiveFailures = 0;
    this.openedAt = null;
  }

  recordFailure(): void {
    this.consecutiveFailures++;
    if (this.state() === "half-open" || this.consecutiveFailures >= this.failureThreshold) this.openedAt = this.now();
  }
}

/** Breakers by summarizer key, shared by every copy of the plugin in the process. */
function registry(): { breakers: Map<string, CircuitBreaker> } {
  return processShared("summarizer-circuits.v1", () => ({ breakers: new Map<string, CircuitBreaker>() }));
}

/** The process-wide breaker for one summarizer (keyed by e.g. "host-llm" or "anthropic:<model>"). */
export function sharedCircuitBreaker(key: string, options?: CircuitBreakerOptions): CircuitBreaker {
  const breakers = registry().breakers;
  let breaker = breakers.get(key);
  if (!breaker) {
    breaker = new CircuitBreaker(options);
    breakers.set(key, breaker);
  }
  return breaker;
}

/** Every shared breaker's key and state, for status and metrics. */
export function sharedCircuitStates(): { key: string; state: CircuitState }[] {
  return [...registry().breakers].map(([key, breaker]) => ({ key, state: breaker.state() }));
}

/** Forgets every shared breaker (tests, and a plugin reload that wants a clean slate). */
export function resetSharedCircuitBreakers(): void {
  registry().breakers.clear();
}
