/**
 * planLeafPass: which raw messages the next leaf summary covers. Pure: it reads the context units and the settings
 * and returns a plan (or null); the caller does the model call and the write. The chunk is the oldest contiguous
 * run of raw units outside the fresh tail, at or after `fromUnit`, grown unit by unit up to `chunkTokens` (a single
 * unit larger than that is taken alone, or it would block compaction forever).
 *
 * A sweep plans every pass from where the previous one ended (`fromUnit` = the last plan's `endUnit`), over units
 * computed once per sweep, so a sweep of a backlog of n items plans in O(n) in total, not O(n) per pass.
 */
import type { CompactionItem } from "../store/compaction-store.js";
import type { ContextUnit, FreshTail } from "./context-units.js";

export interface LeafPlanOptions {
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
  /** Units [startUnit, endUnit) of the sweep's unit list: where the next plan starts. */
  startUnit: number;
  endUnit: number;
}

/**
 * The next leaf chunk at or after `fromUnit`, or null when none is eligible before the fresh tail.
 * `previousSummaryRowId` is the summary the caller knows to precede `fromUnit` (the last one it applied); a
 * summary unit met on the way replaces it.
 */
export function planLeafPass(
  items: readonly CompactionItem[],
  units: readonly ContextUnit[],
  tail: FreshTail,
  fromUnit: number,
  options: LeafPlanOptions,
  previousSummaryRowId: number | null = null,
): LeafPlan | null {
  let previous = previousSummaryRowId;
  let unitIndex = fromUnit;
  while (unitIndex < tail.startUnit) {
    const first = units[unitIndex]!;
    if (!first.isRaw) {
      previous = summaryRowIdOf(items, first) ?? previous;
      unitIndex++;
      continue;
    }
    // Grow a chunk over the raw run starting here.
    let tokens = 0;
    let end = unitIndex;
    let isFull = false;
    while (end < tail.startUnit) {
      const unit = units[end]!;
      if (!unit.isRaw) break;
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
        previousSummaryRowId: previous,
        startUnit: unitIndex,
        endUnit: end,
      };
    }
    unitIndex = end;
  }
  return null;
}

/** The summary a unit stands for, if it is a summary item. */
function summaryRowIdOf(items: readonly CompactionItem[], unit: ContextUnit): number | null {
  return items[unit.start]!.summaryRowId;
}
