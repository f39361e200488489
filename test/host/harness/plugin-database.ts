/**
 * Read-only views of the plugin's database for assertions: what LCM stored for a session key (the host may give one
 * key several session ids over time, e.g. after /new). The same SQL runs on either backend the plugin was configured
 * with: the SQLite file (`databasePath`), each query on its own read-only connection, so it sees everything the
 * gateway committed and never holds a lock across a turn; or the PostgreSQL database (`databaseUrl`), through one
 * connection of the suite's own that never migrates the schema.
 */
import { existsSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import type { Pool } from "pg";
import { fromPgText, redactUrl } from "../../../src/postgres/pg-database.js";
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

/** What the last assemble of a session measured (conversations.last_assembly). */
export interface AssemblyFigures {
  hostBudgetTokens: number;
  toolCount: number;
  promptTokens: number;
  budgetTokens: number;
  assembledTokens: number;
  floor: string;
}

export class PluginDatabase {
  private pool: Pool | null = null;

  /**
   * `path` is the plugin's databasePath (its files directory lies beside it on either backend); `url`, when given,
   * is the PostgreSQL database the plugin stores in instead.
   */
  constructor(readonly path: string, readonly url: string | null = null) {}

  get backend(): "sqlite" | "postgres" {
    return this.url === null ? "sqlite" : "postgres";
  }

  /** Where the plugin says it stores: the file's path, or the URL without its password. */
  get location(): string {
    return this.url === null ? this.path : redactUrl(this.url);
  }

  /** Whether the plugin has created its database (the file, or the schema in the PostgreSQL database) yet. */
  async exists(): Promise<boolean> {
    if (this.url === null) return existsSync(this.path);
    const [row] = await this.query("SELECT to_regclass('conversations') IS NOT NULL AS found");
    return row?.found === true;
  }

  async conversations(sessionKey: string): Promise<StoredConversation[]> {
    return (await this.query(
      `SELECT conversation_id, session_id, session_key, message_count, context_tokens, last_token_budget,
              bootstrap_state, last_compaction
         FROM conversations WHERE session_key = ? ORDER BY conversation_id`,
      sessionKey,
    )).map((row) => ({
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
  async endedConversation(sessionKey: string): Promise<{ conversationId: number; endReason: string } | null> {
    const [row] = await this.query(
      "SELECT conversation_id, end_reason FROM conversations WHERE session_key = ? AND ended_at IS NOT NULL", sessionKey,
    );
    return row ? { conversationId: Number(row.conversation_id), endReason: String(row.end_reason) } : null;
  }

  async messages(sessionKey: string): Promise<StoredMessage[]> {
    return (await this.query(
      `SELECT m.conversation_id, m.seq, m.role, m.content, m.identity_key
         FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
        WHERE c.session_key = ? ORDER BY m.conversation_id, m.seq`,
      sessionKey,
    )).map((row) => ({
      conversationId: Number(row.conversation_id),
      seq: Number(row.seq),
      role: String(row.role),
      content: this.text(row.content),
      identityKey: String(row.identity_key),
    }));
  }

  async summaries(sessionKey: string): Promise<StoredSummary[]> {
    return (await this.query(
      `SELECT s.conversation_id, s.summary_id, s.kind, s.depth, s.content, s.token_count
         FROM summaries s JOIN conversations c ON c.conversation_id = s.conversation_id
        WHERE c.session_key = ? ORDER BY s.id`,
      sessionKey,
    )).map((row) => ({
      conversationId: Number(row.conversation_id),
      summaryId: String(row.summary_id),
      kind: String(row.kind),
      depth: Number(row.depth),
      content: this.text(row.content),
      tokenCount: Number(row.token_count),
    }));
  }

  async largeFiles(sessionKey: string): Promise<StoredLargeFile[]> {
    return (await this.query(
      `SELECT f.file_id, f.file_name, f.byte_size, f.token_count, f.storage_path
         FROM large_files f JOIN conversations c ON c.conversation_id = f.conversation_id
        WHERE c.session_key = ? ORDER BY f.created_at`,
      sessionKey,
    )).map((row) => ({
      fileId: String(row.file_id),
      fileName: row.file_name === null ? null : String(row.file_name),
      byteSize: Number(row.byte_size),
      tokenCount: Number(row.token_count),
      storagePath: resolveRecordedPath(this.path, String(row.storage_path)),
    }));
  }

  async retention(): Promise<StoredRetention> {
    const archives = (await this.query(
      `SELECT path, kind, sum(message_count) AS message_count, min(CASE WHEN state = 'done' THEN 1 ELSE 0 END) AS done
         FROM retention_archives GROUP BY path, kind ORDER BY min(archive_id)`,
    )).map((row) => ({ path: String(row.path), kind: String(row.kind), messageCount: Number(row.message_count), done: Number(row.done) === 1 }));
    const [stubs] = await this.query(
      `SELECT count(*) AS stubs, coalesce(sum(CASE WHEN content <> '' OR meta <> '{}' THEN 1 ELSE 0 END), 0) AS with_content
         FROM messages WHERE archive_id IS NOT NULL`,
    );
    const bySessionKey = await this.query(
      `SELECT c.session_key, count(*) AS stubs FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
        WHERE m.archive_id IS NOT NULL GROUP BY c.session_key`,
    );
    return {
      archives, stubs: Number(stubs!.stubs), stubsWithContent: Number(stubs!.with_content),
      stubsBySessionKey: Object.fromEntries(bySessionKey.map((row) => [String(row.session_key), Number(row.stubs)])),
    };
  }

  /** The session's live context in order: each item a raw message or a summary, with its tokens. */
  async contextItems(sessionKey: string): Promise<{ kind: "message" | "summary"; tokens: number }[]> {
    return (await this.query(
      `SELECT i.message_id, i.token_count FROM context_items i JOIN conversations c ON c.conversation_id = i.conversation_id
        WHERE c.session_key = ? AND c.archived_at IS NULL ORDER BY i.ordinal`,
      sessionKey,
    )).map((row) => ({ kind: row.message_id === null ? "summary" : "message", tokens: Number(row.token_count) }));
  }

  /** What the session's latest conversation's last assemble measured, if it ran. */
  async lastAssembly(sessionKey: string): Promise<AssemblyFigures | null> {
    const [row] = await this.query(
      "SELECT last_assembly FROM conversations WHERE session_key = ? ORDER BY conversation_id DESC LIMIT 1", sessionKey,
    );
    return row?.last_assembly ? (JSON.parse(String(row.last_assembly)) as AssemblyFigures) : null;
  }

  /** Ends the PostgreSQL connection, if one was opened. */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.end();
  }

  /** Stored text as the plugin wrote it (PostgreSQL keeps NUL escaped: see toPgText). */
  private text(value: unknown): string {
    return this.url === null ? String(value) : fromPgText(String(value));
  }

  /** Runs one read on the configured backend; `?` placeholders become `$1`, `$2`… on PostgreSQL. */
  private async query(sql: string, ...params: (string | number)[]): Promise<Record<string, unknown>[]> {
    if (this.url !== null) {
      let index = 0;
      const pool = await this.postgresPool();
      return (await pool.query(sql.replace(/\?/g, () => `$${++index}`), params)).rows as Record<string, unknown>[];
    }
    const db = new DatabaseSync(this.path, { readOnly: true });
    try {
      return db.prepare(sql).all(...params).map((row) => ({ ...row }));
    } finally {
      db.close();
    }
  }

  private async postgresPool(): Promise<Pool> {
    if (this.pool) return this.pool;
    const pg = (await import("pg")).default;
    this.pool = new pg.Pool({ connectionString: this.url!, max: 1, application_name: "lcm-host-test", allowExitOnIdle: true });
    this.pool.on("error", () => {}); // an idle connection the server closed: the next query opens a new one
    return this.pool;
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
