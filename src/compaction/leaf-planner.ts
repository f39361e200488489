/**
 * planLeafPass: which raw messages the next leaf summary covers. Pure: it reads the item list and the settings
 * and returns a plan (or null); the caller does the model call and the write. The chunk is the oldest contiguous
 * run of raw units outside the fresh tail, at or after item `from`, grown unit by unit up to `chunkTokens` (a
 * single unit larger than that is taken alone, or it would block compaction forever; a start smaller than
 * `minimumSourceTokens` takes the next unit with it even past `chunkTokens`, or it would stay raw for good).
 *
 * A sweep plans every pass from where the previous one ended (`from` = the last plan's `end`) over the same item
 * list, reading units off it as it goes (context-units.ts), so a sweep of a backlog of n items plans in O(n) in
 * total, and each plan reads only the items it skips and the chunk it returns.
 */
import type { CompactionItem } from "../store/compaction-store.js";
import { type FreshTail, unitAt } from "./context-units.js";

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
  /** Items [start, end) of the list the plan was made on: `end` is where the next plan starts. */
  start: number;
  end: number;
}

/**
 * The next leaf chunk at or after item `from` (a unit boundary), or null when none is eligible before the fresh
 * tail. `previousSummaryRowId` is the summary the caller knows to precede `from` (the last one it applied); a
 * summary unit met on the way replaces it.
 */
export function planLeafPass(
  items: readonly CompactionItem[],
  tail: FreshTail,
  from: number,
  options: LeafPlanOptions,
  previousSummaryRowId: number | null = null,
): LeafPlan | null {
  let previous = previousSummaryRowId;
  let start = from;
  while (start < tail.startIndex) {
    const first = unitAt(items, start);
    if (!first.isRaw) {
      previous = items[start]!.summaryRowId ?? previous;
      start = first.end;
      continue;
    }
    // Grow a chunk over the raw run starting here.
    let tokens = first.tokens;
    let end = first.end;
    let units = 1;
    let isFull = false;
    while (end < tail.startIndex) {
      const unit = unitAt(items, end);
      if (!unit.isRaw) break;
      if (tokens + unit.tokens > options.chunkTokens) {
        isFull = true;
        // A start too small for a summary of its own rides with the unit that does not fit: a turn's short closing
        // reply before a large message was otherwise left raw between two summaries for good, and such leftovers
        // kept the summaries around them from being condensed (issue 23: at 16k, /compact found nothing to do).
        if (tokens < options.minimumSourceTokens) {
          tokens += unit.tokens;
          end = unit.end;
          units++;
        }
        break;
      }
      tokens += unit.tokens;
      end = unit.end;
      units++;
    }
    const isSingleOversized = units === 1 && tokens > options.chunkTokens;
    const isEligible =
      (end - start >= options.minFanout || isFull || isSingleOversized) && tokens >= options.minimumSourceTokens;
    if (isEligible) {
      return { kind: "leaf", items: items.slice(start, end), sourceTokens: tokens, previousSummaryRowId: previous, start, end };
    }
    start = end;
  }
  return null;
}
