/**
 * The status store contract: the aggregate reads behind `/lcm status`. Each is bounded by one conversation's
 * summaries or by the number of conversations, never by the number of stored messages.
 */
import type { ConversationId } from "../records.js";

export interface SummaryDepthStats {
  depth: number;
  count: number;
  tokens: number;
  /** Summaries produced by the deterministic fallback (truncation) when the model failed (redone by maintain and `lcm repair fallbacks`). */
  fallbackCount: number;
}

export interface DatabaseTotals {
  conversations: number;
  messages: number;
  messageTokens: number;
  /** Messages stored but not yet in the full-text index (it is written in batches; a search catches it up). */
  awaitingIndex: number;
  /** Conversations archived by /reset (kept and searchable; another conversation continues their session). */
  archivedConversations?: number;
  /** Conversations whose host session was deleted or is gone (kept and searchable). */
  endedConversations?: number;
  /**
   * Of `messages`, those whose text retention moved to its archives: a stub row remains (identity, seq, role, time,
   * tokens) and the text is in a gzip JSONL archive (schema 10).
   */
  archivedMessages?: number;
}

export interface StatusStore {
  /** Summaries of a conversation grouped by depth, shallowest first. */
  summaryStats(conversationId: ConversationId): Promise<SummaryDepthStats[]>;
  databaseTotals(): Promise<DatabaseTotals>;
  /** Messages of a conversation whose text retention moved to its archives (their rows are stubs). */
  archivedMessageCount(conversationId: ConversationId): Promise<number>;
}
