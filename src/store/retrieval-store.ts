/**
 * The retrieval store contract: the reads behind lcm_grep, lcm_describe and lcm_expand. Every search method
 * takes an already-authorized list of conversations (access control happens before the store is asked) and is
 * bounded: full-text reads stop at LIMIT, regex candidates come in pages or windows whose work is capped, so no
 * single call costs time proportional to the whole history.
 */
import type { ConversationId, ConversationRecord, FileId, MessageId, SummaryId, SummaryKind } from "../records.js";
import type { QueryTerm } from "../text/text-query.js";
import type { ArchivedLocation } from "./retention-store.js";

/**
 * What the index must list for a regex: per alternative, words every match holds (`exact`: as a whole word,
 * `prefix`: at a word's start) and, for messages, groups of dictionary words one of which every match holds.
 * Null alternatives are impossible (left out). Words are as text/text-analysis.ts folds them.
 */
export interface IndexRequirement {
  alternatives: { words: { text: string; prefix: boolean }[]; anyOf: string[][] }[];
}

export type SearchSort = "recency" | "relevance";

export interface SearchFilter {
  /** The conversations searched: always a concrete, authorized list. */
  conversationIds: ConversationId[];
  /** Inclusive lower time bound (ms since epoch) or null. Summaries match when their time range overlaps. */
  since: number | null;
  /** Exclusive upper time bound (ms since epoch) or null. */
  before: number | null;
}

/** How far the message and summary indexes reach (`RetrievalStore.indexState`). */
export interface IndexState {
  messagesThrough: number;
  summariesThrough: number;
  /** The newest ids stored (`maxMessageId`, `maxSummaryRowId`), read with the state. */
  messagesNewest: number;
  summariesNewest: number;
  /** SQLite, during a backlog run: messages up to this id are in the backlog's trigram index (`backlogMessages`). */
  messagesBacklogThrough?: number;
  /** During a backlog run: messages up to this id are covered by the backlog's blocks (`backlogBlockRows`). */
  messagesBlocksThrough?: number;
}

/** Which documents a full-text search reads: messages, summaries, or chunks of content stored aside. */
export type TextSource = "messages" | "summaries" | "files";

/** A full-text read's scope: the filter, and for messages optionally one seq range (below one summary). */
export interface TextFilter extends SearchFilter {
  seqRange?: { from: number; to: number };
}

/**
 * A query's terms as one backend understands them: for each term the other words it matches, and how common it
 * is. Every backend finds a term in a document when the document holds (text/text-analysis.ts decides words):
 * - its words, in order (a phrase for several);
 * - another form of it: a word with the same Porter stem (`stems`);
 * - for a prefix term, a word it begins (`prefixes`; a backend may list none for a very short or very common
 *   start and match the prefix itself);
 * - its fragments in order inside a longer word (`LcmContextEngine` for ContextEngine, `1234ms` for 1234 ms, a
 *   run of Chinese holding the characters).
 * Candidates are a superset of that; ranking (retrieval/) checks each on its text.
 */
export interface PreparedTextQuery {
  terms: QueryTerm[];
  /** Per term, in `terms` order: words with the same stem, and words the term begins (prefix terms). */
  forms: { stems: string[]; prefixes: string[] }[];
  /** Per term: documents holding it (estimated from a bounded read when common). */
  frequencies: number[];
  /** Documents in the index, and their mean length in words. */
  documents: number;
  averageWords: number;
  /** The newest row id the index covers; rows above it are read with the scan methods (TextCandidates.unindexed). */
  indexedThrough: number;
  /**
   * Messages only, SQLite: the newest row id the backlog's trigram index covers (spec 030, 2b). Rows in
   * (indexedThrough, backlogThrough] are read through it (RetrievalStore.backlogMessages); absent or at most
   * `indexedThrough`: none are.
   */
  backlogThrough?: number;
  /**
   * Messages only: the newest row id the backlog's blocks cover (spec 030, 2c), a coarse filter over rows no index
   * covers yet (RetrievalStore.backlogBlockRows); absent or at most `indexedThrough`: none.
   */
  backlogBlocksThrough?: number;
  /** The newest row id stored. */
  newest: number;
}

/**
 * Which of a prepared query's terms a candidate read requires: a document matches when it holds every term of
 * one group (indexes into PreparedTextQuery.terms). "Any of a, b" is two groups of one.
 */
export interface TextSelection {
  groups: number[][];
}

/** Candidates of one full-text read, newest first, each with its whole searchable text and length in words. */
export interface TextCandidates<Row> {
  rows: (Row & { wordCount: number })[];
  /** The read stopped at `limit` rows: older matches in the window were not read. */
  limitReached: boolean;
}

export interface MessageHitRow {
  messageId: MessageId;
  conversationId: ConversationId;
  seq: number;
  role: string;
  createdAt: number;
  /** The searchable text (tool-call arguments decoded), or a snippet of it once a search has marked its hits. */
  text: string;
  /** Relevance when ranked (higher is better); 0 otherwise. */
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
  /** The message seqs it covers, [seqStart, seqEnd]: a hit in one of them is the source this summary repeats. */
  seqStart: number;
  seqEnd: number;
  text: string;
  rank: number;
}

/**
 * A chunk of content stored aside (a paste, a tool output, a file block: one stored file) that may match. The store
 * gives where it is; its `text` is read from the file by the caller (empty until then).
 */
export interface FileChunkHitRow {
  /** The chunk's id in the index; 0 for content not indexed yet, read directly. */
  chunkId: number;
  fileId: FileId;
  fileName: string | null;
  conversationId: ConversationId;
  /** The message believed to hold the file's reference (`fileReferences` checks it), and that message's time. */
  messageId: MessageId | null;
  createdAt: number;
  /** The chunk's bytes in the file, [byteStart, byteEnd), and the line its first byte is on (1-based). */
  byteStart: number;
  byteEnd: number;
  lineStart: number;
  /** Where the content is: an absolute path. */
  path: string;
  text: string;
  rank: number;
}

/** A stored file in scope whose content is not (all) in the index: read it directly from `indexedBytes` on. */
export interface UnindexedFile {
  fileId: FileId;
  fileName: string | null;
  conversationId: ConversationId;
  messageId: MessageId | null;
  createdAt: number;
  path: string;
  indexedBytes: number;
  indexedLines: number;
}

/** A stored file in scope whose content cannot be searched (missing, unreadable, binary), and why. */
export interface UnsearchableFile {
  fileId: FileId;
  fileName: string | null;
  reason: string;
}

/** The message that holds a stored file's `[LCM File: …]` reference. */
export interface FileReference {
  messageId: MessageId;
  conversationId: ConversationId;
  seq: number;
  role: string;
  createdAt: number;
}

/** A page of regex candidates: the rows in scope, and where the next page starts (null when exhausted). */
export interface CandidatePage<Row> {
  rows: Row[];
  /** Exclusive upper bound of the next page (an FTS rowid), or null when every candidate was examined. */
  next: number | null;
  /** Time of the oldest row examined, when known; lets a stopped search say how far back it got. */
  oldestExamined: number | null;
}

/**
 * A scan's substring filter: rows whose stored text contains one of `anyOf` (ASCII case-insensitive, like SQL
 * LIKE; letters, digits, spaces and punctuation other than `"` and `\`, which stored tool-call arguments escape),
 * and, with `keepNonAscii`, every row holding a non-ASCII character (folding may make it match).
 */
export interface ContainsFilter {
  anyOf: string[];
  keepNonAscii: boolean;
}

/** A window of history, [from, to): by seq inside one conversation, or by message id (the order stored) across all. */
export type ScanWindow =
  | { by: "seq"; conversationId: ConversationId; from: number; to: number }
  | { by: "messageId"; from: number; to: number };

/** A summary's place in the context and its lineage, for lcm_describe. */
export interface SummaryLineage {
  /** Summaries that condensed this one (normally zero or one). */
  childSummaryIds: SummaryId[];
  /** Leaf summaries: the source message ids in order (at most the requested limit). */
  sourceMessageIds: MessageId[];
  /** Condensed summaries: the internal row ids of the summaries it condensed, in order. */
  parentRowIds: number[];
  inContext: boolean;
  /** Leaf summaries: source messages retention archived (their rows are stubs), by archive (schema 10). */
  archivedSources?: (ArchivedLocation & { messageIds: MessageId[] })[];
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
  /**
   * Looks up a query's terms in the index of `source` (forms and frequencies) after indexing a small backlog
   * (a few chunks); a larger one is left for maintenance and reported by `indexedThrough`.
   */
  prepareText(source: TextSource, terms: QueryTerm[]): Promise<PreparedTextQuery>;
  /**
   * Indexed messages in scope with id in [from, to] matching the selected terms, newest first, at most `limit`,
   * each with its whole searchable text. Bounded by the window: a caller with a time budget reads in windows.
   */
  messageTextCandidates(
    prepared: PreparedTextQuery, filter: TextFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<MessageHitRow>>;
  summaryTextCandidates(
    prepared: PreparedTextQuery, filter: SearchFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<SummaryHitRow>>;
  /**
   * Regex candidates from the full-text index, newest first, among the indexed rows (see `indexState`);
   * examines at most `pageSize` index entries.
   */
  messageCandidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<MessageHitRow>>;
  summaryCandidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<SummaryHitRow>>;
  /**
   * How far each index reaches, after indexing a small backlog itself: rows above `messagesThrough` /
   * `summariesThrough` are not in the index yet and are read with the scan methods (up to the newest ids stored), those
   * up to `messagesBacklogThrough` (SQLite, during a backlog run) through `backlogMessages`.
   */
  indexState(): Promise<IndexState>;
  /**
   * For each fragment (lowercase ASCII letters and digits, with a letter), the indexed words that end with it,
   * from the term dictionary; a fragment maps to null when more than `limit` words end with it.
   */
  messageTermsEndingWith(fragments: readonly string[], limit: number): Promise<Map<string, string[] | null>>;
  /**
   * Rows of one window, newest first, with their whole searchable text; with `contains`, only rows passing it
   * (ContainsFilter) and every row holding a NUL character (SQLite's LIKE stops at one; the caller decides).
   * Examines at most the window's width.
   */
  scanMessages(filter: TextFilter, window: ScanWindow, contains: ContainsFilter | null): Promise<MessageHitRow[]>;
  /**
   * Optional (PostgreSQL): the widest window of ids a message scan with `contains` may examine. The server filters the
   * rows and sends only those passing, so a search widens a window that passed few rows (four times, up to this): a
   * large backlog's scan then takes tens of reads, not thousands. Absent (SQLite, whose scans run on the calling
   * thread): windows keep the caller's width.
   */
  readonly scanWindowMax?: number;
  /**
   * Optional (SQLite): messages above the full-text index's watermark with id in [from, to] whose text may hold one of
   * `anyOf` (folded substrings, case-insensitively), read through the backlog's trigram index, newest first: the
   * candidates among at most `limit` of its entries, and the id below which to read on (`next`, null when none are
   * left). A superset: the caller matches each row. Null when the trigram index does not cover the window (see
   * `indexState().messagesBacklogThrough`) or a substring is shorter than a trigram.
   */
  backlogMessages?(filter: TextFilter, anyOf: readonly string[], window: { from: number; to: number }, limit: number): Promise<CandidatePage<MessageHitRow> | null>;
  /**
   * Optional: messages in [from, to] that may hold one of `anyOf` (folded substrings, case-insensitively) by the
   * backlog's blocks (spec 030, 2c; text/backlog-blocks.ts) and pass `contains` (as `scanMessages`), newest first: the
   * rows of the newest blocks whose bits allow one, about `maxRows` rows of blocks at most; no other row of the
   * window above `next` holds one. `next`: the id below which to read on (null: none left in the window). Null when
   * the blocks do not cover `to` or cannot narrow `anyOf` (a substring shorter than a trigram): read directly. A
   * superset: the caller matches each row.
   */
  backlogBlockRows?(
    filter: TextFilter, anyOf: readonly string[], contains: ContainsFilter | null, window: { from: number; to: number }, maxRows: number,
  ): Promise<{ rows: MessageHitRow[]; next: number | null } | null>;
  scanSummaries(filter: SearchFilter, window: { from: number; to: number }, contains: ContainsFilter | null): Promise<SummaryHitRow[]>;
  /**
   * Indexed chunks of stored content in scope with id in [from, to] matching the selected terms, newest first, at
   * most `limit`, with their length in words (text empty: the caller reads it from the file).
   */
  fileTextCandidates(
    prepared: PreparedTextQuery, filter: SearchFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<FileChunkHitRow>>;
  /** Regex candidates among the indexed chunks of stored content, newest first; examines at most `pageSize` entries. */
  fileCandidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<FileChunkHitRow>>;
  /** Indexed chunks in scope with id in [from, to), newest first (a regex the index cannot narrow). */
  scanFileChunks(filter: SearchFilter, window: { from: number; to: number }): Promise<FileChunkHitRow[]>;
  /** The highest chunk id of the index of stored content (0 when empty). */
  maxFileChunkId(): Promise<number>;
  /**
   * Stored files in scope whose content is not all indexed yet, newest first (at most `limit`), after indexing a
   * small backlog itself; and those whose content cannot be searched at all.
   */
  unindexedFiles(filter: SearchFilter, limit: number): Promise<{ files: UnindexedFile[]; unsearchable: UnsearchableFile[] }>;
  /**
   * For each stored file: the message holding its reference, checked (the earliest message of its conversation that
   * names the file id); null when no stored message names it.
   */
  fileReferences(files: readonly { fileId: FileId; conversationId: ConversationId; messageId: MessageId | null }[]): Promise<Map<FileId, FileReference | null>>;
  /** The highest message seq of a conversation (0 when empty). */
  maxMessageSeq(conversationId: ConversationId): Promise<number>;
  /** The highest message id / summary row id in the database (0 when empty). */
  maxMessageId(): Promise<number>;
  maxSummaryRowId(): Promise<number>;
  /**
   * For each message seq of a conversation: the summary that now stands for it in the context (the root above the
   * leaf whose seq range holds it), or null while the message is still raw context.
   */
  coveringSummaryIds(conversationId: ConversationId, seqs: number[]): Promise<Map<number, SummaryId | null>>;
  summaryLineage(summaryRowId: number, conversationId: ConversationId, messageLimit: number): Promise<SummaryLineage>;
  /** summaryLineage of the summary with this id; null when no such summary is stored. */
  summaryLineageById(summaryId: SummaryId, messageLimit: number): Promise<SummaryLineage | null>;
  /** Plain-text messages in the order of `messageIds`; unknown ids are skipped. */
  getMessageTexts(messageIds: MessageId[]): Promise<MessageText[]>;
  /** Conversations recall may read for an agent (null: every agent), excluding delegated-expansion sessions. */
  listRecallConversationIds(agentId: string | null): Promise<ConversationId[]>;
  /** The most recently active conversation with this session key. */
  findConversationBySessionKey(agentId: string, sessionKey: string): Promise<ConversationRecord | null>;
  /**
   * Refreshes the statistics the database plans its queries with, when they are older than `maxAgeMs`. Best
   * effort: skipped when another writer holds the lock.
   */
  refreshStatistics(now: number, maxAgeMs: number): Promise<void>;
  /** Where retention archived a summary or file id whose conversation it removed; null if it never did. */
  archivedIdLocation?(id: string): Promise<ArchivedLocation | null>;
  /** Retention archives of these conversations' messages, and of their agents' conversations archived whole. */
  archivesOf?(conversationIds: ConversationId[], limit: number): Promise<ArchivedLocation[]>;
}
