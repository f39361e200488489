/**
 * The PostgreSQL side of RetentionStore (specs/018-import-export-retention.md, "Retention"). The policy effects are
 * SQLite's: a pruned message keeps its row as a stub (identity, seq, role, time, token count; `archive_id` names the
 * archive holding its text) and loses its parts; a conversation archived whole is taken out of use, then deleted
 * newest rows first (pg-conversation-deletion.ts). Several gateways share the database: every removal is one
 * transaction holding the conversation's advisory lock, taken without waiting; when another gateway holds it (it is
 * compacting or repairing), the write does nothing and answers "busy", and the service reports the conversation
 * skipped. Space is counted in bytes of LCM's tables (pg-space.ts); freed room is made reusable by the server's
 * autovacuum, and `lcm retention --apply` runs VACUUM (`--vacuum`: VACUUM FULL).
 */
import type { ConversationId, MessageId } from "../records.js";
import type { SliceDeadline } from "../runtime/time-slice.js";
import type {
  ArchiveRecord, DatabaseSpace, DeletionStep, EndedConversation, NewArchive, PrunableMessage, RetentionBusy, RetentionStore,
} from "../store/retention-store.js";
import { deleteNextRows } from "./pg-conversation-deletion.js";
import { fromPgText, fromPgTextOrNull, type PgDatabase, toPgText } from "./pg-database.js";
import type { PgQueryable } from "./pg-queryable.js";
import { pgSpace } from "./pg-space.js";

/** archive_reason of a conversation retention is deleting (its archive is written; rows go in steps). */
const RETENTION_DELETING_REASON = "lcm-retention:deleting";

interface MessageRow {
  message_id: number; conversation_id: number; seq: number; role: string; content: string; token_count: number; created_at: number;
  identity_key: string; flags: number; meta: string;
}
/** The leaf summaries' covered raw messages that are not pruned, older than the cut and not in any context. */
const COVERED_MESSAGES_SQL =
  `SELECT m.message_id, m.conversation_id, m.seq, m.role, m.content, m.token_count, m.created_at, m.identity_key, m.flags, m.meta,
          sm.summary_id AS covering
   FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id
   WHERE sm.summary_id = ANY($1::bigint[]) AND m.archive_id IS NULL AND m.created_at < $2
     AND NOT EXISTS (SELECT 1 FROM context_items ci WHERE ci.message_id = m.message_id)
   ORDER BY sm.summary_id, sm.ordinal`;

/** Messages emptied per transaction at most (four statements each, whatever the batch). */
const PRUNE_BATCH = 200;

interface ArchiveRow {
  archive_id: number; kind: "conversation" | "messages"; path: string; created_at: number; conversation_id: number; agent_id: string;
  session_id: string; reason: string; message_count: number; seq_start: number | null; seq_end: number | null; state: "deleting" | "done";
}

function toArchive(row: ArchiveRow): ArchiveRecord {
  return {
    archiveId: row.archive_id, kind: row.kind, path: fromPgText(row.path), createdAt: row.created_at, conversationId: row.conversation_id,
    agentId: fromPgText(row.agent_id), sessionId: fromPgText(row.session_id), reason: row.reason, messageCount: row.message_count,
    seqStart: row.seq_start, seqEnd: row.seq_end, state: row.state,
  };
}

export class PgRetentionStore implements RetentionStore {
  constructor(private readonly database: PgDatabase) {}

  async space(): Promise<DatabaseSpace> {
    const space = await pgSpace(this.database);
    return { usedBytes: space.usedBytes, freeBytes: space.freeBytes, autoVacuum: "server", vacuumUnitBytes: 0 };
  }

  async endedConversations(idleBefore: number, limit: number, restoredBefore = Number.MAX_SAFE_INTEGER): Promise<EndedConversation[]> {
    const rows = await this.database.rows<{
      conversation_id: number; agent_id: string; session_id: string; session_key: string | null; updated_at: number; message_count: number;
    }>(
      `SELECT conversation_id, agent_id, session_id, session_key, updated_at, message_count
       FROM conversations WHERE ended_at IS NOT NULL AND archived_at IS NULL AND updated_at < $1 AND coalesce(restored_at, 0) < $2
       ORDER BY updated_at, conversation_id LIMIT $3`,
      [idleBefore, restoredBefore, limit],
    );
    return rows.map((row) => ({
      conversationId: row.conversation_id, agentId: fromPgText(row.agent_id), sessionId: fromPgText(row.session_id),
      sessionKey: fromPgTextOrNull(row.session_key), updatedAt: row.updated_at, messageCount: row.message_count,
    }));
  }

  async prunableMessages(
    createdBefore: number, afterSummaryRowId: number, limit: number, _deadline: SliceDeadline, restoredBefore = Number.MAX_SAFE_INTEGER,
  ): Promise<{ messages: PrunableMessage[]; nextSummaryRowId: number | null }> {
    // Three statements for the page, whatever its size (a round trip costs more than the rows): the leaf summaries by
    // primary key, their covered messages (edges by primary key, the context probe by context_items_message), and the
    // messages' parts. The page is bounded by `limit` summaries, so the slice's deadline is not needed to end it.
    const summaries = await this.database.rows<{ id: number; summary_id: string }>(
      `SELECT s.id, s.summary_id FROM summaries s JOIN conversations c ON c.conversation_id = s.conversation_id
       WHERE s.id > $1 AND s.kind = 'leaf' AND s.earliest_at < $2 AND coalesce(c.archive_reason, '') <> $3 AND coalesce(c.restored_at, 0) < $4
       ORDER BY s.id LIMIT $5`,
      [afterSummaryRowId, createdBefore, RETENTION_DELETING_REASON, restoredBefore, limit],
    );
    const nextSummaryRowId = summaries.length < limit ? null : summaries.at(-1)!.id;
    if (summaries.length === 0) return { messages: [], nextSummaryRowId };
    const rows = await this.database.rows<MessageRow & { covering: number }>(COVERED_MESSAGES_SQL, [summaries.map((summary) => summary.id), createdBefore]);
    const parts = await this.partsOf(rows.map((row) => row.message_id));
    const summaryIds = new Map(summaries.map((summary) => [summary.id, fromPgText(summary.summary_id)]));
    const messages = rows.map((row): PrunableMessage => ({
      messageId: row.message_id, conversationId: row.conversation_id, seq: row.seq, role: fromPgText(row.role), content: fromPgText(row.content),
      tokenCount: row.token_count, createdAt: row.created_at, identityKey: fromPgText(row.identity_key), flags: row.flags,
      meta: fromPgText(row.meta), parts: parts.get(row.message_id) ?? [], summaryId: summaryIds.get(row.covering)!,
    }));
    return { messages, nextSummaryRowId };
  }

  async pruneMessages(
    archive: NewArchive, messageIds: readonly MessageId[], createdBefore: number, _deadline: SliceDeadline, restoredBefore = Number.MAX_SAFE_INTEGER,
  ): Promise<{ handled: number; pruned: number; busy: boolean }> {
    // At most PRUNE_BATCH messages per transaction, in four statements: short whatever a round trip costs.
    const batch = messageIds.slice(0, PRUNE_BATCH);
    const result = await this.database.withConversationLock(archive.conversationId, async (tx) => {
      // Re-checked in the transaction, and locked (in id order): a message the context shows again (or never stopped
      // showing), one pruned meanwhile, one of a conversation being deleted whole, restored meanwhile, or of another
      // conversation, stays as it is.
      const eligible = (await tx.rows<{ message_id: number }>(
        `SELECT m.message_id FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
         WHERE m.message_id = ANY($1::bigint[]) AND m.conversation_id = $2 AND m.archive_id IS NULL AND m.created_at < $3
           AND coalesce(c.archive_reason, '') <> $4 AND coalesce(c.restored_at, 0) < $5
           AND NOT EXISTS (SELECT 1 FROM context_items ci WHERE ci.message_id = m.message_id)
         ORDER BY m.message_id FOR UPDATE OF m`,
        [batch, archive.conversationId, createdBefore, RETENTION_DELETING_REASON, restoredBefore],
      )).map((row) => row.message_id);
      if (eligible.length === 0) return { handled: batch.length, pruned: 0 };
      const archiveId = await insertArchive(tx, { ...archive, messageCount: eligible.length }, "done");
      // The rows stay as stubs: identity, seq, role, time and token count; their text is in the archive.
      await tx.run("DELETE FROM message_parts WHERE message_id = ANY($1::bigint[])", [eligible]);
      await tx.run("UPDATE messages SET content = '', meta = '{}', archive_id = $1 WHERE message_id = ANY($2::bigint[])", [archiveId, eligible]);
      return { handled: batch.length, pruned: eligible.length };
    });
    return result.locked ? { ...result.value, busy: false } : { handled: messageIds.length, pruned: 0, busy: true };
  }

  async beginConversationDeletion(archive: NewArchive, updatedAt: number): Promise<number | null | RetentionBusy> {
    const result = await this.database.withConversationLock(archive.conversationId, async (tx) => {
      const current = await tx.row<{ updated_at: number; ended_at: number | null; archived_at: number | null }>(
        "SELECT updated_at, ended_at, archived_at FROM conversations WHERE conversation_id = $1 FOR UPDATE", [archive.conversationId],
      );
      // The session came back (a message arrived, ended_at cleared) or the row changed: the archive is not used.
      if (!current || current.ended_at === null || current.archived_at !== null || current.updated_at !== updatedAt) return null;
      const archiveId = await insertArchive(tx, archive, "deleting");
      await tx.run(
        "UPDATE conversations SET archived_at = $1, archive_reason = $2 WHERE conversation_id = $3",
        [archive.createdAt, RETENTION_DELETING_REASON, archive.conversationId],
      );
      return archiveId;
    });
    return result.locked ? result.value : "busy";
  }

  async deleteConversationStep(archiveId: number, deadline: SliceDeadline): Promise<DeletionStep> {
    const archive = await this.database.row<{ conversation_id: number; state: string }>(
      "SELECT conversation_id, state FROM retention_archives WHERE archive_id = $1", [archiveId],
    );
    if (!archive || archive.state === "done") return { deleted: 0, removedFilePaths: [], finished: true, busy: false };
    const result = await this.database.withConversationLock(archive.conversation_id, async (tx): Promise<DeletionStep> => {
      // Built inside the body: a transaction PostgreSQL retries starts its step over.
      const step: DeletionStep = { deleted: 0, removedFilePaths: [], finished: false, busy: false };
      const state = await tx.row<{ state: string }>("SELECT state FROM retention_archives WHERE archive_id = $1 FOR UPDATE", [archiveId]);
      if (!state || state.state === "done") return { ...step, finished: true };
      // Small batches, newest rows first, until the slice has run out (at least one batch per transaction).
      for (;;) {
        const deleted = await deleteNextRows(tx, archive.conversation_id, archiveId, step.removedFilePaths);
        if (deleted === 0) {
          // Its successor after /reset named it; the archive row keeps the id.
          await tx.run("UPDATE conversations SET previous_conversation_id = NULL WHERE previous_conversation_id = $1", [archive.conversation_id]);
          await tx.run("DELETE FROM conversations WHERE conversation_id = $1", [archive.conversation_id]);
          await tx.run("UPDATE retention_archives SET state = 'done' WHERE archive_id = $1", [archiveId]);
          return { ...step, deleted: step.deleted + 1, finished: true };
        }
        step.deleted += deleted;
        if (deadline.expired()) return step;
      }
    });
    return result.locked ? result.value : { deleted: 0, removedFilePaths: [], finished: false, busy: true };
  }

  async unfinishedDeletions(): Promise<ArchiveRecord[]> {
    return (await this.database.rows<ArchiveRow>("SELECT * FROM retention_archives WHERE state = 'deleting' ORDER BY archive_id")).map(toArchive);
  }

  async storedFileIds(): Promise<Set<string>> {
    return new Set((await this.database.rows<{ file_id: string }>("SELECT file_id FROM large_files")).map((row) => fromPgText(row.file_id)));
  }

  async estimatePrunable(createdBefore: number): Promise<{ messages: number; tokens: number }> {
    // Leaf summaries wholly older than the cut, less what earlier runs archived: one pass over summaries, one over archives.
    const row = await this.database.row<{ covered: number; tokens: number; archived: number }>(
      `SELECT coalesce(sum(source_message_count), 0)::bigint AS covered, coalesce(sum(source_token_count), 0)::bigint AS tokens,
              (SELECT coalesce(sum(message_count), 0)::bigint FROM retention_archives WHERE kind = 'messages') AS archived
       FROM summaries WHERE kind = 'leaf' AND latest_at < $1`,
      [createdBefore],
    );
    const covered = row?.covered ?? 0;
    const messages = Math.max(0, covered - (row?.archived ?? 0));
    return { messages, tokens: covered > 0 ? Math.round(((row?.tokens ?? 0) * messages) / covered) : 0 };
  }

  async growth(since: number): Promise<{ messages: number; bytesPerMessage: number }> {
    // By the messages' own times (index messages_created): ids are no measure of when a row was stored with several writers.
    const row = await this.database.row<{ recent: number; stored: number }>(
      `SELECT (SELECT count(*) FROM messages WHERE created_at >= $1) AS recent,
              (SELECT coalesce(sum(message_count), 0)::bigint FROM conversations) AS stored`,
      [since],
    );
    const stored = row?.stored ?? 0;
    const bytesPerMessage = stored > 0 ? (await pgSpace(this.database)).usedBytes / stored : 0;
    return { messages: row?.recent ?? 0, bytesPerMessage };
  }

  /** PostgreSQL has no incremental vacuum (space() never says "incremental"): nothing to give back in steps. */
  async incrementalVacuum(_pages: number, _slice?: SliceDeadline): Promise<number> {
    return 0;
  }

  async reclaimSpace(options: { full: boolean }): Promise<void> {
    const tables = await this.database.rows<{ name: string }>(
      "SELECT relname AS name FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' ORDER BY relname",
    );
    if (tables.length === 0) return;
    // VACUUM cannot run inside a transaction block: a client of its own, in autocommit, without the statement timeout
    // (VACUUM FULL of a large table takes minutes).
    const client = await (await this.database.pool()).connect();
    try {
      await client.query("SET statement_timeout = 0");
      const names = tables.map((table) => `"${table.name.replaceAll("\"", "\"\"")}"`).join(", ");
      await client.query(`VACUUM (${options.full ? "FULL, " : ""}ANALYZE) ${names}`);
    } finally {
      await client.query("RESET statement_timeout").catch(() => undefined);
      client.release();
    }
  }

  async archivePathsOf(conversationId: ConversationId): Promise<string[]> {
    return (await this.database.rows<{ path: string }>(
      "SELECT path FROM retention_archives WHERE conversation_id = $1 GROUP BY path ORDER BY min(archive_id)", [conversationId],
    )).map((row) => fromPgText(row.path));
  }

  async lastArchiveAt(): Promise<number | null> {
    return (await this.database.row<{ at: number | null }>("SELECT max(created_at) AS at FROM retention_archives"))?.at ?? null;
  }

  /** The parts of `messageIds`, by message, in order, as an export writes them. */
  private async partsOf(messageIds: number[]): Promise<Map<number, PrunableMessage["parts"]>> {
    const parts = new Map<number, PrunableMessage["parts"]>();
    if (messageIds.length === 0) return parts;
    for (const row of await this.database.rows<{
      message_id: number; ordinal: number; kind: string; text_start: number | null; text_end: number | null; data: string | null; meta: string | null;
    }>(
      "SELECT message_id, ordinal, kind, text_start, text_end, data, meta FROM message_parts WHERE message_id = ANY($1::bigint[]) ORDER BY message_id, ordinal",
      [messageIds],
    )) {
      const list = parts.get(row.message_id) ?? [];
      list.push({ ordinal: row.ordinal, kind: row.kind, start: row.text_start, end: row.text_end, data: fromPgTextOrNull(row.data), meta: fromPgTextOrNull(row.meta) });
      parts.set(row.message_id, list);
    }
    return parts;
  }
}

async function insertArchive(tx: PgQueryable, archive: NewArchive, state: "deleting" | "done"): Promise<number> {
  const row = await tx.row<{ archive_id: number }>(
    `INSERT INTO retention_archives (kind, path, created_at, conversation_id, agent_id, session_id, session_key, reason,
       message_count, seq_start, seq_end, byte_size, state)
     SELECT $1, $2, $3, conversation_id, agent_id, session_id, session_key, $4, $5, $6, $7, $8, $9 FROM conversations WHERE conversation_id = $10
     RETURNING archive_id`,
    [archive.kind, toPgText(archive.path), archive.createdAt, archive.reason, archive.messageCount, archive.seqStart, archive.seqEnd,
      archive.byteSize, state, archive.conversationId],
  );
  if (!row) throw new Error(`conversation ${archive.conversationId} is not stored: no archive can be recorded for it`);
  return row.archive_id;
}
