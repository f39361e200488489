/**
 * Writes the blocks of an export into a database for `lcm import jsonl` (jsonl-import.ts): rows in chunks of a few
 * hundred, one transaction each, the event loop running between them; a row already there (an interrupted import
 * resumed) is left as it is. Until the import publishes it, a conversation is archived as IMPORTING_REASON, so the
 * gateway never serves it half-written; `remove` takes out what an import wrote when it must not stay. A pruned
 * message's archive reference becomes a retention archive row of the new conversation, so recall says where its
 * text is, as it did in the database the export came from.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Database } from "../sqlite/database.js";
import { recordedPath, resolveRecordedPath } from "../sqlite/stored-file-path.js";
import { describeError, LcmError } from "../errors.js";
import { lowerIndexedThrough } from "../sqlite/sqlite-retention-store.js";
import { type ConversationExportRecord, type ExportRecord, IMPORTING_REASON, type LargeFileExportRecord, type MessageExportRecord } from "./export-format.js";

/** Rows per write transaction. */
const CHUNK_ROWS = 500;
/** Characters of content per write transaction. */
const CHUNK_CHARS = 4_000_000;

export class BlockWriter {
  private pending: ExportRecord[] = [];
  private pendingChars = 0;

  constructor(private readonly db: Database, private readonly filesDirectory: string) {}

  /** Creates the conversation row, archived as importing; returns its id. */
  async open(record: ConversationExportRecord): Promise<number> {
    return this.db.write(() => {
      const previous = record.previousConversation === null ? undefined : this.db.get<{ conversation_id: number }>(
        "SELECT conversation_id FROM conversations WHERE agent_id = ? AND session_id = ? AND created_at = ? ORDER BY conversation_id LIMIT 1",
        record.previousConversation.agentId, record.previousConversation.sessionId, record.previousConversation.createdAt,
      );
      return this.db.run(
        `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq, next_ordinal,
           message_count, message_tokens, context_tokens, context_raw_tokens, context_items, last_token_budget, last_window_tokens,
           last_reserve_tokens, bootstrap_state, last_compaction, session_started_at, last_reset, previous_conversation_id,
           archived_at, archive_reason, ended_at, end_reason)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        record.agentId, record.sessionId, record.sessionKey, record.createdAt, record.updatedAt, record.lastIngestAt, record.nextSeq,
        record.nextOrdinal, record.messageCount, record.messageTokens, record.contextTokens, record.contextRawTokens, record.contextItems,
        record.lastTokenBudget, record.lastWindowTokens, record.lastReserveTokens, record.bootstrapState, record.lastCompaction,
        record.sessionStartedAt, record.lastReset, previous?.conversation_id ?? null,
        record.archivedAt ?? record.createdAt, IMPORTING_REASON, record.endedAt, record.endReason,
      ).lastInsertRowid;
    });
  }

  async add(conversationId: number, record: ExportRecord): Promise<void> {
    this.pending.push(record);
    this.pendingChars += "content" in record ? record.content.length : 0;
    if (this.pending.length >= CHUNK_ROWS || this.pendingChars >= CHUNK_CHARS) await this.flush(conversationId);
  }

  /** Writes the file's bytes (atomically: temp file, then rename), then its row. */
  async writeLargeFile(conversationId: number, record: LargeFileExportRecord): Promise<void> {
    await this.flush(conversationId);
    const path = this.storedPath(conversationId, record.storedName);
    if (record.contentBase64 !== null) {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const temporary = join(dirname(path), `.${record.fileId}.import.tmp`);
      try {
        await writeFile(temporary, Buffer.from(record.contentBase64, "base64"), { mode: 0o600 });
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw new LcmError("storage", `Could not write the large file ${record.fileId} to ${path}: ${describeError(error)}.`);
      }
    }
    await this.db.write(() => this.db.run(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
         exploration_summary, explorer, origin, tool_name, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      record.fileId, conversationId, record.contentHash, record.fileName, record.mimeType, record.byteSize, record.tokenCount,
      recordedPath(this.db.path, path), record.explorationSummary, record.explorer, record.origin, record.toolName, record.createdAt,
    ));
  }

  /** Writes what is still pending for the conversation. */
  async flush(conversationId: number): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    await this.db.write(() => {
      for (const record of chunk) this.insert(conversationId, record);
    });
    await yieldToEventLoop();
  }

  /**
   * Deletes everything an import wrote for these conversations (rows, archive rows, stored files), one transaction
   * per conversation; for an import that must not stay (it failed a check after writing).
   */
  async remove(conversationIds: readonly number[]): Promise<void> {
    for (const conversationId of conversationIds) {
      const files = await this.db.write(() => {
        const paths = this.db.tuples<[string]>("SELECT storage_path FROM large_files WHERE conversation_id = ?", conversationId).map((row) => row[0]);
        const summaries = "SELECT id FROM summaries WHERE conversation_id = ?1";
        const messages = "SELECT message_id FROM messages WHERE conversation_id = ?1";
        this.db.run("DELETE FROM context_items WHERE conversation_id = ?", conversationId);
        this.db.run(`DELETE FROM summary_parents WHERE summary_id IN (${summaries}) OR parent_summary_id IN (${summaries})`, conversationId);
        this.db.run(`DELETE FROM summary_messages WHERE summary_id IN (${summaries})`, conversationId);
        this.db.run("DELETE FROM summaries WHERE conversation_id = ?", conversationId);
        this.db.run(`DELETE FROM message_parts WHERE message_id IN (${messages})`, conversationId);
        this.db.run("DELETE FROM messages WHERE conversation_id = ?", conversationId);
        this.db.run("DELETE FROM retention_archives WHERE conversation_id = ? AND kind = 'messages'", conversationId);
        this.db.run("DELETE FROM large_files WHERE conversation_id = ?", conversationId);
        this.db.run("DELETE FROM conversations WHERE conversation_id = ? AND archive_reason = ?", conversationId, IMPORTING_REASON);
        lowerIndexedThrough(this.db);
        return paths;
      });
      for (const path of files) await rm(resolveRecordedPath(this.db.path, path), { force: true });
      await rm(join(resolve(this.filesDirectory), String(conversationId)), { recursive: false, force: true }).catch(() => undefined);
    }
  }

  private storedPath(conversationId: number, storedName: string): string {
    const root = resolve(this.filesDirectory);
    const path = join(root, String(conversationId), storedName);
    if (!path.startsWith(root + sep)) throw new LcmError("invalid_input", `Refusing to write ${path}: outside the files directory ${root}.`);
    return path;
  }

  /** One row and its edges; a row already there (a resumed import) is left as it is. */
  private insert(conversationId: number, record: ExportRecord): void {
    switch (record.type) {
      case "message":
        this.insertMessage(conversationId, record);
        return;
      case "summary": {
        const { changes, lastInsertRowid } = this.db.run(
          `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at,
             latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
          record.summaryId, conversationId, record.kind, record.depth, record.content, record.tokenCount, record.sourceTokenCount,
          record.earliestAt, record.latestAt, record.descendantCount, record.sourceMessageCount, record.seqStart, record.seqEnd,
          record.fileIds, record.level, record.createdAt,
        );
        if (changes === 0) return;
        for (const edge of record.sourceMessages) {
          this.db.run(
            `INSERT INTO summary_messages (summary_id, message_id, ordinal)
             VALUES (?, (SELECT message_id FROM messages WHERE conversation_id = ? AND seq = ?), ?)`,
            lastInsertRowid, conversationId, edge.seq, edge.ordinal,
          );
        }
        for (const edge of record.sourceSummaries) {
          this.db.run(
            "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, (SELECT id FROM summaries WHERE summary_id = ?), ?)",
            lastInsertRowid, edge.summaryId, edge.ordinal,
          );
        }
        return;
      }
      case "contextItem":
        this.db.run(
          `INSERT INTO context_items (conversation_id, ordinal, message_id, summary_id, token_count, flags)
           VALUES (?1, ?2, (SELECT message_id FROM messages WHERE conversation_id = ?1 AND seq = ?3),
                   (SELECT id FROM summaries WHERE summary_id = ?4), ?5, ?6) ON CONFLICT DO NOTHING`,
          conversationId, record.ordinal, record.messageSeq, record.summaryId, record.tokenCount, record.flags,
        );
        return;
      default:
        return;
    }
  }

  private insertMessage(conversationId: number, record: MessageExportRecord): void {
    const archiveId = record.archive ? this.archiveRow(conversationId, record) : null;
    const { changes, lastInsertRowid } = this.db.run(
      `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta, archive_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      conversationId, record.seq, record.role, record.content, record.tokenCount, record.createdAt, record.identityKey, record.flags, record.meta, archiveId,
    );
    if (changes === 0) return;
    if (archiveId !== null) {
      this.db.run(
        "UPDATE retention_archives SET message_count = message_count + 1, seq_start = min(seq_start, ?1), seq_end = max(seq_end, ?1) WHERE archive_id = ?2",
        record.seq, archiveId,
      );
    }
    for (const part of record.parts) {
      this.db.run(
        "INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end, data, meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
        lastInsertRowid, part.ordinal, part.kind, part.start, part.end, part.data, part.meta,
      );
    }
  }

  /** The conversation's archive row for the file holding a pruned message's text (made on first use). */
  private archiveRow(conversationId: number, record: MessageExportRecord): number {
    const archive = record.archive!;
    const existing = this.db.tuples<[number]>(
      "SELECT archive_id FROM retention_archives WHERE conversation_id = ? AND kind = 'messages' AND path = ?", conversationId, archive.path,
    )[0];
    if (existing) return existing[0];
    return this.db.run(
      `INSERT INTO retention_archives (kind, path, created_at, conversation_id, agent_id, session_id, session_key, reason,
         message_count, seq_start, seq_end, byte_size, state)
       SELECT 'messages', ?, ?, conversation_id, agent_id, session_id, session_key, ?, 0, ?, ?, 0, 'done' FROM conversations WHERE conversation_id = ?`,
      archive.path, archive.createdAt, archive.reason, record.seq, record.seq, conversationId,
    ).lastInsertRowid;
  }
}
