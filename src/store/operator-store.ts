/**
 * The operator store contract: the reads behind the `lcm` CLI's listings that no hook needs. Each is bounded by the
 * number of conversations or by one conversation's summaries, never by the number of stored messages.
 */
import type { ConversationId, ConversationRecord, SummaryKind, SummaryLevel } from "../records.js";

export interface ConversationListing {
  conversation: ConversationRecord;
  summaries: number;
  fallbackSummaries: number;
  /** Deepest summary (null when none). */
  maxDepth: number | null;
}

/** A summary as the DAG view shows it: its metadata and the first characters of its text. */
export interface SummaryNode {
  summaryId: string;
  kind: SummaryKind;
  depth: number;
  level: SummaryLevel;
  tokenCount: number;
  sourceTokenCount: number;
  sourceMessageCount: number;
  descendantCount: number;
  seqStart: number;
  seqEnd: number;
  earliestAt: number;
  latestAt: number;
  createdAt: number;
  /** The summaries it condensed, in order (condensed summaries only). */
  parentSummaryIds: string[];
  /** Whether a context item points at it (it is what the model sees, not condensed into another). */
  inContext: boolean;
  preview: string;
}

/**
 * What `lcm status` says about the database itself, in words both backends answer. The page fields are SQLite's
 * (its file is made of pages) and null on PostgreSQL, whose server manages its own storage.
 */
export interface DatabaseFileInfo {
  /** Which backend holds the data. */
  backend: "sqlite" | "postgresql";
  /** LCM's schema version (SQLite: user_version; PostgreSQL: the newest row of lcm_schema_migrations). */
  schemaVersion: number;
  /** Bytes the database takes: the SQLite file (without its write-ahead log); PostgreSQL's pg_database_size. */
  sizeBytes: number;
  /** Bytes in it that no row uses, reused by new rows: SQLite's free pages; on PostgreSQL, LCM's tables' dead rows (an estimate). */
  freeBytes: number;
  /** How writes reach the disk: SQLite's journal mode ("wal"); on PostgreSQL, the server's write-ahead log and its level. */
  journalMode: string;
  /** SQLite only (null on PostgreSQL): the file's application id, page size, pages, and free pages among them. */
  applicationId: number | null;
  pageSize: number | null;
  pageCount: number | null;
  freePages: number | null;
}

export interface OperatorStore {
  /** Conversations, newest activity first, with their summary counts; `agentId` filters to one agent. */
  listConversations(filter: { agentId?: string; limit: number }): Promise<ConversationListing[]>;
  /** Every summary of a conversation, oldest first by source range. */
  summaryNodes(conversationId: ConversationId, previewChars: number): Promise<SummaryNode[]>;
  /** Context tokens of every conversation, summed (what all models would see before budgets). */
  contextTokensTotal(): Promise<number>;
  fileInfo(): Promise<DatabaseFileInfo>;
}
