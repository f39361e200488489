/**
 * planLeafPass: which raw messages the next leaf summary covers. Pure: it reads the context items and the
 * settings and returns a plan (or null); the caller does the model call and the write. The chunk is the oldest
 * contiguous run of raw units outside the fresh tail, grown unit by unit up to `chunkTokens` (a single unit
 * larger than that is taken alone, or it would block compaction forever).
 */
import type { CompactionItem } from "../store/compaction-store.js";
import { findFreshTail, previousSummaryBefore, toUnits } from "./context-units.js";

export interface LeafPlanOptions {
  freshTailCount: number;
  /** Fewest messages a chunk needs, unless it is full (the next unit would pass `chunkTokens`). */
  minFanout: number;
  chunkTokens: number;
  /** Chunks smaller than this are not worth a summary (the summary's own wrapper would not pay off). */
  minimumSourceTokens: number;
}

export interface LeafPlan {
  kind: "leaf";
  items: CompactionItem[];
  sourceTokens: number;
  /** The summary item just before the chunk, passed to the model as previous context. */
  previousSummaryRowId: number | null;
}

export function planLeafPass(items: readonly CompactionItem[], options: LeafPlanOptions): LeafPlan | null {
  const units = toUnits(items);
  const freshTail = findFreshTail(items, units, options.freshTailCount);
  let unitIndex = 0;
  while (unitIndex < units.length) {
    const first = units[unitIndex]!;
    if (first.start >= freshTail.startIndex) return null;
    if (!first.isRaw) {
      unitIndex++;
      continue;
    }
    // Grow a chunk over the raw run starting here.
    let tokens = 0;
    let end = unitIndex;
    let isFull = false;
    while (end < units.length) {
      const unit = units[end]!;
      if (!unit.isRaw || unit.start >= freshTail.startIndex) break;
      if (end > unitIndex && tokens + unit.tokens > options.chunkTokens) {
        isFull = true;
        break;
      }
      tokens += unit.tokens;
      end++;
    }
    const startItem = first.start;
    const endItem = units[end - 1]!.end;
    const messageCount = endItem - startItem;
    const isSingleOversized = end - unitIndex === 1 && tokens > options.chunkTokens;
    const isEligible =
      (messageCount >= options.minFanout || isFull || isSingleOversized) && tokens >= options.minimumSourceTokens;
    if (isEligible) {
      return {
        kind: "leaf",
        items: items.slice(startItem, endItem),
        sourceTokens: tokens,
        previousSummaryRowId: previousSummaryBefore(items, startItem)?.summaryRowId ?? null,
      };
    }
    unitIndex = end;
  }
  return null;
}

/** Raw-message tokens outside the fresh tail: the backlog that triggers the per-turn leaf pass. */
export function rawTokensOutsideFreshTail(items: readonly CompactionItem[], freshTailCount: number): number {
  const units = toUnits(items);
  const freshTail = findFreshTail(items, units, freshTailCount);
  let total = 0;
  for (const unit of units) {
    if (unit.start >= freshTail.startIndex) break;
    if (unit.isRaw) total += unit.tokens;
  }
  return total;
}

/** Tokens of the protected fresh tail. */
export function freshTailTokens(items: readonly CompactionItem[], freshTailCount: number): number {
  return findFreshTail(items, toUnits(items), freshTailCount).tokens;
}
