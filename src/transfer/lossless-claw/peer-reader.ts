/**
 * Reads a lossless-claw database (either schema line) through one read-only connection: conversations, messages
 * in pages with their parts, summaries with their edges, context items and large-file rows. Columns a line lacks
 * are absent from the rows (SELECT *), never guessed. Rows are copied out of node:sqlite's null-prototype objects
 * into the Peer* shapes below; the import never sees SQL. Text SQLite holds as a BLOB (a writer that bound a
 * Buffer) is read as UTF-8, never as a list of byte values, and counted in `blobTexts` for the report.
 */
import { createHash } from "node:crypto";
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import type { PeerSchema } from "./peer-schema.js";

export interface PeerConversation {
  conversationId: number;
  /**
   * Who this conversation is, whatever else the file holds: a hash of its id, session id and creation time. The peer
   * never reuses a conversation id (AUTOINCREMENT), so the same conversation has the same identity in a copy of the
   * file, and after the peer pruned other conversations.
   */
  identity: string;
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

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });
const LENIENT_UTF8 = new TextDecoder("utf-8");

export class PeerReader {
  private readonly statements = new Map<string, StatementSync>();

  constructor(private readonly database: DatabaseSync, readonly schema: PeerSchema) {}

  /** Rows with a text column that held a BLOB (read as UTF-8), and those of them that were not valid UTF-8. */
  readonly blobTexts = { rows: new Set<string>(), invalid: new Set<string>() };

  /**
   * Names the file whatever its path: the identity of its oldest conversation. It changes when the peer prunes that
   * conversation; the import then finds the source again by its conversations' identities (import-store.ts).
   */
  fingerprint(): string {
    const first = this.get("SELECT conversation_id, session_id, created_at FROM conversations ORDER BY conversation_id LIMIT 1");
    return first ? conversationIdentity(first.conversation_id, this.text(first.session_id, "conversation"), this.text(first.created_at, "conversation")) : hash("empty");
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
    return this.all("SELECT * FROM conversations ORDER BY conversation_id").map((row) => {
      const where = `conversation ${String(row.conversation_id)}`;
      const sessionId = this.text(row.session_id, where);
      const createdAt = this.text(row.created_at, where);
      return {
        conversationId: Number(row.conversation_id),
        identity: conversationIdentity(row.conversation_id, sessionId, createdAt),
        sessionId,
        sessionKey: this.textOrNull(row.session_key, where),
        active: row.active === undefined || row.active === null || Number(row.active) === 1,
        archivedAt: this.textOrNull(row.archived_at, where),
        archiveCause: this.textOrNull(row.archive_cause, where),
        title: this.textOrNull(row.title, where),
        createdAt,
        updatedAt: this.text(row.updated_at, where),
      };
    });
  }

  messageCount(conversationId: number): number {
    return Number(this.get("SELECT count(*) AS n FROM messages WHERE conversation_id = ?", conversationId)!.n);
  }

  /**
   * Reads, inside SQLite, every value of the next `limit` messages after (seq, message_id) and of their parts, as
   * messagesAfter and partsOf would (each text to its end, overflow pages included), without copying a row out:
   * throws what reading them throws. Returns how many messages it read and the last one's key.
   */
  checkMessagesAfter(conversationId: number, afterSeq: number, afterMessageId: number, limit: number): { count: number; last: { seq: number; messageId: number } | null } {
    const after = "conversation_id = ?1 AND (seq > ?2 OR (seq = ?2 AND message_id > ?3)) ORDER BY seq, message_id";
    const read = this.get(
      `SELECT count(*) AS n, sum(${lengthsOf(this.schema.columns.messages)}) AS chars FROM (SELECT * FROM messages WHERE ${after} LIMIT ?4)`,
      conversationId, afterSeq, afterMessageId, limit,
    )!;
    const count = Number(read.n);
    if (count === 0) return { count, last: null };
    if (this.schema.columns.message_parts.size > 0) {
      this.get(
        `SELECT sum(${lengthsOf(this.schema.columns.message_parts)}) AS chars FROM message_parts
         WHERE message_id IN (SELECT message_id FROM messages WHERE ${after} LIMIT ?4)`,
        conversationId, afterSeq, afterMessageId, limit,
      );
    }
    // The last of the page, from the (conversation_id, seq) index alone.
    const last = this.get(`SELECT seq, message_id FROM messages WHERE ${after} LIMIT 1 OFFSET ?4`, conversationId, afterSeq, afterMessageId, count - 1)!;
    return { count, last: { seq: Number(last.seq), messageId: Number(last.message_id) } };
  }

  /**
   * Reads, inside SQLite, every value of the conversation's summaries, summary edges, context items and stored-file
   * rows (what the summaries, context and files phases read), without copying a row out; throws what reading throws.
   */
  checkConversationRest(conversationId: number): void {
    const { columns } = this.schema;
    this.get(`SELECT sum(${lengthsOf(columns.summaries)}) AS chars FROM summaries WHERE conversation_id = ?`, conversationId);
    this.get(`SELECT sum(${lengthsOf(columns.context_items)}) AS chars FROM context_items WHERE conversation_id = ?`, conversationId);
    if (columns.large_files.size > 0) this.get(`SELECT sum(${lengthsOf(columns.large_files)}) AS chars FROM large_files WHERE conversation_id = ?`, conversationId);
    if (columns.summary_parents.size > 0) {
      this.get(
        `SELECT sum(${lengthsOf(columns.summary_parents, "e")}) AS chars FROM summary_parents e WHERE e.summary_id IN (SELECT summary_id FROM summaries WHERE conversation_id = ?)`,
        conversationId,
      );
    }
  }

  /**
   * Reads, inside SQLite, the next `limit` leaf → message edges after `after` (as summaryMessagesAfter pages them, a
   * long conversation holding as many as it has messages), copying nothing out; returns the last one's key, null at
   * the end. Throws what reading throws.
   */
  checkSummaryMessagesAfter(
    conversationId: number, after: { summaryId: string; ordinal: number; messageId: number } | null, limit: number,
  ): { summaryId: string; ordinal: number; messageId: number } | null {
    if (this.schema.columns.summary_messages.size === 0) return null;
    const page = `FROM summary_messages sm JOIN summaries s ON s.summary_id = sm.summary_id
      WHERE s.conversation_id = ?1 AND (sm.summary_id, sm.ordinal, sm.message_id) > (?2, ?3, ?4) ORDER BY sm.summary_id, sm.ordinal, sm.message_id`;
    const params = [conversationId, after?.summaryId ?? "", after?.ordinal ?? Number.MIN_SAFE_INTEGER, after?.messageId ?? Number.MIN_SAFE_INTEGER] as const;
    const read = this.get(`SELECT count(*) AS n, sum(${lengthsOf(this.schema.columns.summary_messages)}) AS chars FROM (SELECT sm.* ${page} LIMIT ?5)`, ...params, limit)!;
    const count = Number(read.n);
    if (count === 0) return null;
    const last = this.get(`SELECT sm.summary_id, sm.ordinal, sm.message_id ${page} LIMIT 1 OFFSET ?5`, ...params, count - 1)!;
    return { summaryId: this.text(last.summary_id, "summary_messages"), ordinal: Number(last.ordinal), messageId: Number(last.message_id) };
  }

  /** The next page of a conversation's messages after (seq, message_id), in that order. */
  messagesAfter(conversationId: number, afterSeq: number, afterMessageId: number, limit: number): PeerMessage[] {
    return this.all(
      `SELECT * FROM messages WHERE conversation_id = ? AND (seq > ? OR (seq = ? AND message_id > ?))
       ORDER BY seq, message_id LIMIT ?`,
      conversationId, afterSeq, afterSeq, afterMessageId, limit,
    ).map((row) => {
      const where = `${conversationId}/${String(row.message_id)}`;
      return {
        messageId: Number(row.message_id),
        conversationId: Number(row.conversation_id),
        seq: Number(row.seq),
        role: this.text(row.role, where),
        content: this.text(row.content ?? "", where),
        tokenCount: Number(row.token_count ?? 0),
        createdAt: this.text(row.created_at, where),
        extras: this.extrasOf(row, MESSAGE_FIELDS, where),
      };
    });
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
      const where = `part ${String(row.part_id)}`;
      const part: PeerPart = {
        partId: this.text(row.part_id, where),
        messageId: Number(row.message_id),
        partType: this.text(row.part_type, where),
        ordinal: Number(row.ordinal),
        textContent: this.textOrNull(row.text_content, where),
        toolCallId: this.textOrNull(row.tool_call_id, where),
        toolName: this.textOrNull(row.tool_name, where),
        toolInput: this.textOrNull(row.tool_input, where),
        toolOutput: this.textOrNull(row.tool_output, where),
        metadata: this.textOrNull(row.metadata, where),
        extras: this.extrasOf(row, PART_FIELDS, where),
      };
      const list = parts.get(part.messageId);
      if (list) list.push(part);
      else parts.set(part.messageId, [part]);
    }
    return parts;
  }

  summaries(conversationId: number): PeerSummary[] {
    return this.all("SELECT * FROM summaries WHERE conversation_id = ? ORDER BY created_at, summary_id", conversationId).map((row) => {
      const where = `summary ${String(row.summary_id)}`;
      return {
        summaryId: this.text(row.summary_id, where),
        conversationId: Number(row.conversation_id),
        kind: this.text(row.kind, where),
        depth: Number(row.depth ?? 0),
        content: this.text(row.content ?? "", where),
        tokenCount: Number(row.token_count ?? 0),
        createdAt: this.text(row.created_at, where),
        fileIds: this.text(row.file_ids ?? "[]", where),
        extras: this.extrasOf(row, SUMMARY_FIELDS, where),
      };
    });
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
    ).map((row) => ({ summaryId: this.text(row.summary_id, "summary_messages"), messageId: Number(row.message_id), ordinal: Number(row.ordinal) }));
  }

  /** Condensed summary → the summaries it condensed (the peer calls them parents), in ordinal order. */
  summaryParents(conversationId: number): { summaryId: string; parentSummaryId: string; ordinal: number }[] {
    if (this.schema.columns.summary_parents.size === 0) return [];
    return this.all(
      `SELECT sp.summary_id, sp.parent_summary_id, sp.ordinal FROM summary_parents sp JOIN summaries s ON s.summary_id = sp.summary_id
       WHERE s.conversation_id = ? ORDER BY sp.summary_id, sp.ordinal, sp.parent_summary_id`,
      conversationId,
    ).map((row) => ({
      summaryId: this.text(row.summary_id, "summary_parents"), parentSummaryId: this.text(row.parent_summary_id, "summary_parents"), ordinal: Number(row.ordinal),
    }));
  }

  contextItems(conversationId: number): PeerContextItem[] {
    return this.all("SELECT ordinal, item_type, message_id, summary_id FROM context_items WHERE conversation_id = ? ORDER BY ordinal", conversationId)
      .map((row) => ({
        ordinal: Number(row.ordinal),
        itemType: this.text(row.item_type, `context item ${conversationId}#${String(row.ordinal)}`),
        messageId: row.message_id === null ? null : Number(row.message_id),
        summaryId: this.textOrNull(row.summary_id, `context item ${conversationId}#${String(row.ordinal)}`),
      }));
  }

  largeFiles(conversationId: number): PeerLargeFile[] {
    if (this.schema.columns.large_files.size === 0) return [];
    return this.all("SELECT * FROM large_files WHERE conversation_id = ? ORDER BY created_at, file_id", conversationId).map((row) => {
      const where = `file ${String(row.file_id)}`;
      return {
        fileId: this.text(row.file_id, where),
        conversationId: Number(row.conversation_id),
        fileName: this.textOrNull(row.file_name, where),
        mimeType: this.textOrNull(row.mime_type, where),
        byteSize: row.byte_size === null || row.byte_size === undefined ? null : Number(row.byte_size),
        storageUri: this.text(row.storage_uri, where),
        explorationSummary: this.textOrNull(row.exploration_summary, where),
        createdAt: this.text(row.created_at, where),
      };
    });
  }

  /**
   * A text column's value: text as it is, a BLOB decoded as UTF-8 (invalid sequences become U+FFFD and are counted),
   * a number as its decimal form. `where` names the row for the report.
   */
  private text(value: unknown, where: string): string {
    if (typeof value === "string") return value;
    if (value instanceof Uint8Array) {
      this.blobTexts.rows.add(where);
      try {
        return STRICT_UTF8.decode(value);
      } catch {
        this.blobTexts.invalid.add(where); // not UTF-8: kept readable, with U+FFFD where a byte sequence was not
        return LENIENT_UTF8.decode(value);
      }
    }
    return value === null || value === undefined ? "" : String(value);
  }

  private textOrNull(value: unknown, where: string): string | null {
    return value === null || value === undefined ? null : this.text(value, where);
  }

  /** Every other non-null column of the row; BLOB values that are text are read as text. */
  private extrasOf(row: Row, known: ReadonlySet<string>, where: string): Record<string, unknown> {
    const extras: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) {
      if (known.has(key) || value === null || value === undefined) continue;
      extras[key] = value instanceof Uint8Array ? this.text(value, where) : value;
    }
    return extras;
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

/** `length(a) + length(b) + …` over every column (the summed lengths make SQLite read each value to its end). */
function lengthsOf(columns: ReadonlySet<string>, alias?: string): string {
  const names = [...columns].map((column) => `coalesce(length(${alias ? `${alias}.` : ""}"${column.replace(/"/g, '""')}"), 0)`);
  return names.length > 0 ? names.join(" + ") : "0";
}

/** The identity of a peer conversation (PeerConversation.identity). */
export function conversationIdentity(conversationId: unknown, sessionId: string, createdAt: string): string {
  return hash(`${String(conversationId)}\u0000${sessionId}\u0000${createdAt}`);
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}
