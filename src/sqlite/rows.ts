/**
 * Row shapes of the SQLite schema and their mapping to records. Only the SQLite store imports this file.
 */
import type { PartKind, StoredPart } from "../messages/message-codec.js";
import { orNull, readAssemblyRecord, readBootstrapState, readCompactionOutcome, readSessionReset } from "../store/conversation-columns.js";
import type {
  AssemblyRecord,
  ContextItemRecord,
  ConversationRecord,
  FileId,
  MessageRecord,
  SummaryKind,
  SummaryLevel,
  SummaryRecord,
} from "../records.js";

export interface ConversationRow {
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

export function toConversation(row: ConversationRow): ConversationRecord {
  return {
    conversationId: row.conversation_id,
    agentId: row.agent_id,
    sessionId: row.session_id,
    sessionKey: row.session_key,
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
    // An unreadable column reads as unset (bootstrap then reads the transcript from its start; identities dedupe):
    // one bad row must not break every reader of the table. `lcm doctor` reports and repairs it.
    bootstrapState: orNull(readBootstrapState(row.bootstrap_state)),
    lastCompaction: orNull(readCompactionOutcome(row.last_compaction)),
    lastAssembly: orNull(readAssemblyRecord(row.last_assembly)),
    sessionStartedAt: row.session_started_at,
    lastReset: orNull(readSessionReset(row.last_reset)),
    previousConversationId: row.previous_conversation_id,
    archivedAt: row.archived_at,
    archiveReason: row.archive_reason,
    endedAt: row.ended_at,
    endReason: row.end_reason,
  };
}

/**
 * The hot reads (messages, their parts, context items: about 1,300 of each per assembled 128k context) come back
 * as arrays in column order, not keyed objects: node:sqlite builds a keyed object per row at about the cost of
 * the query itself (1,344 message rows: 6.5 ms as objects, 3.2 ms as arrays, measured at 1M messages). Each
 * tuple type below is tied to the column list next to it.
 */
export const MESSAGE_COLUMNS =
  "message_id, conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta";
export type MessageTuple = [
  messageId: number, conversationId: number, seq: number, role: string, content: string, tokenCount: number,
  createdAt: number, identityKey: string, flags: number, meta: string,
];

export const PART_COLUMNS = "message_id, kind, text_start, text_end, data, meta";
export type PartTuple = [messageId: number, kind: string, start: number | null, end: number | null, data: string | null, meta: string | null];

export function toPart(row: PartTuple): StoredPart {
  return { kind: row[1] as PartKind, start: row[2], end: row[3], data: row[4], meta: row[5] };
}

export function toMessage(row: MessageTuple, parts: StoredPart[]): MessageRecord {
  return {
    messageId: row[0],
    conversationId: row[1],
    seq: row[2],
    role: row[3],
    content: row[4],
    tokenCount: row[5],
    createdAt: row[6],
    identityKey: row[7],
    flags: row[8],
    meta: row[9],
    parts,
  };
}

export const CONTEXT_ITEM_COLUMNS = "ordinal, message_id, summary_id, token_count, flags";
export type ContextItemTuple = [ordinal: number, messageId: number | null, summaryId: number | null, tokenCount: number, flags: number];

export function toContextItem(row: ContextItemTuple): ContextItemRecord {
  return { ordinal: row[0], messageId: row[1], summaryRowId: row[2], tokenCount: row[3], flags: row[4] };
}

export interface SummaryRow {
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

export function toSummary(row: SummaryRow, parentSummaryIds: string[]): SummaryRecord {
  return {
    rowId: row.id,
    summaryId: row.summary_id,
    conversationId: row.conversation_id,
    kind: row.kind as SummaryKind,
    depth: row.depth,
    content: row.content,
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

/** Rows grouped by their first column (a parent's id), each group in row order, mapped by `map`. */
export function groupBy<T extends readonly [number, ...unknown[]], R>(rows: readonly T[], map: (row: T) => R): Map<number, R[]> {
  const groups = new Map<number, R[]>();
  for (const row of rows) {
    const list = groups.get(row[0]);
    if (list) list.push(map(row));
    else groups.set(row[0], [map(row)]);
  }
  return groups;
}
