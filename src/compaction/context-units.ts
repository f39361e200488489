/**
 * Context units and the fresh tail, as the planners see them. A unit is one context item plus the tool results
 * that follow it, so a tool call and its results are never split by a compaction boundary. The fresh tail is the
 * newest run of raw units that fits both limits of the tail policy: at most `count` raw messages and at most
 * `maxTokens` tokens. It is a preference, not an absolute: what does not fit it is compactable like any other raw
 * message, so the tail can never hold more than its share of the budget (spec 011).
 */
import { ItemFlags } from "../messages/message-codec.js";
import type { CompactionItem } from "../store/compaction-store.js";

export interface ContextUnit {
  /** Index of the unit's first item in the item list. */
  start: number;
  /** Index one past the unit's last item. */
  end: number;
  tokens: number;
  /** True when every item of the unit is a raw message. */
  isRaw: boolean;
}

/** How much of the newest raw context compaction leaves alone. */
export interface TailPolicy {
  /** Most raw messages in the tail (`freshTailCount`). */
  count: number;
  /** Most tokens in the tail (`freshTailBudgetShare` x the budget). */
  maxTokens: number;
}

export function toUnits(items: readonly CompactionItem[]): ContextUnit[] {
  const units: ContextUnit[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    const current = units.length > 0 ? units[units.length - 1] : undefined;
    const joinsPrevious = current !== undefined && (item.flags & ItemFlags.toolResult) !== 0;
    if (joinsPrevious) {
      current.end = index + 1;
      current.tokens += item.tokenCount;
      current.isRaw &&= item.messageId !== null;
    } else {
      units.push({ start: index, end: index + 1, tokens: item.tokenCount, isRaw: item.messageId !== null });
    }
  }
  return units;
}

export interface FreshTail {
  /** Index of the first unit of the tail (units.length when there is none). */
  startUnit: number;
  /** Index of the first item of the tail (items.length when there is none). */
  startIndex: number;
  /** Tokens of the tail's units. */
  tokens: number;
}

/**
 * The newest contiguous raw units within both limits of the policy. Walks from the newest unit and stops at the
 * first unit that is not raw, comes after `count` messages are covered (a tool call whose results reach into the
 * tail is taken whole), or would pass `maxTokens`.
 */
export function findFreshTail(units: readonly ContextUnit[], itemCount: number, policy: TailPolicy): FreshTail {
  let startUnit = units.length;
  let startIndex = itemCount;
  let tokens = 0;
  let messages = 0;
  for (let index = units.length - 1; index >= 0; index--) {
    const unit = units[index]!;
    const unitMessages = unit.end - unit.start;
    if (!unit.isRaw || messages >= policy.count || tokens + unit.tokens > policy.maxTokens) break;
    startUnit = index;
    startIndex = unit.start;
    tokens += unit.tokens;
    messages += unitMessages;
  }
  return { startUnit, startIndex, tokens };
}

/** Raw-message tokens outside the fresh tail: the backlog that triggers the per-turn leaf pass. */
export function rawTokensOutsideTail(units: readonly ContextUnit[], tail: FreshTail): number {
  let total = 0;
  for (let index = 0; index < tail.startUnit; index++) {
    const unit = units[index]!;
    if (unit.isRaw) total += unit.tokens;
  }
  return total;
}
