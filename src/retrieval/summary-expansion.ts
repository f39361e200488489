/**
 * expand: walks the summary DAG downwards from one summary, level by level, returning the summaries it was
 * condensed from and (for leaf summaries) the original messages, until `depth` levels or `tokenCap` tokens.
 * The last item that does not fit is cut, and `truncated` says so; summaries left unexpanded are listed so the
 * caller can continue with a narrower request.
 */
import type { TokenEstimator } from "../contracts.js";
import type { MessageId, SummaryId, SummaryRecord } from "../records.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import type { SummaryReadStore } from "../store/store.js";
import { isoTime } from "../search/iso-time.js";
import { fitToTokens } from "../tokens/text-within.js";

/** Source messages read per leaf summary at most (leaf chunks are far smaller in practice). */
const MAX_MESSAGES_PER_LEAF = 2_000;

export interface ExpandRequest {
  /** Levels below the summary to read (1 = its direct sources). */
  depth: number;
  /** Include the original messages under leaf summaries reached within `depth`. */
  includeMessages: boolean;
  tokenCap: number;
}

export type ExpandedItem =
  | {
      type: "summary";
      summaryId: SummaryId;
      kind: SummaryRecord["kind"];
      depth: number;
      earliestAt: string;
      latestAt: string;
      tokenCount: number;
      parentSummaryIds: SummaryId[];
      content: string;
    }
  | {
      type: "message";
      messageId: MessageId;
      /** The leaf summary this message is a source of. */
      summaryId: SummaryId;
      seq: number;
      role: string;
      createdAt: string;
      tokenCount: number;
      content: string;
    };

export interface ExpandResult {
  summaryId: SummaryId;
  conversationId: number;
  items: ExpandedItem[];
  /** Tokens of everything returned. */
  estimatedTokens: number;
  /** The token cap stopped the walk (the last item may be cut). */
  truncated: boolean;
  /** Summaries reached but not opened (depth or cap); expand them next for more detail. */
  unexpandedSummaryIds: SummaryId[];
}

type ExpansionStore = Pick<RetrievalStore, "summaryLineage" | "getMessageTexts"> & Pick<SummaryReadStore, "getSummariesByRowIds">;

export async function expandSummary(
  store: ExpansionStore,
  tokens: TokenEstimator,
  root: SummaryRecord,
  request: ExpandRequest,
): Promise<ExpandResult> {
  const items: ExpandedItem[] = [];
  const unexpanded: SummaryId[] = [];
  let used = 0;
  let truncated = false;
  /** Adds an item, cutting its content to what is left of the cap; false once the cap is reached. */
  const add = (item: ExpandedItem): boolean => {
    const left = request.tokenCap - used;
    if (left <= 0) {
      truncated = true;
      return false;
    }
    if (item.tokenCount > left) {
      const fitted = fitToTokens(item.content, left, tokens);
      truncated = true;
      if (fitted.text !== "") items.push({ ...item, content: fitted.text, tokenCount: fitted.tokenCount });
      used += fitted.tokenCount;
      return false;
    }
    items.push(item);
    used += item.tokenCount;
    return true;
  };

  let frontier: SummaryRecord[] = [root];
  for (let level = 1; level <= request.depth && frontier.length > 0 && !truncated; level++) {
    const next: SummaryRecord[] = [];
    for (const [index, summary] of frontier.entries()) {
      const lineage = await store.summaryLineage(summary.rowId, summary.conversationId, MAX_MESSAGES_PER_LEAF);
      if (summary.kind === "condensed") {
        for (const parent of await store.getSummariesByRowIds(lineage.parentRowIds)) {
          if (!add(summaryItem(parent))) break;
          next.push(parent);
        }
      } else if (request.includeMessages) {
        for (const message of await store.getMessageTexts(lineage.sourceMessageIds)) {
          const added = add({
            type: "message", messageId: message.messageId, summaryId: summary.summaryId, seq: message.seq,
            role: message.role, createdAt: isoTime(message.createdAt), tokenCount: message.tokenCount, content: message.content,
          });
          if (!added) break;
        }
      }
      if (truncated) {
        // This summary was read only in part, the rest of the level not at all.
        unexpanded.push(...frontier.slice(index).map((rest) => rest.summaryId));
        break;
      }
    }
    frontier = next;
  }
  unexpanded.push(...frontier.filter((summary) => summary.kind === "condensed" || request.includeMessages).map((summary) => summary.summaryId));
  return {
    summaryId: root.summaryId,
    conversationId: root.conversationId,
    items,
    estimatedTokens: used,
    truncated,
    unexpandedSummaryIds: [...new Set(unexpanded)],
  };
}

function summaryItem(summary: SummaryRecord): ExpandedItem {
  return {
    type: "summary",
    summaryId: summary.summaryId,
    kind: summary.kind,
    depth: summary.depth,
    earliestAt: isoTime(summary.earliestAt),
    latestAt: isoTime(summary.latestAt),
    tokenCount: summary.tokenCount,
    parentSummaryIds: summary.parentSummaryIds,
    content: summary.content,
  };
}
