/**
 * Context units and the fresh tail, as the planners see them. A unit is one context item plus the tool results
 * that follow it, so a tool call and its results are never split by a compaction boundary. The fresh tail is the
 * newest run of raw units that fits both limits of the tail policy: at most `count` raw messages and at most
 * `maxTokens` tokens. It is a preference, not an absolute: what does not fit it is compactable like any other raw
 * message, so the tail can never hold more than its share of the budget (spec 011).
 *
 * Units are read straight off the item list, never materialized: a raw backlog of a million items made a unit
 * list of a million objects in one synchronous stretch (85-265 ms, twice per sweep). The planner walks units
 * forward from where it stands (`unitAt`); the tail is found walking backward from the newest item, so it costs
 * what the tail holds, not what the context holds.
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

function isToolResult(item: CompactionItem): boolean {
  return (item.flags & ItemFlags.toolResult) !== 0;
}

/**
 * The unit that starts at item `start`: the item and the tool results that follow it. A tool result at `start`
 * (an orphan, or the first item of the list) opens its own unit, as it would walking from the first item.
 */
export function unitAt(items: readonly CompactionItem[], start: number): ContextUnit {
  const first = items[start]!;
  let tokens = first.tokenCount;
  let isRaw = first.messageId !== null;
  let end = start + 1;
  while (end < items.length && isToolResult(items[end]!)) {
    const item = items[end]!;
    tokens += item.tokenCount;
    isRaw &&= item.messageId !== null;
    end++;
  }
  return { start, end, tokens, isRaw };
}

/** The unit that ends just before item `end` (walking backward: back over tool results to the item they follow). */
function unitBefore(items: readonly CompactionItem[], end: number): ContextUnit {
  let start = end - 1;
  while (start > 0 && isToolResult(items[start]!)) start--;
  let tokens = 0;
  let isRaw = true;
  for (let index = start; index < end; index++) {
    const item = items[index]!;
    tokens += item.tokenCount;
    isRaw &&= item.messageId !== null;
  }
  return { start, end, tokens, isRaw };
}

export interface FreshTail {
  /** Index of the first item of the tail (items.length when there is none). */
  startIndex: number;
  /** Tokens of the tail's units. */
  tokens: number;
}

/**
 * The newest contiguous raw units within both limits of the policy. Walks from the newest unit and stops at the
 * first unit that is not raw, comes after `count` messages are covered (a tool call whose results reach into the
 * tail is taken whole), or would pass `maxTokens`. Reads only the tail and the unit before it.
 */
export function findFreshTail(items: readonly CompactionItem[], policy: TailPolicy): FreshTail {
  let startIndex = items.length;
  let tokens = 0;
  let messages = 0;
  while (startIndex > 0 && messages < policy.count) {
    const unit = unitBefore(items, startIndex);
    if (!unit.isRaw || tokens + unit.tokens > policy.maxTokens) break;
    startIndex = unit.start;
    tokens += unit.tokens;
    messages += unit.end - unit.start;
  }
  return { startIndex, tokens };
}

/** Raw-message tokens outside the fresh tail: the backlog that triggers the per-turn leaf pass. One pass, no allocation. */
export function rawTokensOutsideTail(items: readonly CompactionItem[], tail: FreshTail): number {
  let total = 0;
  let unitTokens = 0;
  let isUnitRaw = false;
  for (let index = 0; index < tail.startIndex; index++) {
    const item = items[index]!;
    if (index === 0 || !isToolResult(item)) {
      if (isUnitRaw) total += unitTokens;
      unitTokens = 0;
      isUnitRaw = true;
    }
    unitTokens += item.tokenCount;
    isUnitRaw &&= item.messageId !== null;
  }
  return isUnitRaw ? total + unitTokens : total;
}
