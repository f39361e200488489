/**
 * The export store contract: the reads of `lcm export` (JSONL and Markdown), of retention's whole-conversation archives,
 * and of `lcm import jsonl`'s first pass (what the target already holds), in the records of the export format
 * (export-format.ts); and where retention's archives hold what it took out. Reads only: nothing here changes anything.
 * Pages are bounded by `limit` so that the caller lets the event loop run between them.
 */
import type { ConversationId, MessageId } from "../records.js";
import type {
  ContextItemExportRecord,
  ConversationExportRecord,
  ConversationReference,
  LargeFileExportRecord,
  MessageExportRecord,
  SummaryExportRecord,
} from "./export-format.js";
import type { ArchivedLocation } from "./retention-store.js";

/**
 * A summary's place in the order summaries were created in: larger is newer. Opaque otherwise; a conversation's
 * newest mark taken before reading tells which summaries were there when the reading began.
 */
export type SummaryMark = number;

/** A stored file's record without its content, and where its content is on disk now. */
export interface ExportedFile {
  record: Omit<LargeFileExportRecord, "contentBase64">;
  /** The absolute path of the stored content. */
  path: string;
}

/** What a conversation holds, for an export's report and progress. */
export interface ConversationCounts {
  agentId: string;
  sessionId: string;
  messages: number;
  summaries: number;
  contextItems: number;
  largeFiles: number;
}

/** The fields of a summary the Markdown form shows. */
export type SummaryToShow = Pick<
  SummaryExportRecord, "summaryId" | "kind" | "depth" | "content" | "seqStart" | "seqEnd" | "earliestAt" | "latestAt" | "level"
>;

/** Where a summary stands in the Markdown order: by the last message it covers, leaves before what condenses them. */
export interface CoverageOrder {
  seqEnd: number;
  depth: number;
  mark: SummaryMark;
}

export interface ExportStore {
  /** Where the store is kept (a file's path), for messages that name it. */
  readonly path: string;
  /**
   * Runs `body` with every read of this store seeing one committed state (an export taken while turns, /new or a
   * compaction write elsewhere is still one consistent snapshot). Contract: the store is the caller's own (the
   * CLI's), never the gateway's shared one: nothing else may use it meanwhile. Blocks no writer.
   */
  readSnapshot<T>(body: () => Promise<T>): Promise<T>;
  /** The conversation's record as stored, its previous conversation named by what identifies it anywhere; null when not stored. */
  conversation(conversationId: ConversationId): Promise<ConversationExportRecord | null>;
  /** The mark of the conversation's newest summary (0 when it has none). */
  newestSummaryMark(conversationId: ConversationId): Promise<SummaryMark>;
  /** Stored files of the conversation with a file id after `afterFileId`, in file id order, at most `limit`. */
  largeFiles(conversationId: ConversationId, afterFileId: string, limit: number): Promise<ExportedFile[]>;
  /**
   * A backend that keeps stored files' content in the database too (PostgreSQL): a file's content, for an export made
   * on a machine that does not hold the file; null when the database keeps none. Absent on SQLite.
   */
  storedFileContent?(fileId: string): Promise<Buffer | null>;
  /**
   * Messages with `afterSeq < seq < beforeSeq`, in seq order, at most `limit`, with their parts; a message retention
   * pruned is its stub with `archive` naming the file holding its text.
   */
  messages(conversationId: ConversationId, afterSeq: number, beforeSeq: number, limit: number): Promise<MessageExportRecord[]>;
  /** Summaries with a mark in (`after`, `through`], in creation order, at most `limit`, with their edges. */
  summaries(
    conversationId: ConversationId, after: SummaryMark, through: SummaryMark, limit: number,
  ): Promise<{ summary: SummaryExportRecord; mark: SummaryMark }[]>;
  /** Summaries after `after` (null: from the first) in coverage order, at most `limit`: what the Markdown form shows. */
  summariesByCoverage(
    conversationId: ConversationId, after: CoverageOrder | null, limit: number,
  ): Promise<{ summary: SummaryToShow; order: CoverageOrder }[]>;
  /**
   * Context items with an ordinal after `afterOrdinal`, in ordinal order, at most `limit`; each with the mark of the
   * summary it shows (null for a message).
   */
  contextItems(
    conversationId: ConversationId, afterOrdinal: number, limit: number,
  ): Promise<{ item: ContextItemExportRecord; summaryMark: SummaryMark | null }[]>;
  /** The conversations of an agent, oldest first, archived ones included (what `lcm export --agent` exports). */
  conversationIdsOfAgent(agentId: string): Promise<ConversationId[]>;
  /** What a conversation holds; null when it is not stored. */
  conversationCounts(conversationId: ConversationId): Promise<ConversationCounts | null>;
  /** The first conversation stored with this identity (agent, session, creation time), and its archive reason; null when none. */
  findConversation(reference: ConversationReference): Promise<{ conversationId: ConversationId; archiveReason: string | null } | null>;
  /** The live (not archived) conversation of a session; null when none. */
  liveConversationOf(agentId: string, sessionId: string): Promise<ConversationId | null>;
  /** The first of `summaryIds` stored in a conversation other than `except`, and that conversation; null when none. */
  firstSummaryElsewhere(summaryIds: readonly string[], except: ConversationId | null): Promise<{ id: string; conversationId: ConversationId } | null>;
  /** The first of `fileIds` stored in a conversation other than `except`, and that conversation; null when none. */
  firstFileElsewhere(fileIds: readonly string[], except: ConversationId | null): Promise<{ id: string; conversationId: ConversationId } | null>;
  /** Where a summary or file id of a conversation archived whole went; null when retention never archived it. */
  archivedIdLocation(id: string): Promise<ArchivedLocation | null>;
  /** The archives holding raw messages of `conversationIds` or whole conversations of their agents, newest first. */
  archivesOf(conversationIds: readonly ConversationId[], limit: number): Promise<ArchivedLocation[]>;
  /** For a leaf summary (by its internal id): its source messages retention archived, grouped by archive. */
  archivedSourcesOf(summaryRowId: number): Promise<(ArchivedLocation & { messageIds: MessageId[] })[]>;
}
