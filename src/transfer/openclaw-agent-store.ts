/**
 * OpenClaw 2026.9.6's agent database (`agents/<agent>/agent/openclaw-agent.sqlite`), read-only, for `lcm import
 * openclaw` run outside the host (the `lcm` bin). The host keeps each session as a window (`session_windows`), its
 * transcript as events (`transcript_events`: JSON, or zstd-compressed JSON) and the visible path through them as a
 * projection (`session_transcript_active_events`, message positions 0…n-1). Pages are read exactly as the host's own
 * reader (plugin-sdk `readSessionTranscriptVisibleMessageDelta`) returns them: the same messages, and a cursor in
 * the host's format (agent, session, generation, last event seq and message position), so a conversation
 * backfilled here continues through the host's reader once LCM serves the session; a cursor the host does not take
 * is answered with a reset, and identity keys make the re-read store nothing twice. Never writes: the file is opened
 * read-only (immutable when it has no -wal, so nothing is left beside it), each page in one read transaction.
 */
import { DatabaseSync } from "node:sqlite";
import zlib from "node:zlib";
import { readOnlyLocation } from "../sqlite/database-file.js";
import { describeError } from "../errors.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import type { TranscriptPage, TranscriptScope, TranscriptSource } from "../ingest/transcript-source.js";

/** One session window of the agent. */
export interface AgentStoreSession {
  sessionId: string;
  sessionKey: string;
  createdAt: number;
  /** Set when OpenClaw moved the transcript to cold storage: only its own reader (which restores it) can read it. */
  coldArchive: string | null;
}

/** A transcript OpenClaw archived when it deleted or reset a session (not a live session any more). */
export interface ArchivedTranscript {
  sessionId: string;
  sessionKey: string;
  reason: string;
  archiveName: string;
  createdAt: number;
}

const REQUIRED_TABLES = ["session_windows", "transcript_events", "session_transcript_active_events", "transcript_rewrite_watermarks"];
const CURSOR_VERSION = 1;

interface VisibleCursor {
  agentId: string;
  generation: string;
  sessionId: string;
  lastEventSeq: number;
  lastMessagePosition: number;
  version: number;
}

export class OpenClawAgentStore {
  private readonly tables: Set<string>;

  private constructor(readonly path: string, readonly agentId: string, private readonly db: DatabaseSync) {
    this.tables = new Set((db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name));
  }

  /** Opens the agent database read-only; throws with what is wrong when it is not one this reader knows. */
  static open(path: string, agentId: string): OpenClawAgentStore {
    let db: DatabaseSync | undefined;
    let store: OpenClawAgentStore;
    try {
      db = new DatabaseSync(readOnlyLocation(path), { readOnly: true, timeout: 5_000 });
      store = new OpenClawAgentStore(path, agentId, db);
    } catch (error) {
      if (db?.isOpen) db.close();
      throw new Error(`cannot read ${path} read-only as an SQLite database (${describeError(error)})`);
    }
    const missing = REQUIRED_TABLES.filter((table) => !store.tables.has(table));
    if (missing.length > 0) {
      store.close();
      throw new Error(`${path} is not an OpenClaw agent database this LCM reads (no ${missing.join(", ")}; written by another OpenClaw version?)`);
    }
    return store;
  }

  /** Every session window, oldest first. */
  sessions(): AgentStoreSession[] {
    const cold = this.tables.has("session_transcript_cold_archives")
      ? new Map((this.db.prepare("SELECT session_id, archive_name FROM session_transcript_cold_archives").all() as { session_id: string; archive_name: string }[])
        .map((row) => [row.session_id, row.archive_name]))
      : new Map<string, string>();
    return (this.db.prepare("SELECT session_id, session_key, created_at FROM session_windows ORDER BY created_at, session_id").all() as
      { session_id: string; session_key: string; created_at: number }[])
      .map((row) => ({ sessionId: row.session_id, sessionKey: row.session_key, createdAt: row.created_at, coldArchive: cold.get(row.session_id) ?? null }));
  }

  /** Transcripts of deleted or reset sessions that OpenClaw archived (not read by the backfill; reported). */
  archivedTranscripts(): ArchivedTranscript[] {
    if (!this.tables.has("session_transcript_archives")) return [];
    return (this.db.prepare(
      "SELECT session_id, session_key, reason, archive_name, created_at FROM session_transcript_archives ORDER BY created_at, session_id",
    ).all() as { session_id: string; session_key: string; reason: string; archive_name: string; created_at: number }[])
      .map((row) => ({ sessionId: row.session_id, sessionKey: row.session_key, reason: row.reason, archiveName: row.archive_name, createdAt: row.created_at }));
  }

  /** One page of the session's visible messages after `cursor`, as the host's reader pages them. */
  readPage(sessionId: string, cursor: string | undefined, maxMessages: number, maxBytes: number): TranscriptPage {
    this.db.exec("BEGIN");
    try {
      return this.readPageNow(sessionId, cursor, maxMessages, maxBytes);
    } finally {
      this.db.exec("COMMIT");
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  private readPageNow(sessionId: string, cursorText: string | undefined, maxMessages: number, maxBytes: number): TranscriptPage {
    const generation = (this.db.prepare("SELECT generation FROM transcript_rewrite_watermarks WHERE session_id = ?").get(sessionId) as
      { generation: string } | undefined)?.generation;
    if (!generation) return { kind: "missing", reason: `no transcript of session ${sessionId} in ${this.path}` };
    const cold = this.tables.has("session_transcript_cold_archives")
      && this.db.prepare("SELECT 1 FROM session_transcript_cold_archives WHERE session_id = ?").get(sessionId) !== undefined;
    if (cold) {
      return { kind: "unavailable", reason: "OpenClaw moved this transcript to cold storage; run `openclaw lcm import openclaw`, whose reader restores it" };
    }
    const index = this.tables.has("session_transcript_index_state")
      ? this.db.prepare("SELECT needs_rebuild, active_message_count FROM session_transcript_index_state WHERE session_id = ?").get(sessionId) as
        { needs_rebuild: number; active_message_count: number } | undefined
      : undefined;
    if (index?.needs_rebuild) {
      return { kind: "unavailable", reason: "OpenClaw is rebuilding this transcript's index; run the import again later, or as `openclaw lcm import openclaw`" };
    }
    const initial: VisibleCursor = { agentId: this.agentId, generation, sessionId, lastEventSeq: -1, lastMessagePosition: -1, version: CURSOR_VERSION };
    const reset = (reason: string): TranscriptPage => ({ kind: "reset", cursor: encodeCursor(initial), reason });
    const cursor = cursorText === undefined ? initial : parseCursor(cursorText);
    if (!cursor) return reset("invalid_cursor");
    if (cursor.agentId !== this.agentId || cursor.sessionId !== sessionId) return reset("scope_mismatch");
    if (cursor.generation !== generation) return reset("generation_mismatch");
    let start = 0;
    if (cursor.lastEventSeq >= 0) {
      const anchor = this.db.prepare(
        "SELECT message_position FROM session_transcript_active_events WHERE session_id = ? AND event_seq = ? AND message_position IS NOT NULL",
      ).get(sessionId, cursor.lastEventSeq) as { message_position: number } | undefined;
      if (!anchor) return reset("anchor_missing");
      if (anchor.message_position !== cursor.lastMessagePosition) return reset("anchor_moved");
      start = anchor.message_position + 1;
    }
    const end = index?.active_message_count ?? Number.MAX_SAFE_INTEGER;
    const rows = this.db.prepare(
      `SELECT a.event_seq, a.message_position, e.event_json, e.event_zstd, coalesce(e.event_utf8_bytes, length(CAST(e.event_json AS BLOB))) AS bytes
       FROM session_transcript_active_events a JOIN transcript_events e ON e.session_id = a.session_id AND e.seq = a.event_seq
       WHERE a.session_id = ? AND a.message_position IS NOT NULL AND a.message_position >= ? AND a.message_position < ?
       ORDER BY a.message_position LIMIT ?`,
    ).all(sessionId, start, end, maxMessages + 1) as { event_seq: number; message_position: number; event_json: string | null; event_zstd: Uint8Array | null; bytes: number }[];
    const selected: typeof rows = [];
    let bytes = 0;
    for (const row of rows) {
      // The host counts each event's bytes plus one (the line it would take in a JSONL file).
      if (selected.length >= maxMessages || bytes + row.bytes + 1 > maxBytes) break;
      bytes += row.bytes + 1;
      selected.push(row);
    }
    const last = selected.at(-1);
    const next = last ? { ...cursor, lastEventSeq: last.event_seq, lastMessagePosition: last.message_position } : cursor;
    const messages = selected.flatMap((row) => visibleMessage(eventText(row)));
    return {
      kind: "page", messages, cursor: encodeCursor(next), hasMore: selected.length < rows.length,
      ...(selected.length === 0 && rows[0] ? { requiredBytes: rows[0].bytes + 1 } : {}),
    };
  }
}

/** Reads `store` transcripts through the TranscriptSource contract, the agent's database chosen by the scope. */
export class AgentStoreTranscriptSource implements TranscriptSource {
  constructor(private readonly stores: ReadonlyMap<string, OpenClawAgentStore>) {}

  async readPage(scope: TranscriptScope, cursor: string | undefined, maxMessages: number, maxBytes?: number): Promise<TranscriptPage> {
    const store = this.stores.get(scope.agentId);
    if (!store) return { kind: "missing", reason: `no agent database of agent ${scope.agentId}` };
    try {
      return store.readPage(scope.sessionId, cursor, maxMessages, maxBytes ?? 1024 * 1024);
    } catch (error) {
      return { kind: "unavailable", reason: `reading ${store.path} failed (${describeError(error)})` };
    }
  }
}

function eventText(row: { event_json: string | null; event_zstd: Uint8Array | null }): string {
  if (row.event_json !== null) return row.event_json;
  if (typeof zlib.zstdDecompressSync !== "function") {
    throw new Error("this Node has no zstd (a compressed transcript event needs Node 22.15 or later)");
  }
  return zlib.zstdDecompressSync(row.event_zstd ?? new Uint8Array()).toString("utf8");
}

/** The host's rule: a `message` event with an id, whose message has a role. */
function visibleMessage(text: string): AgentMessage[] {
  const event = JSON.parse(text) as { type?: unknown; id?: unknown; message?: unknown };
  if (event.type !== "message" || typeof event.id !== "string" || event.id.trim() === "") return [];
  const message = event.message as AgentMessage | null;
  const isMessage = message !== null && typeof message === "object" && !Array.isArray(message)
    && typeof message.role === "string" && message.role.trim() !== "";
  return isMessage ? [message] : [];
}

function encodeCursor(cursor: VisibleCursor): string {
  return Buffer.from(JSON.stringify({
    agentId: cursor.agentId, generation: cursor.generation, sessionId: cursor.sessionId, lastEventSeq: cursor.lastEventSeq,
    lastMessagePosition: cursor.lastMessagePosition, version: cursor.version,
  }), "utf8").toString("base64url");
}

function parseCursor(text: string): VisibleCursor | null {
  try {
    const parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Partial<VisibleCursor>;
    if (parsed.version !== CURSOR_VERSION || typeof parsed.agentId !== "string" || typeof parsed.sessionId !== "string"
      || typeof parsed.generation !== "string" || !Number.isSafeInteger(parsed.lastEventSeq) || !Number.isSafeInteger(parsed.lastMessagePosition)) {
      return null;
    }
    return parsed as VisibleCursor;
  } catch {
    return null; // not a cursor of this format: the reading starts over (identity keys dedupe)
  }
}
