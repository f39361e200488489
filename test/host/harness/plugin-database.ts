/**
 * Read-only views of the plugin's SQLite database for assertions: what LCM stored for a session key (the host
 * may give one key several session ids over time, e.g. after /new). Each query opens its own read-only
 * connection, so it sees everything the gateway committed and never holds a lock across a turn.
 */
import { DatabaseSync } from "node:sqlite";
import { resolveRecordedPath } from "../../../src/sqlite/stored-file-path.js";

export interface StoredMessage {
  conversationId: number;
  seq: number;
  role: string;
  content: string;
  identityKey: string;
}

export interface StoredSummary {
  conversationId: number;
  summaryId: string;
  kind: string;
  depth: number;
  content: string;
  tokenCount: number;
}

export interface StoredConversation {
  conversationId: number;
  sessionId: string;
  sessionKey: string | null;
  messageCount: number;
  /** What the assembled context costs now, and the budget of the last turn's first assemble. */
  contextTokens: number;
  lastTokenBudget: number | null;
  bootstrapState: unknown;
  lastCompaction: { trigger?: string; compacted?: boolean; reason?: string } | null;
}

export interface StoredLargeFile {
  fileId: string;
  fileName: string | null;
  byteSize: number;
  tokenCount: number;
  storagePath: string;
}

/** What retention left in the database: its archive files and the messages it emptied. */
export interface StoredRetention {
  /** One entry per archive file (retention records a row per transaction; they are added up here). */
  archives: { path: string; kind: string; messageCount: number; done: boolean }[];
  /** Messages emptied to a stub that names its archive. */
  stubs: number;
  /** Stubs that still hold text or meta (expected: none). */
  stubsWithContent: number;
  /** Stubs per session key of their conversation. */
  stubsBySessionKey: Record<string, number>;
}

export class PluginDatabase {
  constructor(readonly path: string) {}

  conversations(sessionKey: string): StoredConversation[] {
    return this.query(
      `SELECT conversation_id, session_id, session_key, message_count, context_tokens, last_token_budget,
              bootstrap_state, last_compaction
         FROM conversations WHERE session_key = ? ORDER BY conversation_id`,
      sessionKey,
    ).map((row) => ({
      conversationId: Number(row.conversation_id),
      sessionId: String(row.session_id),
      sessionKey: row.session_key === null ? null : String(row.session_key),
      messageCount: Number(row.message_count),
      contextTokens: Number(row.context_tokens),
      lastTokenBudget: row.last_token_budget === null ? null : Number(row.last_token_budget),
      bootstrapState: parseJson(row.bootstrap_state),
      lastCompaction: parseJson(row.last_compaction) as StoredConversation["lastCompaction"],
    }));
  }

  /** The conversation of a session marked ended (its host session deleted or gone), if any. */
  endedConversation(sessionKey: string): { conversationId: number; endReason: string } | null {
    const [row] = this.query(
      "SELECT conversation_id, end_reason FROM conversations WHERE session_key = ? AND ended_at IS NOT NULL", sessionKey,
    );
    return row ? { conversationId: Number(row.conversation_id), endReason: String(row.end_reason) } : null;
  }

  messages(sessionKey: string): StoredMessage[] {
    return this.query(
      `SELECT m.conversation_id, m.seq, m.role, m.content, m.identity_key
         FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
        WHERE c.session_key = ? ORDER BY m.conversation_id, m.seq`,
      sessionKey,
    ).map((row) => ({
      conversationId: Number(row.conversation_id),
      seq: Number(row.seq),
      role: String(row.role),
      content: String(row.content),
      identityKey: String(row.identity_key),
    }));
  }

  summaries(sessionKey: string): StoredSummary[] {
    return this.query(
      `SELECT s.conversation_id, s.summary_id, s.kind, s.depth, s.content, s.token_count
         FROM summaries s JOIN conversations c ON c.conversation_id = s.conversation_id
        WHERE c.session_key = ? ORDER BY s.id`,
      sessionKey,
    ).map((row) => ({
      conversationId: Number(row.conversation_id),
      summaryId: String(row.summary_id),
      kind: String(row.kind),
      depth: Number(row.depth),
      content: String(row.content),
      tokenCount: Number(row.token_count),
    }));
  }

  largeFiles(sessionKey: string): StoredLargeFile[] {
    return this.query(
      `SELECT f.file_id, f.file_name, f.byte_size, f.token_count, f.storage_path
         FROM large_files f JOIN conversations c ON c.conversation_id = f.conversation_id
        WHERE c.session_key = ? ORDER BY f.created_at`,
      sessionKey,
    ).map((row) => ({
      fileId: String(row.file_id),
      fileName: row.file_name === null ? null : String(row.file_name),
      byteSize: Number(row.byte_size),
      tokenCount: Number(row.token_count),
      storagePath: resolveRecordedPath(this.path, String(row.storage_path)),
    }));
  }

  retention(): StoredRetention {
    const archives = this.query(
      `SELECT path, kind, sum(message_count) AS message_count, min(state = 'done') AS done
         FROM retention_archives GROUP BY path, kind ORDER BY min(archive_id)`,
    ).map((row) => ({ path: String(row.path), kind: String(row.kind), messageCount: Number(row.message_count), done: Number(row.done) === 1 }));
    const [stubs] = this.query(
      `SELECT count(*) AS stubs, coalesce(sum(content <> '' OR meta <> '{}'), 0) AS with_content
         FROM messages WHERE archive_id IS NOT NULL`,
    );
    const bySessionKey = this.query(
      `SELECT c.session_key, count(*) AS stubs FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
        WHERE m.archive_id IS NOT NULL GROUP BY c.session_key`,
    );
    return {
      archives, stubs: Number(stubs!.stubs), stubsWithContent: Number(stubs!.with_content),
      stubsBySessionKey: Object.fromEntries(bySessionKey.map((row) => [String(row.session_key), Number(row.stubs)])),
    };
  }

  /** The session's live context in order: each item a raw message or a summary, with its tokens. */
  contextItems(sessionKey: string): { kind: "message" | "summary"; tokens: number }[] {
    return this.query(
      `SELECT i.message_id, i.token_count FROM context_items i JOIN conversations c ON c.conversation_id = i.conversation_id
        WHERE c.session_key = ? AND c.archived_at IS NULL ORDER BY i.ordinal`,
      sessionKey,
    ).map((row) => ({ kind: row.message_id === null ? "summary" : "message", tokens: Number(row.token_count) }));
  }

  private query(sql: string, ...params: (string | number)[]): Record<string, unknown>[] {
    const db = new DatabaseSync(this.path, { readOnly: true });
    try {
      return db.prepare(sql).all(...params).map((row) => ({ ...row }));
    } finally {
      db.close();
    }
  }
}

function parseJson(value: unknown): unknown {
  if (typeof value !== "string") return value ?? null;
  try {
    return JSON.parse(value);
  } catch {
    return value; // not JSON: hand the raw text to the assertion
  }
}
