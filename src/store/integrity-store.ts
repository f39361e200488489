/**
 * The queries the IntegrityChecker needs: each verifies one invariant over one conversation or table and returns
 * the offending rows (bounded), plus the non-destructive repairs. Async like every store contract.
 */
import type { ConversationId } from "../records.js";

/** The full-text indexes the checker verifies: of messages, of summaries, of the content stored aside. */
/** The full-text indexes: of messages, of summaries, of the chunks of stored files. */
export type SearchIndexName = "messages" | "summaries" | "files";

export interface SummaryMismatch {
  summaryId: string;
  what: string;
}

export interface ItemForPairing {
  ordinal: number;
  /** ItemFlags: 1 = assistant message with tool calls, 2 = tool result. */
  flags: number;
  /** For tool results: the id of the call they answer. */
  toolCallId: string | null;
  /** For assistant messages with tool calls: the call ids. */
  callIds: string[];
}

export interface IntegrityStore {
  conversationIds(afterId: number, limit: number): Promise<ConversationId[]>;
  summariesWithoutSource(conversationId: ConversationId): Promise<string[]>;
  danglingContextItems(conversationId: ConversationId): Promise<number[]>;
  contextOutOfOrder(conversationId: ConversationId, fromOrdinal?: number): Promise<{ ordinal: number; start: number; previousEnd: number }[]>;
  messageSeqStats(conversationId: ConversationId): Promise<{ count: number; minSeq: number | null; maxSeq: number | null }>;
  /** Messages not excluded from context, and how many are in context or under a leaf summary. */
  coverage(conversationId: ConversationId): Promise<{ visibleMessages: number; inContext: number; summarized: number }>;
  partSpansOutOfRange(conversationId: ConversationId): Promise<number[]>;
  summaryMetadataMismatches(conversationId: ConversationId): Promise<SummaryMismatch[]>;
  /** A description of the conversation counters that disagree with the rows, or null. */
  counterMismatch(conversationId: ConversationId): Promise<string | null>;
  itemsForPairing(conversationId: ConversationId, fromOrdinal: number): Promise<ItemForPairing[]>;
  /** The ordinal of the n-th newest context item (the start of a bounded window). */
  ordinalOfNthNewestItem(conversationId: ConversationId, n: number): Promise<number>;
  /**
   * The conversation's stored files. `keptInDatabase`: whether the database keeps the content too (PostgreSQL; absent
   * on SQLite, which keeps it only on disk): a file is missing when it is neither at its path nor kept there.
   */
  largeFiles(conversationId: ConversationId): Promise<{ fileId: string; storagePath: string; keptInDatabase?: boolean }[]>;
  /** Null when the full-text index agrees with its content table, else SQLite's message. */
  ftsIntegrity(index: SearchIndexName): Promise<string | null>;
  rebuildFts(index: SearchIndexName): Promise<void>;
  recountConversation(conversationId: ConversationId): Promise<void>;
  /**
   * Messages (`created_at`) and summaries (`earliest_at`, `latest_at`, `created_at`) whose times a JavaScript Date
   * cannot hold: found in SQL without reading the times, which node:sqlite cannot even return above 2^53.
   */
  timestampsOutOfRange(conversationId: ConversationId): Promise<{ messageIds: number[]; summaryIds: string[] }>;
  /**
   * Brings those times into range the way the codec reads a host timestamp (message-codec.ts timestampToMillis):
   * nanoseconds and microseconds divided down, else a neighbouring message's time (or 0). A host timestamp that
   * was stored only in `created_at` moves into the message's meta first, so nothing is lost. Summaries' times are
   * recomputed from their sources. One transaction; returns how many rows were rewritten.
   */
  repairTimestamps(conversationId: ConversationId): Promise<{ messages: number; summaries: number }>;
  /**
   * Stored JSON no reader can use (store/conversation-columns.ts): a conversation column of the wrong shape (bootstrap
   * cursor, last compaction, last reset), message meta that is not a JSON object, part meta or raw part data that is
   * not JSON, summary file ids that are not a JSON array. `subject` names the row, `what` the column.
   */
  unreadableValues(conversationId: ConversationId): Promise<{ subject: string; what: string }[]>;
  /**
   * Sets an unreadable bootstrap cursor or last compaction to NULL (bootstrap then reads the transcript from its start,
   * identity keys storing nothing twice; status shows no last compaction); returns the columns cleared.
   */
  clearUnreadableColumns(conversationId: ConversationId): Promise<string[]>;
}
