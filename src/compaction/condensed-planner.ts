/**
 * planCondensedPass: which summaries the next condensed summary merges. Pure. It looks for the shallowest depth
 * that has a run of at least `minFanout` contiguous context items that are all summaries of that depth (outside
 * the fresh tail), takes the oldest such run, and caps it at `chunkTokens` (never below `minFanout` items).
 * The result is one summary at depth + 1 that replaces the run.
 */
import type { CompactionItem } from "../store/compaction-store.js";
import { findFreshTail, previousSummaryBefore, toUnits } from "./context-units.js";

export interface CondensedPlanOptions {
  freshTailCount: number;
  minFanout: number;
  chunkTokens: number;
  /** Deepest source depth allowed (incremental passes stop below `incrementalMaxDepth`). */
  maxSourceDepth: number;
  minimumSourceTokens: number;
}

export interface CondensedPlan {
  kind: "condensed";
  /** Depth of the summaries being merged; the new summary has depth + 1. */
  sourceDepth: number;
  items: CompactionItem[];
  sourceTokens: number;
  previousSummaryRowId: number | null;
}

interface Run {
  depth: number;
  start: number;
  end: number;
}

export function planCondensedPass(items: readonly CompactionItem[], options: CondensedPlanOptions): CondensedPlan | null {
  const freshTail = findFreshTail(items, toUnits(items), options.freshTailCount);
  const runs = summaryRuns(items, freshTail.startIndex).filter(
    (run) => run.depth <= options.maxSourceDepth && run.end - run.start >= options.minFanout,
  );
  const depths = [...new Set(runs.map((run) => run.depth))].sort((left, right) => left - right);
  for (const depth of depths) {
    for (const run of runs) {
      if (run.depth !== depth) continue;
      const chunk = capRun(items, run, options);
      const sourceTokens = chunk.reduce((total, item) => total + item.tokenCount, 0);
      if (sourceTokens < options.minimumSourceTokens) continue;
      return {
        kind: "condensed",
        sourceDepth: depth,
        items: chunk,
        sourceTokens,
        previousSummaryRowId: previousSummaryBefore(items, run.start)?.summaryRowId ?? null,
      };
    }
  }
  return null;
}

/** Maximal runs of contiguous same-depth summary items before `limit`, oldest first. */
function summaryRuns(items: readonly CompactionItem[], limit: number): Run[] {
  const runs: Run[] = [];
  let current: Run | null = null;
  for (let index = 0; index < limit; index++) {
    const item = items[index]!;
    const depth = item.summaryRowId !== null ? item.depth : null;
    if (depth === null) {
      current = null;
      continue;
    }
    if (current && current.depth === depth && current.end === index) {
      current.end = index + 1;
    } else {
      current = { depth, start: index, end: index + 1 };
      runs.push(current);
    }
  }
  return runs;
}

function capRun(items: readonly CompactionItem[], run: Run, options: CondensedPlanOptions): CompactionItem[] {
  const chunk: CompactionItem[] = [];
  let tokens = 0;
  for (let index = run.start; index < run.end; index++) {
    const item = items[index]!;
    if (chunk.length >= options.minFanout && tokens + item.tokenCount > options.chunkTokens) break;
    chunk.push(item);
    tokens += item.tokenCount;
  }
  return chunk;
}
