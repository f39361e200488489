/**
 * The compaction store contract: what compaction reads to plan a pass, and the two writes that turn a planned
 * range of context items into one summary. Each apply is ONE transaction that first checks the range is still
 * exactly what was planned (a turn or another process may have changed it while the model was summarizing);
 * if not, it writes nothing and reports "stale". Messages and their parts are never deleted.
 */
import type { ContextItemRecord, ConversationId, MessageId, SummaryId, SummaryRecord } from "../records.js";

/** A context item as the planners see it: with the depth of the summary it points to (null for a message). */
export interface CompactionItem extends ContextItemRecord {
  depth: number | null;
}

/**
 * Everything a new summary row holds, computed from its sources before the write: the record without what the
 * store assigns (row id), what the pass knows already (conversation) and what the links hold (parents).
 */
export type SummaryDraft = Omit<SummaryRecord, "rowId" | "conversationId" | "parentSummaryIds">;

/** The exact context items a pass planned to replace, oldest first and contiguous in the context. */
export interface PlannedRange {
  conversationId: ConversationId;
  items: readonly Pick<ContextItemRecord, "ordinal" | "messageId" | "summaryRowId">[];
}

export type ApplyResult =
  | {
      kind: "applied";
      summaryRowId: number;
      /** Context tokens of the replaced items. */
      tokensRemoved: number;
      /** Context tokens of the new summary item. */
      tokensAdded: number;
    }
  | { kind: "stale"; reason: string };

/** Where a summary came from: the messages of a leaf, the summaries of a condensed summary, in order. */
export interface SummarySources {
  messageIds: MessageId[];
  parentRowIds: number[];
}

export interface CompactionStore {
  /** Every context item of the conversation, oldest first, with summary depths. */
  listCompactionItems(conversationId: ConversationId): Promise<CompactionItem[]>;
  /**
   * Inserts a leaf summary over the planned raw messages, links them (summary_messages), replaces the range
   * with one summary item costing `contextTokenCount`, and updates the conversation's counters. One transaction.
   */
  applyLeafSummary(range: PlannedRange, draft: SummaryDraft, contextTokenCount: number): Promise<ApplyResult>;
  /** The same for a condensed summary over the planned summaries (linked through summary_parents). */
  applyCondensedSummary(range: PlannedRange, draft: SummaryDraft, contextTokenCount: number): Promise<ApplyResult>;
  /** The direct sources of a summary (by internal row id); empty lists for an unknown id. */
  getSummarySources(summaryRowId: number): Promise<SummarySources>;
}
