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
  | { kind: "stale"; reason: string }
  /** The run's compaction lease was taken over by another holder (it had expired): nothing written, the run must end. */
  | { kind: "superseded"; reason: string };

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
  /**
   * Per-conversation compaction leases, where several gateways share the database (PostgreSQL). Absent on SQLite:
   * one file has one gateway, and its applies' range check is all that two writers need.
   */
  readonly leases?: CompactionLeases;
}

/** A run's hold on a conversation's compaction: the fencing token its applies must still find to write. */
export interface CompactionLease {
  conversationId: ConversationId;
  /** Unique across the database and increasing: a lease taken over gets a new one. */
  fence: number;
}

/**
 * The work of a compaction run spans many transactions with model calls between them; the lease keeps two gateways
 * from summarizing the same conversation at once (each call costs money and one of the two would be thrown away).
 * Nobody waits for a lease: a run that cannot take it does not start. A lease ends when its run releases it or, when
 * its holder died, at its expiry (by the database's clock); a run whose lease was taken over meanwhile writes
 * nothing more (its applies are fenced by the token).
 */
export interface CompactionLeases {
  /**
   * Takes the conversation's lease for `holder` for `ttlMs`, or answers null when another run holds it (a live
   * lease, or the conversation's lock held by a compaction or retention writing right now). Never waits.
   */
  take(conversationId: ConversationId, holder: string, ttlMs: number): Promise<CompactionLease | null>;
  /** Ends the lease; nothing when it was taken over already. */
  release(lease: CompactionLease): Promise<void>;
  /** This store with applies that write only while `lease` is still the conversation's lease ("superseded" otherwise). */
  fencedBy(lease: CompactionLease): CompactionStore;
}
