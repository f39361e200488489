/**
 * The retrieval store contract: the reads behind lcm_grep, lcm_describe and lcm_expand. Every search method
 * takes an already-authorized list of conversations (access control happens before the store is asked) and is
 * bounded: full-text reads stop at LIMIT, regex candidates come in pages or windows whose work is capped, so no
 * single call costs time proportional to the whole history.
 */
import type { ConversationId, ConversationRecord, MessageId, SummaryId, SummaryKind } from "../records.js";

export type SearchSort = "recency" | "relevance";

export interface SearchFilter {
  /** The conversations searched: always a concrete, authorized list. */
  conversationIds: ConversationId[];
  /** Inclusive lower time bound (ms since epoch) or null. Summaries match when their time range overlaps. */
  since: number | null;
  /** Exclusive upper time bound (ms since epoch) or null. */
  before: number | null;
}

export interface FullTextQuery extends SearchFilter {
  /** A sanitized FTS5 MATCH expression (retrieval/fts-query.ts), never raw user text. */
  match: string;
  sort: SearchSort;
  limit: number;
  /** Messages only: restrict to one seq range (used to search below one summary). */
  seqRange?: { from: number; to: number };
}

export interface MessageHitRow {
  messageId: MessageId;
  conversationId: ConversationId;
  seq: number;
  role: string;
  createdAt: number;
  /** A highlighted snippet (full-text search) or the whole content (regex candidates). */
  text: string;
  /** bm25 score for full-text hits (lower is better); 0 otherwise. */
  rank: number;
}

export interface SummaryHitRow {
  rowId: number;
  summaryId: SummaryId;
  conversationId: ConversationId;
  kind: SummaryKind;
  depth: number;
  earliestAt: number;
  latestAt: number;
  createdAt: number;
  text: string;
  rank: number;
}

/** A page of regex candidates: the rows in scope, and where the next page starts (null when exhausted). */
export interface CandidatePage<Row> {
  rows: Row[];
  /** Exclusive upper bound of the next page (an FTS rowid), or null when every candidate was examined. */
  next: number | null;
  /** Time of the oldest row examined, when known; lets a stopped search say how far back it got. */
  oldestExamined: number | null;
}

/** A window of history rows, [from, to): by seq inside one conversation, or by row id across the table. */
export type ScanWindow =
  | { by: "seq"; conversationId: ConversationId; from: number; to: number }
  | { by: "rowid"; from: number; to: number };

/** A summary's place in the context and its lineage, for lcm_describe. */
export interface SummaryLineage {
  /** Summaries that condensed this one (normally zero or one). */
  childSummaryIds: SummaryId[];
  /** Leaf summaries: the source message ids in order (at most the requested limit). */
  sourceMessageIds: MessageId[];
  /** Condensed summaries: the internal row ids of the summaries it condensed, in order. */
  parentRowIds: number[];
  inContext: boolean;
}

export interface MessageText {
  messageId: MessageId;
  conversationId: ConversationId;
  seq: number;
  role: string;
  createdAt: number;
  content: string;
  tokenCount: number;
}


export interface RetrievalStore {
  searchMessages(query: FullTextQuery): Promise<MessageHitRow[]>;
  searchSummaries(query: FullTextQuery): Promise<SummaryHitRow[]>;
  /** Regex candidates from the full-text index, newest first; examines at most `pageSize` index entries. */
  messageCandidates(filter: SearchFilter, match: string, below: number | null, pageSize: number): Promise<CandidatePage<MessageHitRow>>;
  summaryCandidates(filter: SearchFilter, match: string, below: number | null, pageSize: number): Promise<CandidatePage<SummaryHitRow>>;
  /**
   * For each fragment (lowercase ASCII letters and digits, with a letter), the message index's terms that end
   * with it, from the term dictionary, after catching the index up; a fragment maps to null when more than
   * `limit` terms end with it. Null when the dictionary does not cover every message yet.
   */
  messageTermsEndingWith(fragments: readonly string[], limit: number): Promise<Map<string, string[] | null> | null>;
  /**
   * Rows of one window, newest first, with full content; when `containsAny` is given, only rows containing one
   * of those substrings (ASCII case-insensitive, like SQL LIKE), and every row whose text holds a NUL character
   * (SQLite's LIKE stops at one; the regex decides). Examines at most the window's width.
   */
  scanMessages(filter: SearchFilter, window: ScanWindow, containsAny: string[] | null): Promise<MessageHitRow[]>;
  scanSummaries(filter: SearchFilter, window: { from: number; to: number }, containsAny: string[] | null): Promise<SummaryHitRow[]>;
  /** The highest message seq of a conversation (0 when empty). */
  maxMessageSeq(conversationId: ConversationId): Promise<number>;
  /** The highest message / summary row id in the database (0 when empty). */
  maxMessageRowId(): Promise<number>;
  maxSummaryRowId(): Promise<number>;
  /**
   * For each message seq of a conversation: the summary that now stands for it in the context (the root above the
   * leaf whose seq range holds it), or null while the message is still raw context.
   */
  coveringSummaryIds(conversationId: ConversationId, seqs: number[]): Promise<Map<number, SummaryId | null>>;
  summaryLineage(summaryRowId: number, conversationId: ConversationId, messageLimit: number): Promise<SummaryLineage>;
  /** Plain-text messages in the order of `messageIds`; unknown ids are skipped. */
  getMessageTexts(messageIds: MessageId[]): Promise<MessageText[]>;
  /** Conversations recall may read for an agent (null: every agent), excluding delegated-expansion sessions. */
  listRecallConversationIds(agentId: string | null): Promise<ConversationId[]>;
  /** The most recently active conversation with this session key. */
  findConversationBySessionKey(agentId: string, sessionKey: string): Promise<ConversationRecord | null>;
  /**
   * Refreshes the planner statistics (`PRAGMA optimize`) when they are older than `maxAgeMs`. Best effort:
   * skipped when another writer holds the lock.
   */
  refreshStatistics(now: number, maxAgeMs: number): Promise<void>;
}
