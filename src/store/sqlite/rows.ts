/**
 * Row shapes of the SQLite schema and their mapping to records. Only the SQLite store imports this file.
 */
import type { PartKind, StoredPart } from "../../messages/message-codec.js";
import type {
  BootstrapState,
  CompactionOutcome,
  ContextItemRecord,
  ConversationRecord,
  FileId,
  MessageRecord,
  SummaryKind,
  SummaryLevel,
  SummaryRecord,
} from "../../records.js";

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
  bootstrap_state: string | null;
  last_compaction: string | null;
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
    bootstrapState: row.bootstrap_state ? (JSON.parse(row.bootstrap_state) as BootstrapState) : null,
    lastCompaction: row.last_compaction ? (JSON.parse(row.last_compaction) as CompactionOutcome) : null,
  };
}

export interface MessageRow {
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

export interface PartRow {
  message_id: number;
  kind: string;
  text_start: number | null;
  text_end: number | null;
  data: string | null;
  meta: string | null;
}

export function toPart(row: PartRow): StoredPart {
  return { kind: row.kind as PartKind, start: row.text_start, end: row.text_end, data: row.data, meta: row.meta };
}

export function toMessage(row: MessageRow, parts: StoredPart[]): MessageRecord {
  return {
    messageId: row.message_id,
    conversationId: row.conversation_id,
    seq: row.seq,
    role: row.role,
    content: row.content,
    tokenCount: row.token_count,
    createdAt: row.created_at,
    identityKey: row.identity_key,
    flags: row.flags,
    meta: row.meta,
    parts,
  };
}

export interface ContextItemRow {
  ordinal: number;
  message_id: number | null;
  summary_id: number | null;
  token_count: number;
  flags: number;
}

export function toContextItem(row: ContextItemRow): ContextItemRecord {
  return {
    ordinal: row.ordinal,
    messageId: row.message_id,
    summaryRowId: row.summary_id,
    tokenCount: row.token_count,
    flags: row.flags,
  };
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
