/**
 * Context units and the fresh tail, as the planners see them. A unit is one context item plus the tool results
 * that follow it, so a tool call and its results are never split by a compaction boundary. The fresh tail is
 * computed exactly as the assembler does (newest units first, raw units counted until `freshTailCount` raw
 * messages are covered), so compaction never touches what assembly always includes.
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

export function toUnits(items: readonly CompactionItem[]): ContextUnit[] {
  const units: ContextUnit[] = [];
  for (const [index, item] of items.entries()) {
    const current = units.at(-1);
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
  /** Index of the first item that belongs to the protected tail (items.length when there is none). */
  startIndex: number;
  /** Tokens of the fresh units (what assembly includes whatever the budget). */
  tokens: number;
}

export function findFreshTail(items: readonly CompactionItem[], units: readonly ContextUnit[], freshTailCount: number): FreshTail {
  let startIndex = items.length;
  let tokens = 0;
  let rawSeen = 0;
  for (let index = units.length - 1; index >= 0 && rawSeen < freshTailCount; index--) {
    const unit = units[index]!;
    if (!unit.isRaw) continue;
    startIndex = unit.start;
    tokens += unit.tokens;
    rawSeen += unit.end - unit.start;
  }
  return { startIndex, tokens };
}

/** The nearest summary item before `index`, if any: the previous context of a pass starting there. */
export function previousSummaryBefore(items: readonly CompactionItem[], index: number): CompactionItem | null {
  for (let cursor = index - 1; cursor >= 0; cursor--) {
    const item = items[cursor]!;
    if (item.summaryRowId !== null) return item;
  }
  return null;
}
