/**
 * The spend guard: at most `maxCalls` summarizer model calls per conversation within a sliding window. A
 * misconfigured threshold (compacting every turn) or a runaway import must not become a bill. Past the cap,
 * compaction does not stop (that would let the context outgrow the budget): it writes deterministic summaries
 * without a model until calls leave the window (summarization-service.ts). Counts are kept per process on
 * globalThis, like the circuit breakers: every copy of the plugin module in the gateway counts into one guard.
 */
import { processShared } from "../runtime/process-shared.js";

export interface SpendLimits {
  /** Most model calls of one conversation within the window. */
  maxCalls: number;
  windowMs: number;
}

export interface SpendUsage {
  /** Model calls of the conversation within the window, now. */
  calls: number;
  maxCalls: number;
  windowMs: number;
  /** Whether the next call would be refused. */
  capped: boolean;
  /** When the oldest counted call leaves the window (null when none is counted). */
  freesAt: number | null;
  /** Calls refused (diverted to the deterministic summarizer) within the window. */
  diverted: number;
}

export interface SpendOverview {
  /** Conversations with at least one call in the window. */
  conversations: number;
  /** Conversations at the cap now. */
  capped: number;
  /** The most calls any one conversation made within the window. */
  maxCallsInWindow: number;
}

export class SpendGuard {
  private readonly calls = new Map<string, number[]>();
  private readonly diversions = new Map<string, number[]>();

  /** Counts a call and returns true, or returns false (and counts a diversion) when the conversation is at the cap. */
  tryAcquire(key: string, limits: SpendLimits, now: number): boolean {
    if (this.inWindow(this.calls, key, limits, now).length >= limits.maxCalls) {
      this.record(this.diversions, key, now, limits);
      return false;
    }
    this.record(this.calls, key, now, limits);
    return true;
  }

  usage(key: string, limits: SpendLimits, now: number): SpendUsage {
    const calls = this.inWindow(this.calls, key, limits, now);
    return {
      calls: calls.length,
      maxCalls: limits.maxCalls,
      windowMs: limits.windowMs,
      capped: calls.length >= limits.maxCalls,
      freesAt: calls.length > 0 ? calls[0]! + limits.windowMs : null,
      diverted: this.inWindow(this.diversions, key, limits, now).length,
    };
  }

  overview(limits: SpendLimits, now: number): SpendOverview {
    let conversations = 0;
    let capped = 0;
    let maxCallsInWindow = 0;
    for (const key of [...this.calls.keys()]) {
      const count = this.inWindow(this.calls, key, limits, now).length;
      if (count === 0) continue;
      conversations++;
      if (count >= limits.maxCalls) capped++;
      maxCallsInWindow = Math.max(maxCallsInWindow, count);
    }
    return { conversations, capped, maxCallsInWindow };
  }

  private record(map: Map<string, number[]>, key: string, now: number, limits: SpendLimits): void {
    const list = this.inWindow(map, key, limits, now);
    list.push(now);
    map.set(key, list);
  }

  /** The times of `key` still inside the window, oldest first; older ones are dropped and an emptied entry removed. */
  private inWindow(map: Map<string, number[]>, key: string, limits: SpendLimits, now: number): number[] {
    const list = map.get(key);
    if (!list) return [];
    let expired = 0;
    while (expired < list.length && list[expired]! <= now - limits.windowMs) expired++;
    if (expired > 0) list.splice(0, expired);
    if (list.length === 0) map.delete(key);
    return list;
  }
}

/** The process-wide guard shared by every copy of the plugin module. */
export function sharedSpendGuard(): SpendGuard {
  return processShared("spend-guard.v1", () => new SpendGuard());
}

/** The guard's key of one conversation: the database file and the conversation id (one process may open several files). */
export function spendKey(databasePath: string, conversationId: number): string {
  return `${databasePath}#${conversationId}`;
}

export function spendLimitsOf(config: { maxSummaryCallsPerWindow: number; summaryCallWindowMinutes: number }): SpendLimits {
  return { maxCalls: config.maxSummaryCallsPerWindow, windowMs: config.summaryCallWindowMinutes * 60_000 };
}
