/**
 * What the IntegrityChecker reports: findings (a broken invariant, with the rows involved) and the repairs it
 * plans for them. Repairs are split by whether applying them could lose information: non-destructive ones
 * (recounting conversation counters, rebuilding a full-text index, bringing stored times back into the range a
 * Date can hold with the original value kept in meta, clearing an unreadable bootstrap cursor or last compaction,
 * which the engine rebuilds) may be applied;
 * destructive ones are only described, for an operator to decide.
 */
import type { SearchIndexName } from "../store/integrity-store.js";
import type { ConversationId } from "../records.js";

export type FindingKind =
  | "summary_without_source"
  | "dangling_context_item"
  | "context_out_of_order"
  | "message_seq_gap"
  | "message_not_covered"
  | "part_span_out_of_range"
  | "summary_metadata_mismatch"
  | "counter_mismatch"
  | "fts_out_of_sync"
  | "large_file_missing"
  | "orphan_tool_result"
  | "unanswered_tool_call"
  | "timestamp_out_of_range"
  | "unreadable_value";

export interface Finding {
  kind: FindingKind;
  conversationId: ConversationId | null;
  /** The row the finding is about: a summary id, message id, ordinal or file id. */
  subject: string;
  detail: string;
}

export type RepairAction =
  | { kind: "recount_conversation"; conversationId: ConversationId }
  | { kind: "rebuild_fts"; table: SearchIndexName }
  | { kind: "normalize_timestamps"; conversationId: ConversationId }
  | { kind: "clear_unreadable_columns"; conversationId: ConversationId }
  | { kind: "manual"; finding: Finding; advice: string };

export interface RepairPlan {
  /** Safe to apply: they only recompute what can be derived from the stored rows. */
  nonDestructive: RepairAction[];
  /** Described, never applied automatically. */
  destructive: RepairAction[];
}

export interface IntegrityReport {
  conversationsChecked: number;
  /** How many invariant checks ran (a check is one invariant over one conversation or table). */
  checksRun: number;
  findings: Finding[];
  durationMs: number;
  /** False when a bounded run stopped before covering everything it was asked to. */
  complete: boolean;
}
