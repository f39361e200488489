/**
 * The SQLite side of ImportStore (`lcm import jsonl`): export records written as rows. Records name each other by what
 * survives a move (a message by its seq, a summary by its `sum_` id), so edges and context items look their rows up
 * in the statement that inserts them; `ON CONFLICT DO NOTHING` leaves a row an interrupted import wrote as it is. A
 * stored file's path is recorded relative to the database's folder when inside it (stored-file-path.ts).
 */
import { describeError } from "../errors.js";
import type { ConversationId } from "../records.js";
import { type ConversationExportRecord, type ExportRecord, IMPORTING_REASON, type LargeFileExportRecord, type MessageExportRecord } from "../store/export-format.js";
import type { ConversationToPublish, ImportStore, PublishRefusal } from "../store/import-store.js";
import type { Database } from "./database.js";
import { CONVERSATION_BY_IDENTITY_SQL } from "./sqlite-export-store.js";
import { lowerIndexedThrough } from "./sqlite-retention-store.js";
import { recordedPath, resolveRecordedPath } from "./stored-file-path.js";

/** Thrown inside publish's transaction to roll it back; returned as the refusal. */
class PublishRefused extends Error {
  constructor(readonly refusal: PublishRefusal) {
    super(refusal.kind);
  }
}

export class SqliteImportStore implements ImportStore {
  constructor(private readonly db: Database) {}

  async openConversation(record: ConversationExportRecord): Promise<ConversationId> {
    return this.db.write(() => {
      const previous = record.previousConversation === null ? undefined : this.db.get<{ conversation_id: number }>(
        CONVERSATION_BY_IDENTITY_SQL,
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

  async writeRecords(conversationId: ConversationId, records: readonly ExportRecord[]): Promise<void> {
    await this.db.write(() => {
      for (const record of records) this.insert(conversationId, record);
    });
  }

  async writeLargeFile(conversationId: ConversationId, record: LargeFileExportRecord, path: string): Promise<void> {
    await this.db.write(() => this.db.run(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
         exploration_summary, explorer, origin, tool_name, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      record.fileId, conversationId, record.contentHash, record.fileName, record.mimeType, record.byteSize, record.tokenCount,
      recordedPath(this.db.path, path), record.explorationSummary, record.explorer, record.origin, record.toolName, record.createdAt,
    ));
  }

  async removeConversation(conversationId: ConversationId): Promise<string[]> {
    const paths = await this.db.write(() => {
      const recorded = this.db.tuples<[string]>("SELECT storage_path FROM large_files WHERE conversation_id = ?", conversationId).map((row) => row[0]);
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
      return recorded;
    });
    return paths.map((path) => resolveRecordedPath(this.db.path, path));
  }

  async publish(conversations: readonly ConversationToPublish[], now: number): Promise<PublishRefusal | null> {
    if (conversations.length === 0) return null;
    try {
      await this.db.write(() => {
        conversations.forEach((conversation, index) => this.publishOne(conversation, index, now));
      });
      return null;
    } catch (error) {
      if (error instanceof PublishRefused) return error.refusal;
      throw error;
    }
  }

  private publishOne({ conversationId, expected, archivedAt, archiveReason }: ConversationToPublish, index: number, now: number): void {
    const stored = this.db.get<{ messages: number; summaries: number; items: number }>(
      `SELECT (SELECT count(*) FROM messages WHERE conversation_id = ?1) AS messages,
              (SELECT count(*) FROM summaries WHERE conversation_id = ?1) AS summaries,
              (SELECT count(*) FROM context_items WHERE conversation_id = ?1) AS items`, conversationId,
    )!;
    if (stored.messages !== expected.messages || stored.summaries !== expected.summaries || stored.items !== expected.contextItems) {
      throw new PublishRefused({ kind: "counts", index, stored: { messages: stored.messages, summaries: stored.summaries, contextItems: stored.items } });
    }
    try {
      this.db.run(
        "UPDATE conversations SET archived_at = ?, archive_reason = ?, restored_at = ? WHERE conversation_id = ? AND archive_reason = ?",
        archivedAt, archiveReason, now, conversationId, IMPORTING_REASON,
      );
    } catch (error) {
      throw new PublishRefused({ kind: "session-taken", index, detail: describeError(error) });
    }
  }

  /** One row and its edges; a row already there (a resumed import) is left as it is. */
  private insert(conversationId: ConversationId, record: ExportRecord): void {
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

  private insertMessage(conversationId: ConversationId, record: MessageExportRecord): void {
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
  private archiveRow(conversationId: ConversationId, record: MessageExportRecord): number {
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
