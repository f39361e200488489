/**
 * The repair store contract (spec 027): the writes behind `lcm repair` and the inspector's repairs, each ONE
 * transaction that first records what it replaces (an undo record in `summary_repairs`), re-checks that the rows
 * are still what the repair was planned on (a turn or a compaction may have changed them meanwhile) and writes
 * nothing ("stale") if not. Undo restores the recorded rows exactly, and refuses when they changed since.
 */
import type { ConversationId, SummaryKind, SummaryLevel } from "../records.js";

export type RepairKind = "resummarize" | "rewrite" | "dissolve";

/** A summary as a repair sees it: its row and where the context shows it. */
export interface RepairTarget {
  rowId: number;
  summaryId: string;
  conversationId: ConversationId;
  kind: SummaryKind;
  depth: number;
  content: string;
  tokenCount: number;
  level: SummaryLevel;
  writtenBy: string | null;
  /** Context items showing it (one when the model sees it, none once it was condensed into another). */
  contextOrdinals: number[];
  /** What one context item of it costs (null when none shows it). */
  contextTokenCount: number | null;
}

/** A new text for a summary, measured by the caller. */
export interface TextRepairPlan {
  kind: "resummarize" | "rewrite";
  target: RepairTarget;
  content: string;
  tokenCount: number;
  /** What a context item of the summary costs with the new text. */
  contextTokenCount: number;
  level: SummaryLevel;
  writtenBy: string;
  /** JSON-able facts for the record: the summarizer, the reason. */
  detail: Record<string, unknown>;
  now: number;
}

/** A condensed summary in the context replaced by its parents, each costing what the caller measured. */
export interface DissolvePlan {
  target: RepairTarget;
  parents: { rowId: number; summaryId: string; contextTokenCount: number }[];
  detail: Record<string, unknown>;
  now: number;
}

export type RepairWrite = { kind: "applied"; repairId: number } | { kind: "stale"; reason: string };

export type UndoResult =
  | { kind: "undone"; repair: RepairRecord }
  | { kind: "refused"; reason: string };

export interface RepairRecord {
  repairId: number;
  conversationId: ConversationId;
  summaryId: string;
  kind: RepairKind;
  createdAt: number;
  undoneAt: number | null;
  detail: Record<string, unknown>;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

/** A fallback summary waiting for a model to redo it. */
export interface FallbackSummary {
  summaryId: string;
  conversationId: ConversationId;
  depth: number;
}

export interface RepairStore {
  /** The summary with this id, or null. */
  repairTarget(summaryId: string): Promise<RepairTarget | null>;
  /** Replaces the summary's text (and its context cost), recording the undo first. One transaction. */
  applyText(plan: TextRepairPlan): Promise<RepairWrite>;
  /** Replaces the summary's context item by its parents' items, recording the undo first. One transaction. */
  applyDissolve(plan: DissolvePlan): Promise<RepairWrite>;
  /** Restores what a repair replaced. One transaction. */
  undo(repairId: number, now: number): Promise<UndoResult>;
  getRepair(repairId: number): Promise<RepairRecord | null>;
  /** Repairs, newest first; of one conversation when given. */
  listRepairs(filter: { conversationId?: ConversationId; limit: number }): Promise<RepairRecord[]>;
  /** Who wrote each summary's current text (written_by), by summary id, for the summaries that say. */
  summaryWriters(conversationId: ConversationId): Promise<Map<string, string>>;
  /** Fallback summaries, oldest first (of one conversation when given), at most `limit`. */
  fallbackSummaries(filter: { conversationId?: ConversationId; limit: number }): Promise<FallbackSummary[]>;
}
