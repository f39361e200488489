/**
 * The LCM export format (JSONL, one record per line): what `lcm export --format jsonl` writes, `lcm import jsonl`
 * reads back, and retention archives hold. Lossless: every column of a conversation's rows, with the JSON columns
 * (meta, bootstrap state, …) kept as the exact text stored, so import → export gives the same bytes. Nothing in it
 * is specific to one database: rows refer to each other by what survives a move (a message by its `seq`, a summary
 * by its `sum_` id, a file by its `file_` id), never by row ids, and a stored file by its name, not its path.
 *
 * A file is one or more conversation blocks, each complete on its own (concatenating two exports is an export):
 *   conversation · largeFile* · message* (seq order) · summary* (creation order) · contextItem* (ordinal order) · end
 *
 * It sits with the store contracts because the export and import stores (export-store.ts, import-store.ts) speak it.
 */

/** The `format` every conversation record names. */
export const EXPORT_FORMAT = "lcm-export";
/** Bumped when a record changes incompatibly; the importer refuses versions it does not know. */
export const EXPORT_FORMAT_VERSION = 1;

/** archive_reason of a conversation whose import has not finished (it stays archived until then). */
export const IMPORTING_REASON = "lcm-import:in-progress";

/** Another conversation, named by what identifies it in any database (its previous one after /reset). */
export interface ConversationReference {
  agentId: string;
  sessionId: string;
  createdAt: number;
}

/** Opens a conversation block: the conversations row, counters included, as stored. */
export interface ConversationExportRecord {
  type: "conversation";
  format: typeof EXPORT_FORMAT;
  version: number;
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  createdAt: number;
  updatedAt: number;
  lastIngestAt: number | null;
  nextSeq: number;
  nextOrdinal: number;
  messageCount: number;
  messageTokens: number;
  contextTokens: number;
  contextRawTokens: number;
  contextItems: number;
  lastTokenBudget: number | null;
  lastWindowTokens: number | null;
  lastReserveTokens: number | null;
  /** JSON text as stored (BootstrapState), or null. */
  bootstrapState: string | null;
  /** JSON text as stored (CompactionOutcome), or null. */
  lastCompaction: string | null;
  sessionStartedAt: number | null;
  /** JSON text as stored (SessionResetRecord), or null. */
  lastReset: string | null;
  previousConversation: ConversationReference | null;
  archivedAt: number | null;
  archiveReason: string | null;
  endedAt: number | null;
  endReason: string | null;
}

/** One message_parts row; `start`/`end` are spans into the message's content. */
export interface PartExportRecord {
  ordinal: number;
  kind: string;
  start: number | null;
  end: number | null;
  data: string | null;
  meta: string | null;
}

/**
 * Where retention put a pruned message's text: its archive file (gzip JSONL), when and why it was written. The
 * message record then holds the stub the database keeps (empty content and meta, no parts).
 */
export interface ArchiveReference {
  path: string;
  createdAt: number;
  reason: string;
}

export interface MessageExportRecord {
  type: "message";
  seq: number;
  role: string;
  content: string;
  tokenCount: number;
  createdAt: number;
  identityKey: string;
  flags: number;
  /** JSON text as stored. */
  meta: string;
  parts: PartExportRecord[];
  /** Only for a message retention pruned: the archive that holds its text (absent otherwise, as in version 1 files). */
  archive?: ArchiveReference;
}

/** A summary with its DAG edges: the messages it summarizes (by seq) or the summaries it condenses (by id). */
export interface SummaryExportRecord {
  type: "summary";
  summaryId: string;
  kind: string;
  depth: number;
  content: string;
  tokenCount: number;
  sourceTokenCount: number;
  earliestAt: number;
  latestAt: number;
  descendantCount: number;
  sourceMessageCount: number;
  seqStart: number;
  seqEnd: number;
  /** JSON text as stored (an array of file ids). */
  fileIds: string;
  level: string;
  createdAt: number;
  /** summary_messages rows: the source message's seq and the edge's ordinal. */
  sourceMessages: { seq: number; ordinal: number }[];
  /** summary_parents rows: the condensed source summary's id and the edge's ordinal. */
  sourceSummaries: { summaryId: string; ordinal: number }[];
}

/** One context_items row: exactly one of `messageSeq` and `summaryId` is set. */
export interface ContextItemExportRecord {
  type: "contextItem";
  ordinal: number;
  messageSeq: number | null;
  summaryId: string | null;
  tokenCount: number;
  flags: number;
}

/** A large_files row with the stored file's bytes (base64), or null when the file was missing at export. */
export interface LargeFileExportRecord {
  type: "largeFile";
  fileId: string;
  contentHash: string;
  fileName: string | null;
  mimeType: string | null;
  byteSize: number;
  tokenCount: number;
  /** The stored file's name (`file_….ext`); its folder depends on the database it is imported into. */
  storedName: string;
  explorationSummary: string;
  explorer: string;
  origin: string;
  toolName: string | null;
  createdAt: number;
  contentBase64: string | null;
}

/** Closes a conversation block with what it holds, so a truncated file is recognised. */
export interface EndExportRecord {
  type: "end";
  messages: number;
  summaries: number;
  contextItems: number;
  largeFiles: number;
  /** Large files whose content was missing on disk at export (their records have `contentBase64: null`). */
  missingFiles: number;
}

export type ExportRecord =
  | ConversationExportRecord
  | LargeFileExportRecord
  | MessageExportRecord
  | SummaryExportRecord
  | ContextItemExportRecord
  | EndExportRecord;

/** One line of the file (JSON.stringify is deterministic for these records: fixed key order, no floats). */
export function exportLine(record: ExportRecord): string {
  return `${JSON.stringify(record)}\n`;
}
