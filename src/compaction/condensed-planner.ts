/**
 * planCondensedPasses: which summaries the condensed passes of one depth merge. Pure. At one depth it finds the
 * maximal runs of contiguous summaries of that depth (before the fresh tail) and cuts each run, oldest first, into
 * chunks of at least `minFanout` summaries, capped at `chunkTokens` (never below `minFanout` items). Each chunk
 * becomes one summary at depth + 1 that replaces it.
 *
 * The engine condenses depth by depth, shallowest first: merging depth d only creates depth d + 1 summaries, so
 * no depth needs a second look, and a whole condensation costs O(items x depths) instead of O(items) per pass.
 */
import type { CompactionItem } from "../store/compaction-store.js";

export interface CondensedPlanOptions {
  minFanout: number;
  chunkTokens: number;
  minimumSourceTokens: number;
}

export interface CondensedPlan {
  kind: "condensed";
  /** Depth of the summaries being merged; the new summary has depth + 1. */
  sourceDepth: number;
  items: CompactionItem[];
  sourceTokens: number;
  /** The summary item just before the chunk in the list the plan was made on. */
  previousSummaryRowId: number | null;
  /** Items [start, end) of the list the plan was made on. */
  start: number;
  end: number;
}

/** Every chunk of `depth` summaries worth merging, oldest first, in items before `limit` (the fresh tail). */
export function planCondensedPasses(
  items: readonly CompactionItem[],
  limit: number,
  depth: number,
  options: CondensedPlanOptions,
): CondensedPlan[] {
  const plans: CondensedPlan[] = [];
  let previous: number | null = null;
  let index = 0;
  while (index < limit) {
    const item = items[index]!;
    if (item.summaryRowId === null || item.depth !== depth) {
      if (item.summaryRowId !== null) previous = item.summaryRowId;
      index++;
      continue;
    }
    let runEnd = index;
    while (runEnd < limit && items[runEnd]!.summaryRowId !== null && items[runEnd]!.depth === depth) runEnd++;
    // Cut the run [index, runEnd) into chunks of at least minFanout, each capped at chunkTokens.
    let start = index;
    while (runEnd - start >= options.minFanout) {
      let end = start;
      let tokens = 0;
      while (end < runEnd) {
        const next = items[end]!.tokenCount;
        if (end - start >= options.minFanout && tokens + next > options.chunkTokens) break;
        tokens += next;
        end++;
      }
      if (tokens >= options.minimumSourceTokens) {
        plans.push({
          kind: "condensed", sourceDepth: depth, items: items.slice(start, end), sourceTokens: tokens,
          previousSummaryRowId: previous, start, end,
        });
      }
      previous = items[end - 1]!.summaryRowId;
      start = end;
    }
    previous = items[runEnd - 1]!.summaryRowId;
    index = runEnd;
  }
  return plans;
}

/** The distinct summary depths in items before `limit`, shallowest first. */
export function summaryDepths(items: readonly CompactionItem[], limit: number): number[] {
  const depths = new Set<number>();
  for (let index = 0; index < limit; index++) {
    const item = items[index]!;
    if (item.summaryRowId !== null && item.depth !== null) depths.add(item.depth);
  }
  return [...depths].sort((left, right) => left - right);
}
