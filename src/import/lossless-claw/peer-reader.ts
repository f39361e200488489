/**
 * Reads a lossless-claw database (either schema line) through one read-only connection: conversations, messages
 * in pages with their parts, summaries with their edges, context items and large-file rows. Columns a line lacks
 * are absent from the rows (SELECT *), never guessed. Rows are copied out of node:sqlite's null-prototype objects
 * into the Peer* shapes below; the import never sees SQL.
 */
import { createHash } from "node:crypto";
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import type { PeerSchema } from "./peer-schema.js";

export interface PeerConversation {
  conversationId: number;
  sessionId: string;
  sessionKey: string | null;
  /** 1.x: a conversation /reset archived is inactive; 0.x has one conversation per session, always active. */
  active: boolean;
  archivedAt: string | null;
  archiveCause: string | null;
  title: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface PeerMessage {
  messageId: number;
  conversationId: number;
  seq: number;
  role: string;
  content: string;
  tokenCount: number;
  createdAt: string;
  /** Columns of later versions that have no place in LCM's model (identity_hash, transcript_entry_id, …), when set. */
  extras: Record<string, unknown>;
}

export interface PeerPart {
  partId: string;
  messageId: number;
  partType: string;
  ordinal: number;
  textContent: string | null;
  toolCallId: string | null;
  toolName: string | null;
  toolInput: string | null;
  toolOutput: string | null;
  metadata: string | null;
  /** Every other non-null column of the row (tool_status, patch_files, step_cost, …). */
  extras: Record<string, unknown>;
}

export interface PeerSummary {
  summaryId: string;
  conversationId: number;
  kind: string;
  depth: number;
  content: string;
  tokenCount: number;
  createdAt: string;
  fileIds: string;
  /** Columns LCM derives itself or has no place for (earliest_at, descendant_count, model, …), when set. */
  extras: Record<string, unknown>;
}

export interface PeerContextItem {
  ordinal: number;
  itemType: string;
  messageId: number | null;
  summaryId: string | null;
}

export interface PeerLargeFile {
  fileId: string;
  conversationId: number;
  fileName: string | null;
  mimeType: string | null;
  byteSize: number | null;
  storageUri: string;
  explorationSummary: string | null;
  createdAt: string;
}

export interface PeerCounts {
  conversations: number;
  messages: number;
  messageParts: number;
  summaries: number;
  summaryMessages: number;
  summaryParents: number;
  contextItems: number;
  largeFiles: number;
}

const MESSAGE_FIELDS = new Set(["message_id", "conversation_id", "seq", "role", "content", "token_count", "created_at"]);
const PART_FIELDS = new Set([
  "part_id", "message_id", "session_id", "part_type", "ordinal", "text_content", "tool_call_id", "tool_name", "tool_input",
  "tool_output", "metadata",
]);
const SUMMARY_FIELDS = new Set(["summary_id", "conversation_id", "kind", "depth", "content", "token_count", "created_at", "file_ids"]);

type Row = Record<string, unknown>;

export class PeerReader {
  private readonly statements = new Map<string, StatementSync>();

  constructor(private readonly database: DatabaseSync, readonly schema: PeerSchema) {}

  /** Identifies the source whatever its path: a hash of its oldest conversation (rows are only ever added). */
  fingerprint(): string {
    const first = this.get("SELECT conversation_id, session_id, created_at FROM conversations ORDER BY conversation_id LIMIT 1");
    const text = first ? `${String(first.conversation_id)}\u0000${String(first.session_id)}\u0000${String(first.created_at)}` : "empty";
    return createHash("sha256").update(text).digest("hex").slice(0, 32);
  }

  counts(): PeerCounts {
    const count = (table: keyof PeerSchema["columns"]) =>
      this.schema.columns[table].size === 0 ? 0 : Number(this.get(`SELECT count(*) AS n FROM ${table}`)!.n);
    return {
      conversations: count("conversations"), messages: count("messages"), messageParts: count("message_parts"),
      summaries: count("summaries"), summaryMessages: count("summary_messages"), summaryParents: count("summary_parents"),
      contextItems: count("context_items"), largeFiles: count("large_files"),
    };
  }

  /** Rows in tables the import does not read (pending batches, focus briefs, …), by table, when any. */
  otherTableRows(): Record<string, number> {
    const result: Record<string, number> = {};
    for (const table of this.schema.otherTables) {
      const rows = Number(this.get(`SELECT count(*) AS n FROM "${table.replace(/"/g, '""')}"`)!.n);
      if (rows > 0) result[table] = rows;
    }
    return result;
  }

  conversations(): PeerConversation[] {
    return this.all("SELECT * FROM conversations ORDER BY conversation_id").map((row) => ({
      conversationId: Number(row.conversation_id),
      sessionId: String(row.session_id),
      sessionKey: stringOrNull(row.session_key),
      active: row.active === undefined || row.active === null || Number(row.active) === 1,
      archivedAt: stringOrNull(row.archived_at),
      archiveCause: stringOrNull(row.archive_cause),
      title: stringOrNull(row.title),
      createdAt: String(row.created_at),
      updatedAt: String(row.updated_at),
    }));
  }

  messageCount(conversationId: number): number {
    return Number(this.get("SELECT count(*) AS n FROM messages WHERE conversation_id = ?", conversationId)!.n);
  }

  /** The next page of a conversation's messages after (seq, message_id), in that order. */
  messagesAfter(conversationId: number, afterSeq: number, afterMessageId: number, limit: number): PeerMessage[] {
    return this.all(
      `SELECT * FROM messages WHERE conversation_id = ? AND (seq > ? OR (seq = ? AND message_id > ?))
       ORDER BY seq, message_id LIMIT ?`,
      conversationId, afterSeq, afterSeq, afterMessageId, limit,
    ).map((row) => ({
      messageId: Number(row.message_id),
      conversationId: Number(row.conversation_id),
      seq: Number(row.seq),
      role: String(row.role),
      content: String(row.content ?? ""),
      tokenCount: Number(row.token_count ?? 0),
      createdAt: String(row.created_at),
      extras: extrasOf(row, MESSAGE_FIELDS),
    }));
  }

  /** The parts of the given messages, by message id, in ordinal order. */
  partsOf(messageIds: readonly number[]): Map<number, PeerPart[]> {
    const parts = new Map<number, PeerPart[]>();
    if (messageIds.length === 0 || this.schema.columns.message_parts.size === 0) return parts;
    const rows = this.all(
      "SELECT * FROM message_parts WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, ordinal",
      JSON.stringify(messageIds),
    );
    for (const row of rows) {
      const part: PeerPart = {
        partId: String(row.part_id),
        messageId: Number(row.message_id),
        partType: String(row.part_type),
        ordinal: Number(row.ordinal),
        textContent: stringOrNull(row.text_content),
        toolCallId: stringOrNull(row.tool_call_id),
        toolName: stringOrNull(row.tool_name),
        toolInput: stringOrNull(row.tool_input),
        toolOutput: stringOrNull(row.tool_output),
        metadata: stringOrNull(row.metadata),
        extras: extrasOf(row, PART_FIELDS),
      };
      const list = parts.get(part.messageId);
      if (list) list.push(part);
      else parts.set(part.messageId, [part]);
    }
    return parts;
  }

  summaries(conversationId: number): PeerSummary[] {
    return this.all("SELECT * FROM summaries WHERE conversation_id = ? ORDER BY created_at, summary_id", conversationId).map((row) => ({
      summaryId: String(row.summary_id),
      conversationId: Number(row.conversation_id),
      kind: String(row.kind),
      depth: Number(row.depth ?? 0),
      content: String(row.content ?? ""),
      tokenCount: Number(row.token_count ?? 0),
      createdAt: String(row.created_at),
      fileIds: String(row.file_ids ?? "[]"),
      extras: extrasOf(row, SUMMARY_FIELDS),
    }));
  }

  /**
   * Leaf summary → source message edges of a conversation's summaries, in each summary's ordinal order: the page
   * after `after` (a leaf covers ~100 messages, so a long conversation has as many edges as messages).
   */
  summaryMessagesAfter(
    conversationId: number, after: { summaryId: string; ordinal: number; messageId: number } | null, limit: number,
  ): { summaryId: string; messageId: number; ordinal: number }[] {
    if (this.schema.columns.summary_messages.size === 0) return [];
    return this.all(
      `SELECT sm.summary_id, sm.message_id, sm.ordinal FROM summary_messages sm JOIN summaries s ON s.summary_id = sm.summary_id
       WHERE s.conversation_id = ? AND (sm.summary_id, sm.ordinal, sm.message_id) > (?, ?, ?)
       ORDER BY sm.summary_id, sm.ordinal, sm.message_id LIMIT ?`,
      conversationId, after?.summaryId ?? "", after?.ordinal ?? Number.MIN_SAFE_INTEGER, after?.messageId ?? Number.MIN_SAFE_INTEGER, limit,
    ).map((row) => ({ summaryId: String(row.summary_id), messageId: Number(row.message_id), ordinal: Number(row.ordinal) }));
  }

  /** Condensed summary → the summaries it condensed (the peer calls them parents), in ordinal order. */
  summaryParents(conversationId: number): { summaryId: string; parentSummaryId: string; ordinal: number }[] {
    if (this.schema.columns.summary_parents.size === 0) return [];
    return this.all(
      `SELECT sp.summary_id, sp.parent_summary_id, sp.ordinal FROM summary_parents sp JOIN summaries s ON s.summary_id = sp.summary_id
       WHERE s.conversation_id = ? ORDER BY sp.summary_id, sp.ordinal, sp.parent_summary_id`,
      conversationId,
    ).map((row) => ({ summaryId: String(row.summary_id), parentSummaryId: String(row.parent_summary_id), ordinal: Number(row.ordinal) }));
  }

  contextItems(conversationId: number): PeerContextItem[] {
    return this.all("SELECT ordinal, item_type, message_id, summary_id FROM context_items WHERE conversation_id = ? ORDER BY ordinal", conversationId)
      .map((row) => ({
        ordinal: Number(row.ordinal),
        itemType: String(row.item_type),
        messageId: row.message_id === null ? null : Number(row.message_id),
        summaryId: stringOrNull(row.summary_id),
      }));
  }

  largeFiles(conversationId: number): PeerLargeFile[] {
    if (this.schema.columns.large_files.size === 0) return [];
    return this.all("SELECT * FROM large_files WHERE conversation_id = ? ORDER BY created_at, file_id", conversationId).map((row) => ({
      fileId: String(row.file_id),
      conversationId: Number(row.conversation_id),
      fileName: stringOrNull(row.file_name),
      mimeType: stringOrNull(row.mime_type),
      byteSize: row.byte_size === null || row.byte_size === undefined ? null : Number(row.byte_size),
      storageUri: String(row.storage_uri),
      explorationSummary: stringOrNull(row.exploration_summary),
      createdAt: String(row.created_at),
    }));
  }

  /** Each statement is prepared once per reader. */
  private statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    const row = this.statement(sql).get(...params) as Row | undefined;
    return row ? { ...row } : undefined;
  }

  private all(sql: string, ...params: SQLInputValue[]): Row[] {
    return (this.statement(sql).all(...params) as Row[]).map((row) => ({ ...row }));
  }
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : value === null || value === undefined ? null : String(value);
}

function extrasOf(row: Row, known: ReadonlySet<string>): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (!known.has(key) && value !== null && value !== undefined) extras[key] = value;
  }
  return extras;
}
