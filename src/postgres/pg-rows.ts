/**
 * Row shapes of the PostgreSQL schema and their mapping to records, for every PostgreSQL store. Text rule (PostgreSQL
 * text cannot hold NUL, pg-database.ts): every column a host or a person fills (ids of agents and sessions, message
 * content, roles, identity keys, meta, parts, summary content, file names and explorations, reasons) is written with
 * `toPgText` and read back here with `fromPgText`; JSON this code serializes itself (JSON.stringify escapes NUL),
 * generated ids, hashes and paths are stored as they are. BIGINT columns arrive as numbers (the pool's type parser).
 */
import type { PartKind, StoredPart } from "../messages/message-codec.js";
import type {
  ContextItemRecord,
  ConversationRecord,
  FileId,
  LargeFileOrigin,
  LargeFileRecord,
  MessageRecord,
  SummaryKind,
  SummaryLevel,
  SummaryRecord,
} from "../records.js";
import { orNull, readAssemblyRecord, readBootstrapState, readCompactionOutcome, readSessionReset } from "../store/conversation-columns.js";
import { fromPgText, fromPgTextOrNull } from "./pg-database.js";

export interface PgConversationRow {
  conversation_id: number;
  agent_id: string;
  session_id: string;
  session_key: string | null;
  created_at: number;
  updated_at: number;
  last_ingest_at: number | null;
  next_seq: number;
  next_ordinal: number;
  message_count: number;
  message_tokens: number;
  context_tokens: number;
  context_raw_tokens: number;
  context_items: number;
  last_token_budget: number | null;
  last_window_tokens: number | null;
  last_reserve_tokens: number | null;
  bootstrap_state: string | null;
  last_compaction: string | null;
  last_assembly: string | null;
  session_started_at: number | null;
  last_reset: string | null;
  previous_conversation_id: number | null;
  archived_at: number | null;
  archive_reason: string | null;
  ended_at: number | null;
  end_reason: string | null;
}

export function toConversation(row: PgConversationRow): ConversationRecord {
  return {
    conversationId: row.conversation_id,
    agentId: fromPgText(row.agent_id),
    sessionId: fromPgText(row.session_id),
    sessionKey: fromPgTextOrNull(row.session_key),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastIngestAt: row.last_ingest_at,
    messageCount: row.message_count,
    messageTokens: row.message_tokens,
    contextTokens: row.context_tokens,
    contextRawTokens: row.context_raw_tokens,
    contextItemCount: row.context_items,
    lastTokenBudget: row.last_token_budget,
    lastWindowTokens: row.last_window_tokens,
    lastReserveTokens: row.last_reserve_tokens,
    // An unreadable column reads as unset, as on SQLite: one bad row must not break every reader of the table.
    bootstrapState: orNull(readBootstrapState(row.bootstrap_state)),
    lastCompaction: orNull(readCompactionOutcome(row.last_compaction)),
    lastAssembly: orNull(readAssemblyRecord(row.last_assembly)),
    sessionStartedAt: row.session_started_at,
    lastReset: orNull(readSessionReset(row.last_reset)),
    previousConversationId: row.previous_conversation_id,
    archivedAt: row.archived_at,
    archiveReason: fromPgTextOrNull(row.archive_reason),
    endedAt: row.ended_at,
    endReason: fromPgTextOrNull(row.end_reason),
  };
}

export const MESSAGE_COLUMNS = "message_id, conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta";

export interface PgMessageRow {
  message_id: number;
  conversation_id: number;
  seq: number;
  role: string;
  content: string;
  token_count: number;
  created_at: number;
  identity_key: string;
  flags: number;
  meta: string;
}

export const PART_COLUMNS = "message_id, kind, text_start, text_end, data, meta";

export interface PgPartRow {
  message_id: number;
  kind: string;
  text_start: number | null;
  text_end: number | null;
  data: string | null;
  meta: string | null;
}

export function toPart(row: PgPartRow): StoredPart {
  return { kind: row.kind as PartKind, start: row.text_start, end: row.text_end, data: fromPgTextOrNull(row.data), meta: fromPgTextOrNull(row.meta) };
}

export function toMessage(row: PgMessageRow, parts: StoredPart[]): MessageRecord {
  return {
    messageId: row.message_id,
    conversationId: row.conversation_id,
    seq: row.seq,
    role: fromPgText(row.role),
    content: fromPgText(row.content),
    tokenCount: row.token_count,
    createdAt: row.created_at,
    identityKey: fromPgText(row.identity_key),
    flags: row.flags,
    meta: fromPgText(row.meta),
    parts,
  };
}

export const CONTEXT_ITEM_COLUMNS = "ordinal, message_id, summary_id, token_count, flags";

export interface PgContextItemRow {
  ordinal: number;
  message_id: number | null;
  summary_id: number | null;
  token_count: number;
  flags: number;
}

export function toContextItem(row: PgContextItemRow): ContextItemRecord {
  return { ordinal: row.ordinal, messageId: row.message_id, summaryRowId: row.summary_id, tokenCount: row.token_count, flags: row.flags };
}

export const SUMMARY_COLUMNS =
  "id, summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at, " +
  "descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at";

export interface PgSummaryRow {
  id: number;
  summary_id: string;
  conversation_id: number;
  kind: string;
  depth: number;
  content: string;
  token_count: number;
  source_token_count: number;
  earliest_at: number;
  latest_at: number;
  descendant_count: number;
  source_message_count: number;
  seq_start: number;
  seq_end: number;
  file_ids: string;
  level: string;
  created_at: number;
}

export function toSummary(row: PgSummaryRow, parentSummaryIds: string[]): SummaryRecord {
  return {
    rowId: row.id,
    summaryId: row.summary_id,
    conversationId: row.conversation_id,
    kind: row.kind as SummaryKind,
    depth: row.depth,
    content: fromPgText(row.content),
    tokenCount: row.token_count,
    sourceTokenCount: row.source_token_count,
    earliestAt: row.earliest_at,
    latestAt: row.latest_at,
    descendantCount: row.descendant_count,
    sourceMessageCount: row.source_message_count,
    seqStart: row.seq_start,
    seqEnd: row.seq_end,
    fileIds: JSON.parse(row.file_ids) as FileId[],
    level: row.level as SummaryLevel,
    createdAt: row.created_at,
    parentSummaryIds,
  };
}

export const LARGE_FILE_COLUMNS =
  "file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path, " +
  "exploration_summary, explorer, origin, tool_name, created_at";

export interface PgLargeFileRow {
  file_id: string;
  conversation_id: number;
  content_hash: string;
  file_name: string | null;
  mime_type: string | null;
  byte_size: number;
  token_count: number;
  storage_path: string;
  exploration_summary: string;
  explorer: string;
  origin: string;
  tool_name: string | null;
  created_at: number;
}

/** A PostgreSQL database has no folder of its own: paths are recorded absolute, as the record holds them. */
export function toLargeFile(row: PgLargeFileRow): LargeFileRecord {
  return {
    fileId: row.file_id,
    conversationId: row.conversation_id,
    contentHash: row.content_hash,
    fileName: fromPgTextOrNull(row.file_name),
    mimeType: fromPgTextOrNull(row.mime_type),
    byteSize: row.byte_size,
    tokenCount: row.token_count,
    storagePath: row.storage_path,
    explorationSummary: fromPgText(row.exploration_summary),
    explorer: row.explorer,
    origin: row.origin as LargeFileOrigin,
    toolName: fromPgTextOrNull(row.tool_name),
    createdAt: row.created_at,
  };
}

/** Rows grouped by their `key` column (a parent's id), each group in row order, mapped by `map`. */
export function groupRows<Row, R>(rows: readonly Row[], key: (row: Row) => number, map: (row: Row) => R): Map<number, R[]> {
  const groups = new Map<number, R[]>();
  for (const row of rows) {
    const list = groups.get(key(row));
    if (list) list.push(map(row));
    else groups.set(key(row), [map(row)]);
  }
  return groups;
}
