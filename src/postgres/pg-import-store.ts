/**
 * The PostgreSQL side of ImportStore (`lcm import jsonl`): export records written as rows, one transaction per call.
 * Records name each other by what survives a move (a message by its seq, a summary by its `sum_` id), so edges and
 * context items look their rows up in the statement that inserts them; `ON CONFLICT DO NOTHING` leaves a row an
 * interrupted import wrote as it is. Publishing meets the one-live-conversation-per-session index: a violation rolls
 * the whole publish back and comes back as the refusal. Every text parameter goes through toPgText.
 */
import { describeError } from "../errors.js";
import type { ConversationId } from "../records.js";
import { type ConversationExportRecord, type ExportRecord, IMPORTING_REASON, type LargeFileExportRecord, type MessageExportRecord } from "../store/export-format.js";
import type { ConversationToPublish, ImportStore, PublishRefusal } from "../store/import-store.js";
import { type PgDatabase, type PgParam, type PgQueryable, sqlState, toPgText } from "./pg-database.js";
import { contentsOf, insertContents } from "./pg-stored-files.js";

/** Thrown inside publish's transaction to roll it back; returned as the refusal. */
class PublishRefused extends Error {
  constructor(readonly refusal: PublishRefusal) {
    super(refusal.kind);
  }
}

type Input = string | number | null | undefined;

/** Statement parameters with every text made storable (NUL-safe). */
function values(...inputs: Input[]): PgParam[] {
  return inputs.map((value) => (value === undefined ? null : typeof value === "string" ? toPgText(value) : value));
}

export class PgImportStore implements ImportStore {
  constructor(private readonly database: PgDatabase) {}

  async openConversation(record: ConversationExportRecord): Promise<ConversationId> {
    const previous = record.previousConversation;
    const row = await this.database.row<{ id: number }>(
      `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq, next_ordinal,
         message_count, message_tokens, context_tokens, context_raw_tokens, context_items, last_token_budget, last_window_tokens,
         last_reserve_tokens, bootstrap_state, last_compaction, session_started_at, last_reset, previous_conversation_id,
         archived_at, archive_reason, ended_at, end_reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
         (SELECT conversation_id FROM conversations WHERE agent_id = $21 AND session_id = $22 AND created_at = $23 ORDER BY conversation_id LIMIT 1),
         $24, $25, $26, $27)
       RETURNING conversation_id AS id`,
      values(
        record.agentId, record.sessionId, record.sessionKey, record.createdAt, record.updatedAt, record.lastIngestAt, record.nextSeq,
        record.nextOrdinal, record.messageCount, record.messageTokens, record.contextTokens, record.contextRawTokens, record.contextItems,
        record.lastTokenBudget, record.lastWindowTokens, record.lastReserveTokens, record.bootstrapState, record.lastCompaction,
        record.sessionStartedAt, record.lastReset, previous?.agentId ?? null, previous?.sessionId ?? null, previous?.createdAt ?? null,
        record.archivedAt ?? record.createdAt, IMPORTING_REASON, record.endedAt, record.endReason,
      ),
    );
    return row!.id;
  }

  async writeRecords(conversationId: ConversationId, records: readonly ExportRecord[]): Promise<void> {
    await this.database.transaction(async (tx) => {
      for (const record of records) await insert(tx, conversationId, record);
    });
  }

  /** The row and, read from `path` where the import wrote it, the content (migration 8), in one transaction. */
  async writeLargeFile(conversationId: ConversationId, record: LargeFileExportRecord, path: string): Promise<void> {
    const contents = await contentsOf([{ fileId: record.fileId, storagePath: path, byteSize: record.byteSize }]);
    await this.database.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
           exploration_summary, explorer, origin, tool_name, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING`,
        values(record.fileId, conversationId, record.contentHash, record.fileName, record.mimeType, record.byteSize, record.tokenCount,
          path, record.explorationSummary, record.explorer, record.origin, record.toolName, record.createdAt),
      );
      await insertContents(tx, contents, [record.fileId]);
    });
  }

  async removeConversation(conversationId: ConversationId): Promise<string[]> {
    return this.database.transaction(async (tx) => {
      // Only while it is still importing: the row lock keeps a publish from slipping in between.
      const importing = await tx.row("SELECT 1 FROM conversations WHERE conversation_id = $1 AND archive_reason = $2 FOR UPDATE", values(conversationId, IMPORTING_REASON));
      if (!importing) return [];
      const paths = (await tx.rows<{ path: string }>("SELECT storage_path AS path FROM large_files WHERE conversation_id = $1", [conversationId])).map((row) => row.path);
      const summaries = "SELECT id FROM summaries WHERE conversation_id = $1";
      const messages = "SELECT message_id FROM messages WHERE conversation_id = $1";
      await tx.run("DELETE FROM context_items WHERE conversation_id = $1", [conversationId]);
      await tx.run(`DELETE FROM summary_parents WHERE summary_id IN (${summaries}) OR parent_summary_id IN (${summaries})`, [conversationId]);
      await tx.run(`DELETE FROM summary_messages WHERE summary_id IN (${summaries})`, [conversationId]);
      await tx.run("DELETE FROM summaries WHERE conversation_id = $1", [conversationId]);
      await tx.run(`DELETE FROM message_parts WHERE message_id IN (${messages})`, [conversationId]);
      await tx.run("DELETE FROM messages WHERE conversation_id = $1", [conversationId]);
      await tx.run("DELETE FROM retention_archives WHERE conversation_id = $1 AND kind = 'messages'", [conversationId]);
      await tx.run("DELETE FROM large_files WHERE conversation_id = $1", [conversationId]);
      await tx.run("DELETE FROM conversations WHERE conversation_id = $1 AND archive_reason = $2", values(conversationId, IMPORTING_REASON));
      return paths;
    });
  }

  async publish(conversations: readonly ConversationToPublish[], now: number): Promise<PublishRefusal | null> {
    if (conversations.length === 0) return null;
    try {
      await this.database.transaction(async (tx) => {
        for (const [index, conversation] of conversations.entries()) await publishOne(tx, conversation, index, now);
      });
      return null;
    } catch (error) {
      if (error instanceof PublishRefused) return error.refusal;
      throw error;
    }
  }
}

async function publishOne(tx: PgQueryable, { conversationId, expected, archivedAt, archiveReason }: ConversationToPublish, index: number, now: number): Promise<void> {
  const stored = (await tx.row<{ messages: number; summaries: number; items: number }>(
    `SELECT (SELECT count(*) FROM messages WHERE conversation_id = $1) AS messages,
            (SELECT count(*) FROM summaries WHERE conversation_id = $1) AS summaries,
            (SELECT count(*) FROM context_items WHERE conversation_id = $1) AS items`, [conversationId],
  ))!;
  if (stored.messages !== expected.messages || stored.summaries !== expected.summaries || stored.items !== expected.contextItems) {
    throw new PublishRefused({ kind: "counts", index, stored: { messages: stored.messages, summaries: stored.summaries, contextItems: stored.items } });
  }
  try {
    await tx.run(
      "UPDATE conversations SET archived_at = $1, archive_reason = $2, restored_at = $3 WHERE conversation_id = $4 AND archive_reason = $5",
      values(archivedAt, archiveReason, now, conversationId, IMPORTING_REASON),
    );
  } catch (error) {
    // 23505: the session has another live conversation (conversations_live_session); the transaction is rolled back.
    if (sqlState(error) !== "23505") throw error;
    throw new PublishRefused({ kind: "session-taken", index, detail: describeError(error) });
  }
}

/** One row and its edges; a row already there (a resumed import) is left as it is. */
async function insert(tx: PgQueryable, conversationId: ConversationId, record: ExportRecord): Promise<void> {
  switch (record.type) {
    case "message":
      await insertMessage(tx, conversationId, record);
      return;
    case "summary": {
      const inserted = await tx.row<{ id: number }>(
        `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at,
           latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING RETURNING id`,
        values(record.summaryId, conversationId, record.kind, record.depth, record.content, record.tokenCount, record.sourceTokenCount,
          record.earliestAt, record.latestAt, record.descendantCount, record.sourceMessageCount, record.seqStart, record.seqEnd,
          record.fileIds, record.level, record.createdAt),
      );
      if (!inserted) return;
      for (const edge of record.sourceMessages) {
        await tx.run(
          `INSERT INTO summary_messages (summary_id, message_id, ordinal)
           VALUES ($1, (SELECT message_id FROM messages WHERE conversation_id = $2 AND seq = $3), $4)`,
          [inserted.id, conversationId, edge.seq, edge.ordinal],
        );
      }
      for (const edge of record.sourceSummaries) {
        await tx.run(
          "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES ($1, (SELECT id FROM summaries WHERE summary_id = $2), $3)",
          values(inserted.id, edge.summaryId, edge.ordinal),
        );
      }
      return;
    }
    case "contextItem":
      await tx.run(
        `INSERT INTO context_items (conversation_id, ordinal, message_id, summary_id, token_count, flags)
         VALUES ($1, $2, (SELECT message_id FROM messages WHERE conversation_id = $1 AND seq = $3),
                 (SELECT id FROM summaries WHERE summary_id = $4), $5, $6) ON CONFLICT DO NOTHING`,
        values(conversationId, record.ordinal, record.messageSeq, record.summaryId, record.tokenCount, record.flags),
      );
      return;
    default:
      return;
  }
}

async function insertMessage(tx: PgQueryable, conversationId: ConversationId, record: MessageExportRecord): Promise<void> {
  const archiveId = record.archive ? await archiveRow(tx, conversationId, record) : null;
  const inserted = await tx.row<{ id: number }>(
    `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta, archive_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING RETURNING message_id AS id`,
    values(conversationId, record.seq, record.role, record.content, record.tokenCount, record.createdAt, record.identityKey, record.flags, record.meta, archiveId),
  );
  if (!inserted) return;
  if (archiveId !== null) {
    await tx.run(
      "UPDATE retention_archives SET message_count = message_count + 1, seq_start = LEAST(seq_start, $1), seq_end = GREATEST(seq_end, $1) WHERE archive_id = $2",
      [record.seq, archiveId],
    );
  }
  for (const part of record.parts) {
    await tx.run(
      "INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end, data, meta) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      values(inserted.id, part.ordinal, part.kind, part.start, part.end, part.data, part.meta),
    );
  }
}

/** The conversation's archive row for the file holding a pruned message's text (made on first use). */
async function archiveRow(tx: PgQueryable, conversationId: ConversationId, record: MessageExportRecord): Promise<number> {
  const archive = record.archive!;
  const existing = await tx.row<{ id: number }>(
    "SELECT archive_id AS id FROM retention_archives WHERE conversation_id = $1 AND kind = 'messages' AND path = $2", values(conversationId, archive.path),
  );
  if (existing) return existing.id;
  const created = await tx.row<{ id: number }>(
    `INSERT INTO retention_archives (kind, path, created_at, conversation_id, agent_id, session_id, session_key, reason,
       message_count, seq_start, seq_end, byte_size, state)
     SELECT 'messages', $1::text, $2::bigint, conversation_id, agent_id, session_id, session_key, $3::text, 0, $4::bigint, $4::bigint, 0, 'done' FROM conversations WHERE conversation_id = $5
     RETURNING archive_id AS id`,
    values(archive.path, archive.createdAt, archive.reason, record.seq, conversationId),
  );
  return created!.id;
}
