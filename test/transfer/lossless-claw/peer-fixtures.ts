/**
 * lossless-claw databases for the import tests, built the way the peer builds them: its schema as its migration
 * creates it on an empty file (0.1.0, and the 1.x line as of 1.0.0-beta.4: extra columns on messages, summaries,
 * conversations and large_files, and its own bookkeeping tables), then rows written as its stores write them
 * (messages with a plain-text copy, one part per content block whose metadata keeps the original block, summaries,
 * summary edges, context items, large files on disk, tool outputs stored aside). Written from the peer's documented
 * schema and the databases its own code wrote (test/fixtures/lossless-claw/), not its code; the tables' columns are
 * checked against those databases (peer-versions.test.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { AgentMessage } from "../../../src/host/openclaw-types.js";

const CORE_0_1 = `
  CREATE TABLE conversations (
    conversation_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, title TEXT, bootstrapped_at TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT NOT NULL DEFAULT (datetime('now')));
  CREATE TABLE messages (
    message_id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL, role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content TEXT NOT NULL, token_count INTEGER NOT NULL, created_at TEXT NOT NULL DEFAULT (datetime('now')),
    UNIQUE (conversation_id, seq));
  CREATE TABLE summaries (
    summary_id TEXT PRIMARY KEY, conversation_id INTEGER NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')), depth INTEGER NOT NULL DEFAULT 0, content TEXT NOT NULL,
    token_count INTEGER NOT NULL, earliest_at TEXT, latest_at TEXT, descendant_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (datetime('now')), file_ids TEXT NOT NULL DEFAULT '[]');
  CREATE TABLE message_parts (
    part_id TEXT PRIMARY KEY, message_id INTEGER NOT NULL REFERENCES messages (message_id) ON DELETE CASCADE,
    session_id TEXT NOT NULL, part_type TEXT NOT NULL CHECK (part_type IN ('text', 'reasoning', 'tool', 'patch', 'file',
      'subtask', 'compaction', 'step_start', 'step_finish', 'snapshot', 'agent', 'retry')),
    ordinal INTEGER NOT NULL, text_content TEXT, is_ignored INTEGER, is_synthetic INTEGER, tool_call_id TEXT, tool_name TEXT,
    tool_status TEXT, tool_input TEXT, tool_output TEXT, tool_error TEXT, tool_title TEXT, patch_hash TEXT, patch_files TEXT,
    file_mime TEXT, file_name TEXT, file_url TEXT, subtask_prompt TEXT, subtask_desc TEXT, subtask_agent TEXT, step_reason TEXT,
    step_cost REAL, step_tokens_in INTEGER, step_tokens_out INTEGER, snapshot_hash TEXT, compaction_auto INTEGER, metadata TEXT,
    UNIQUE (message_id, ordinal));
  CREATE TABLE summary_messages (
    summary_id TEXT NOT NULL REFERENCES summaries (summary_id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL REFERENCES messages (message_id) ON DELETE RESTRICT, ordinal INTEGER NOT NULL,
    PRIMARY KEY (summary_id, message_id));
  CREATE TABLE summary_parents (
    summary_id TEXT NOT NULL REFERENCES summaries (summary_id) ON DELETE CASCADE,
    parent_summary_id TEXT NOT NULL REFERENCES summaries (summary_id) ON DELETE RESTRICT, ordinal INTEGER NOT NULL,
    PRIMARY KEY (summary_id, parent_summary_id));
  CREATE TABLE context_items (
    conversation_id INTEGER NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE, ordinal INTEGER NOT NULL,
    item_type TEXT NOT NULL CHECK (item_type IN ('message', 'summary')),
    message_id INTEGER REFERENCES messages (message_id) ON DELETE RESTRICT,
    summary_id TEXT REFERENCES summaries (summary_id) ON DELETE RESTRICT, created_at TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (conversation_id, ordinal));
  CREATE TABLE large_files (
    file_id TEXT PRIMARY KEY, conversation_id INTEGER NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    file_name TEXT, mime_type TEXT, byte_size INTEGER, storage_uri TEXT NOT NULL, exploration_summary TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')));
  CREATE INDEX messages_conv_seq_idx ON messages (conversation_id, seq);
  CREATE INDEX message_parts_message_idx ON message_parts (message_id);
  CREATE INDEX context_items_conv_idx ON context_items (conversation_id, ordinal);
  CREATE VIRTUAL TABLE messages_fts USING fts5 (content, tokenize = 'porter unicode61');
  CREATE VIRTUAL TABLE summaries_fts USING fts5 (summary_id UNINDEXED, content, tokenize = 'porter unicode61');
`;

/** What the 1.x line adds to the 0.1 tables (columns its migration probes for and adds) and its own tables. */
const LINE_ONE_ADDITIONS = `
  ALTER TABLE conversations ADD COLUMN session_key TEXT;
  ALTER TABLE conversations ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE conversations ADD COLUMN archived_at TEXT;
  ALTER TABLE conversations ADD COLUMN archive_cause TEXT;
  ALTER TABLE messages ADD COLUMN identity_hash TEXT;
  ALTER TABLE messages ADD COLUMN transcript_entry_id TEXT;
  ALTER TABLE messages ADD COLUMN large_content TEXT;
  ALTER TABLE messages ADD COLUMN stable_event_key TEXT;
  ALTER TABLE summaries ADD COLUMN descendant_token_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE summaries ADD COLUMN source_message_token_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE summaries ADD COLUMN model TEXT NOT NULL DEFAULT 'unknown';
  ALTER TABLE large_files ADD COLUMN line_count INTEGER;
  CREATE UNIQUE INDEX conversations_active_session_key_idx ON conversations (session_key) WHERE session_key IS NOT NULL AND active = 1;
  CREATE TABLE message_transcript_anchor_trust (
    message_id INTEGER PRIMARY KEY REFERENCES messages (message_id) ON DELETE CASCADE, conversation_id INTEGER NOT NULL,
    transcript_entry_id TEXT, trust_state TEXT NOT NULL, source TEXT NOT NULL, reason TEXT, verified_at TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT NOT NULL DEFAULT (datetime('now')));
  CREATE TABLE pending_compaction_batches (
    batch_id TEXT PRIMARY KEY, conversation_id INTEGER NOT NULL, session_key TEXT, status TEXT NOT NULL DEFAULT 'planning',
    source_projection_fingerprint TEXT NOT NULL, compactable_start_ordinal INTEGER NOT NULL, compactable_end_ordinal INTEGER NOT NULL,
    created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT NOT NULL DEFAULT (datetime('now')));
  CREATE TABLE focus_briefs (
    brief_id TEXT PRIMARY KEY, conversation_id INTEGER NOT NULL, session_key TEXT, prompt TEXT NOT NULL, content TEXT NOT NULL,
    status TEXT NOT NULL, created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT NOT NULL DEFAULT (datetime('now')));
  CREATE TABLE lcm_migration_state (step_name TEXT NOT NULL, algorithm_version INTEGER NOT NULL,
    completed_at TEXT NOT NULL DEFAULT (datetime('now')), PRIMARY KEY (step_name, algorithm_version));
  CREATE TABLE turn_advancements (advancement_key TEXT PRIMARY KEY, payload_hash TEXT NOT NULL, session_id TEXT NOT NULL,
    session_key TEXT, admission_entry_id TEXT NOT NULL, terminal_entry_id TEXT NOT NULL, message_count INTEGER NOT NULL,
    committed_at TEXT NOT NULL DEFAULT (datetime('now')));
`;

export type PeerLine = "0.1" | "1.x";

const BASE = Date.UTC(2026, 1, 18, 7, 0, 0);

/** The peer's time format: SQLite datetime text, UTC, whole seconds. */
export function peerTime(millis: number): string {
  return new Date(millis).toISOString().slice(0, 19).replace("T", " ");
}

/** Writes a peer database as the peer's stores do. */
export class PeerWriter {
  readonly db: DatabaseSync;
  private readonly seqs = new Map<number, number>();
  private readonly ordinals = new Map<number, number>();
  private clock = BASE;
  private readonly insertMessage;
  private readonly insertPart;

  constructor(readonly path: string, readonly line: PeerLine) {
    mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    this.db.exec("PRAGMA journal_mode = WAL");
    this.db.exec(CORE_0_1);
    if (line === "1.x") this.db.exec(LINE_ONE_ADDITIONS);
    this.insertMessage = this.db.prepare(
      "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.insertPart = this.db.prepare(
      `INSERT INTO message_parts (part_id, message_id, session_id, part_type, ordinal, text_content, tool_call_id, tool_name, tool_input, metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  conversation(sessionId: string, options: { sessionKey?: string; active?: boolean; archiveCause?: string } = {}): number {
    const created = peerTime(this.clock);
    const result = this.line === "1.x"
      ? this.db.prepare(`INSERT INTO conversations (session_id, session_key, active, archived_at, archive_cause, created_at, updated_at)
          VALUES (?, ?, ?, ?, ?, ?, ?)`).run(sessionId, options.sessionKey ?? null, options.active === false ? 0 : 1,
          options.active === false ? created : null, options.archiveCause ?? null, created, created)
      : this.db.prepare("INSERT INTO conversations (session_id, created_at, updated_at) VALUES (?, ?, ?)").run(sessionId, created, created);
    return Number(result.lastInsertRowid);
  }

  /** Stores one host message as the peer's ingest does: plain-text copy, one part per block keeping the block. */
  message(conversationId: number, message: AgentMessage, options: { inContext?: boolean } = {}): number {
    this.clock += 1_000;
    const seq = (this.seqs.get(conversationId) ?? 0) + 1;
    this.seqs.set(conversationId, seq);
    const role = message.role === "toolResult" ? "tool" : message.role === "user" || message.role === "assistant" || message.role === "system" ? message.role : "assistant";
    const content = typeof message.content === "string" ? message.content
      : Array.isArray(message.content) ? message.content.filter((block) => block?.type === "text").map((block) => block.text as string).join("\n") : "";
    const messageId = Number(this.insertMessage.run(conversationId, seq, role, content, Math.ceil(content.length / 4), peerTime(this.clock)).lastInsertRowid);
    const top = message as Record<string, unknown>;
    const shared: Record<string, unknown> = this.line === "1.x"
      ? { toolCallId: top.toolCallId, toolName: top.toolName, isError: top.isError, ...(message.role === "assistant" ? { modelProvider: top.provider, modelApi: top.api, modelId: top.model } : {}) }
      : {};
    if (typeof message.content === "string") {
      this.insertPart.run(`part_${messageId}_0`, messageId, "sess", "text", 0, message.content, null, null, null,
        JSON.stringify({ originalRole: message.role, ...shared }));
    } else {
      (message.content as Record<string, unknown>[]).forEach((block, ordinal) => {
        const type = String(block.type);
        const partType = type === "text" ? "text" : type === "thinking" ? "reasoning" : type === "toolCall" || type === "tool_use" ? "tool" : "agent";
        this.insertPart.run(`part_${messageId}_${ordinal}`, messageId, "sess", partType, ordinal,
          typeof block.text === "string" ? block.text : typeof block.thinking === "string" ? block.thinking : null,
          typeof block.id === "string" ? block.id : typeof top.toolCallId === "string" ? top.toolCallId : null,
          typeof block.name === "string" ? block.name : null,
          block.arguments !== undefined ? JSON.stringify(block.arguments) : null,
          JSON.stringify({ originalRole: message.role, ...(ordinal === 0 ? shared : { toolCallId: shared.toolCallId }), rawType: type, raw: block }));
      });
    }
    if (options.inContext !== false) this.contextItem(conversationId, { messageId });
    return messageId;
  }

  contextItem(conversationId: number, item: { messageId?: number; summaryId?: string }): void {
    const ordinal = this.ordinals.get(conversationId) ?? 0;
    this.ordinals.set(conversationId, ordinal + 1);
    this.db.prepare("INSERT INTO context_items (conversation_id, ordinal, item_type, message_id, summary_id) VALUES (?, ?, ?, ?, ?)")
      .run(conversationId, ordinal, item.messageId ? "message" : "summary", item.messageId ?? null, item.summaryId ?? null);
  }

  /** A summary as the peer's compaction writes it (its context replacement is the caller's contextItem calls). */
  summary(conversationId: number, summaryId: string, kind: "leaf" | "condensed", content: string, sources: (number | string)[], fileIds: string[] = []): void {
    this.clock += 1_000;
    this.db.prepare("INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, created_at, file_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .run(summaryId, conversationId, kind, kind === "leaf" ? 0 : 1, content, Math.ceil(content.length / 4), peerTime(this.clock), JSON.stringify(fileIds));
    sources.forEach((source, ordinal) => {
      if (kind === "leaf") this.db.prepare("INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)").run(summaryId, source, ordinal);
      else this.db.prepare("INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, ?, ?)").run(summaryId, source, ordinal);
    });
  }

  /** A large file stored aside as the peer does: content under lcm-files/<conversation>/, a row naming its path. */
  largeFile(conversationId: number, fileId: string, content: string | Buffer, fileName: string, mimeType: string): string {
    const storageUri = join(dirname(this.path), "lcm-files", String(conversationId), `${fileId}.${fileName.split(".").pop()}`);
    mkdirSync(dirname(storageUri), { recursive: true });
    writeFileSync(storageUri, content);
    this.db.prepare(`INSERT INTO large_files (file_id, conversation_id, file_name, mime_type, byte_size, storage_uri, exploration_summary, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(fileId, conversationId, fileName, mimeType, Buffer.byteLength(content), storageUri, `A ${mimeType} file`, peerTime(this.clock));
    return storageUri;
  }

  /**
   * A tool output the peer stored aside (0.15 on), as its ingest writes it (the databases in
   * test/fixtures/lossless-claw/ show the shape): the file under lcm-files/<conversation>/, its row, and a `tool`
   * message whose content is the `[LCM Tool Output: …]` reference, with one `tool` part whose metadata keeps the
   * `tool_result` block and names the file.
   */
  storedToolOutput(conversationId: number, toolCallId: string, toolName: string, fileId: string, output: string, options: { inContext?: boolean } = {}): number {
    const bytes = Buffer.byteLength(output);
    const storageUri = join(dirname(this.path), "lcm-files", String(conversationId), `${fileId}.txt`);
    mkdirSync(dirname(storageUri), { recursive: true });
    writeFileSync(storageUri, output);
    const summary = `Text exploration summary (${toolName}.txt):\nCharacters: ${bytes.toLocaleString("en-US")}.`;
    this.db.prepare(`INSERT INTO large_files (file_id, conversation_id, file_name, mime_type, byte_size, storage_uri, exploration_summary, created_at)
      VALUES (?, ?, ?, 'text/plain', ?, ?, ?, ?)`).run(fileId, conversationId, `${toolName}.txt`, bytes, storageUri, summary, peerTime(this.clock));
    const reference = `[LCM Tool Output: ${fileId} | tool=${toolName} | ${bytes.toLocaleString("en-US")} bytes]\n\nExploration Summary:\n${summary}\n\n` +
      "Call lcm_describe(id=\"<file_id above>\", expandFile=true) to fetch the full output content from disk.";
    this.clock += 1_000;
    const seq = (this.seqs.get(conversationId) ?? 0) + 1;
    this.seqs.set(conversationId, seq);
    const messageId = Number(this.insertMessage.run(conversationId, seq, "tool", reference, Math.ceil(reference.length / 4), peerTime(this.clock)).lastInsertRowid);
    const externalized = { externalizedFileId: fileId, originalByteSize: bytes, toolOutputExternalized: true, externalizationReason: "large_tool_result" };
    const raw = { type: "tool_result", text: reference, rawType: "tool_result", ...externalized, tool_use_id: toolCallId, isError: false, name: toolName };
    this.insertPart.run(`part_${messageId}_0`, messageId, "sess", "tool", 0, reference, toolCallId, toolName, null,
      JSON.stringify({ originalRole: "toolResult", toolCallId, toolName, isError: false, ...externalized, rawType: "tool_result", raw }));
    if (options.inContext !== false) this.contextItem(conversationId, { messageId });
    return messageId;
  }

  /** Runs `body` in one transaction (a large fixture is written in a few seconds). */
  batch(body: () => void): void {
    this.db.exec("BEGIN");
    try {
      body();
      this.db.exec("COMMIT");
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  close(): void {
    this.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    this.db.close();
  }
}
