/**
 * The SQLite side of RetentionStore (schema version 10). Pruned messages keep their row as a stub (identity, seq,
 * role, time, token count; `archive_id` names the archive with their text), so deduplication, summary links, seq
 * contiguity and the counters hold and `/lcm doctor` stays clean; their parts go and their full-text row becomes an
 * empty document (the index still holds one row per indexed message). A conversation archived whole is taken out of
 * use first (archived, reason `lcm-retention:deleting`), then deleted newest rows first in bounded transactions:
 * context items, summaries (children before the summaries they condense), messages, files, turns, the row itself.
 */
import type { Database } from "../../db/database.js";
import type { ConversationId, MessageId } from "../../records.js";
import type {
  ArchivedLocation,
  ArchiveRecord,
  DatabaseSpace,
  DeletionStep,
  EndedConversation,
  NewArchive,
  PrunableMessage,
  RetentionStore,
} from "../retention-store.js";

/** archive_reason of a conversation retention is deleting (its archive is written; rows go in steps). */
export const RETENTION_DELETING_REASON = "lcm-retention:deleting";

const AUTO_VACUUM = ["none", "full", "incremental"] as const;

type ArchiveRow = {
  archive_id: number; kind: "conversation" | "messages"; path: string; created_at: number; conversation_id: number; agent_id: string;
  session_id: string; reason: string; message_count: number; seq_start: number | null; seq_end: number | null; state: "deleting" | "done";
};

function toArchive(row: ArchiveRow): ArchiveRecord {
  return {
    archiveId: row.archive_id, kind: row.kind, path: row.path, createdAt: row.created_at, conversationId: row.conversation_id,
    agentId: row.agent_id, sessionId: row.session_id, reason: row.reason, messageCount: row.message_count,
    seqStart: row.seq_start, seqEnd: row.seq_end, state: row.state,
  };
}

function toLocation(row: ArchiveRow): ArchivedLocation {
  return {
    archivePath: row.path, archivedAt: row.created_at, conversationId: row.conversation_id, agentId: row.agent_id,
    sessionId: row.session_id, kind: row.kind, seqStart: row.seq_start, seqEnd: row.seq_end,
  };
}

export class SqliteRetentionStore implements RetentionStore {
  constructor(private readonly db: Database) {}

  space(): DatabaseSpace {
    const pragma = (name: string) => Number(Object.values(this.db.get<Record<string, number>>(`PRAGMA ${name}`)!)[0]);
    return {
      pageSize: pragma("page_size"), pageCount: pragma("page_count"), freePages: pragma("freelist_count"),
      autoVacuum: AUTO_VACUUM[pragma("auto_vacuum")] ?? "none",
    };
  }

  async endedConversations(idleBefore: number, limit: number): Promise<EndedConversation[]> {
    return this.db.all<EndedConversation>(
      `SELECT conversation_id AS conversationId, agent_id AS agentId, session_id AS sessionId, session_key AS sessionKey,
         updated_at AS updatedAt, message_count AS messageCount
       FROM conversations WHERE ended_at IS NOT NULL AND archived_at IS NULL AND updated_at < ?
       ORDER BY updated_at, conversation_id LIMIT ?`,
      idleBefore, limit,
    ).map((row) => ({ ...row }));
  }

  async prunableMessages(createdBefore: number, afterSummaryRowId: number, limit: number): Promise<{ messages: PrunableMessage[]; nextSummaryRowId: number | null }> {
    // Plan: SEARCH summaries USING INTEGER PRIMARY KEY (rowid>?), then the PK of summary_messages per summary.
    const summaries = this.db.all<{ id: number; summary_id: string }>(
      `SELECT s.id, s.summary_id FROM summaries s JOIN conversations c ON c.conversation_id = s.conversation_id
       WHERE s.id > ? AND s.kind = 'leaf' AND s.earliest_at < ? AND coalesce(c.archive_reason, '') <> ?
       ORDER BY s.id LIMIT ?`,
      afterSummaryRowId, createdBefore, RETENTION_DELETING_REASON, limit,
    );
    if (summaries.length === 0) return { messages: [], nextSummaryRowId: null };
    const summaryIds = new Map(summaries.map((row) => [row.id, row.summary_id]));
    const rows = this.db.all<{
      summary: number; message_id: number; conversation_id: number; seq: number; role: string; content: string; token_count: number;
      created_at: number; identity_key: string; flags: number; meta: string;
    }>(
      `SELECT sm.summary_id AS summary, m.message_id, m.conversation_id, m.seq, m.role, m.content, m.token_count, m.created_at,
         m.identity_key, m.flags, m.meta
       FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id
       WHERE sm.summary_id IN (SELECT value FROM json_each(?)) AND m.archive_id IS NULL AND m.created_at < ?
       ORDER BY sm.summary_id, sm.ordinal`,
      JSON.stringify([...summaryIds.keys()]), createdBefore,
    );
    const inContext = this.inContext(rows.map((row) => ({ conversationId: row.conversation_id, messageId: row.message_id })));
    const kept = rows.filter((row) => !inContext.has(row.message_id));
    const parts = this.partsOf(kept.map((row) => row.message_id));
    const messages = kept.map((row): PrunableMessage => ({
      messageId: row.message_id, conversationId: row.conversation_id, seq: row.seq, role: row.role, content: row.content,
      tokenCount: row.token_count, createdAt: row.created_at, identityKey: row.identity_key, flags: row.flags, meta: row.meta,
      parts: parts.get(row.message_id) ?? [], summaryId: summaryIds.get(row.summary)!,
    }));
    return { messages, nextSummaryRowId: summaries.length < limit ? null : summaries.at(-1)!.id };
  }

  async pruneMessages(archive: NewArchive, messageIds: MessageId[], createdBefore: number): Promise<number> {
    return this.db.write(() => {
      const candidates = this.db.all<{ message_id: number; conversation_id: number }>(
        `SELECT m.message_id, m.conversation_id FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
         WHERE m.message_id IN (SELECT value FROM json_each(?)) AND m.archive_id IS NULL AND m.created_at < ?
           AND coalesce(c.archive_reason, '') <> ?`,
        JSON.stringify(messageIds), createdBefore, RETENTION_DELETING_REASON,
      );
      // Re-checked in the transaction: a message the context shows again (or never stopped showing) stays.
      const inContext = this.inContext(candidates.map((row) => ({ conversationId: row.conversation_id, messageId: row.message_id })));
      const prunable = candidates.filter((row) => !inContext.has(row.message_id)).map((row) => row.message_id);
      if (prunable.length === 0) return 0;
      const archiveId = this.insertArchive(archive, "done");
      const indexedThrough = this.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = 'messages_fts'")?.through ?? 0;
      for (const messageId of prunable) {
        this.db.run("DELETE FROM message_parts WHERE message_id = ?", messageId);
        if (messageId <= indexedThrough) {
          // The index keeps one (empty) row per indexed message: its row count is what the integrity check compares.
          this.db.run("DELETE FROM messages_fts WHERE rowid = ?", messageId);
          this.db.run("INSERT INTO messages_fts (rowid, words, derived) VALUES (?, '', '')", messageId);
        }
        this.db.run("UPDATE messages SET content = '', meta = '{}', archive_id = ? WHERE message_id = ?", archiveId, messageId);
      }
      this.db.run("UPDATE retention_archives SET message_count = ? WHERE archive_id = ?", prunable.length, archiveId);
      return prunable.length;
    });
  }

  async beginConversationDeletion(archive: NewArchive, updatedAt: number): Promise<number | null> {
    return this.db.write(() => {
      const current = this.db.get<{ updated_at: number; ended_at: number | null; archived_at: number | null }>(
        "SELECT updated_at, ended_at, archived_at FROM conversations WHERE conversation_id = ?", archive.conversationId,
      );
      // The session came back (a message arrived, ended_at cleared) or the row changed: the archive is not used.
      if (!current || current.ended_at === null || current.archived_at !== null || current.updated_at !== updatedAt) return null;
      const archiveId = this.insertArchive(archive, "deleting");
      this.db.run(
        "UPDATE conversations SET archived_at = ?, archive_reason = ? WHERE conversation_id = ?",
        archive.createdAt, RETENTION_DELETING_REASON, archive.conversationId,
      );
      return archiveId;
    });
  }

  async deleteConversationStep(archiveId: number, maxRows: number): Promise<DeletionStep> {
    return this.db.write(() => {
      const archive = this.db.get<{ conversation_id: number; state: string }>(
        "SELECT conversation_id, state FROM retention_archives WHERE archive_id = ?", archiveId,
      );
      if (!archive || archive.state === "done") return { deleted: 0, removedFilePaths: [], finished: true };
      const conversationId = archive.conversation_id;
      const items = this.db.tuples<[number]>(
        "SELECT ordinal FROM context_items WHERE conversation_id = ? ORDER BY ordinal DESC LIMIT ?", conversationId, maxRows,
      );
      if (items.length > 0) {
        this.db.run(
          "DELETE FROM context_items WHERE conversation_id = ? AND ordinal >= ?", conversationId, items.at(-1)![0],
        );
        return { deleted: items.length, removedFilePaths: [], finished: false };
      }
      // Newest first: a condensed summary is always newer than the summaries it condenses.
      const summaries = this.db.tuples<[number, string]>(
        "SELECT id, summary_id FROM summaries WHERE conversation_id = ? ORDER BY id DESC LIMIT ?", conversationId, Math.max(1, maxRows >> 4),
      );
      if (summaries.length > 0) {
        const ids = JSON.stringify(summaries.map((row) => row[0]));
        for (const [, summaryId] of summaries) this.recordArchivedId(summaryId, archiveId);
        this.db.run("DELETE FROM summary_parents WHERE summary_id IN (SELECT value FROM json_each(?))", ids);
        this.db.run("DELETE FROM summary_parents WHERE parent_summary_id IN (SELECT value FROM json_each(?))", ids);
        this.db.run("DELETE FROM summary_messages WHERE summary_id IN (SELECT value FROM json_each(?))", ids);
        this.db.run("DELETE FROM summaries WHERE id IN (SELECT value FROM json_each(?))", ids);
        return { deleted: summaries.length, removedFilePaths: [], finished: false };
      }
      const messages = this.db.tuples<[number]>(
        "SELECT message_id FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?", conversationId, maxRows,
      );
      if (messages.length > 0) {
        const ids = JSON.stringify(messages.map((row) => row[0]));
        this.db.run("DELETE FROM message_parts WHERE message_id IN (SELECT value FROM json_each(?))", ids);
        this.db.run("DELETE FROM messages WHERE message_id IN (SELECT value FROM json_each(?))", ids);
        return { deleted: messages.length, removedFilePaths: [], finished: false };
      }
      const files = this.db.tuples<[string, string]>(
        "SELECT file_id, storage_path FROM large_files WHERE conversation_id = ? LIMIT ?", conversationId, maxRows,
      );
      if (files.length > 0) {
        for (const [fileId] of files) {
          this.recordArchivedId(fileId, archiveId);
          this.db.run("DELETE FROM large_files WHERE file_id = ?", fileId);
        }
        return { deleted: files.length, removedFilePaths: files.map((row) => row[1]), finished: false };
      }
      const turns = this.db.run(
        `DELETE FROM committed_turns WHERE conversation_id = ?1 AND advancement_key IN
           (SELECT advancement_key FROM committed_turns WHERE conversation_id = ?1 LIMIT ?2)`,
        conversationId, maxRows,
      ).changes;
      if (turns > 0) return { deleted: turns, removedFilePaths: [], finished: false };
      // Its successor after /reset named it; the archive row keeps the id.
      this.db.run("UPDATE conversations SET previous_conversation_id = NULL WHERE previous_conversation_id = ?", conversationId);
      this.db.run("DELETE FROM conversations WHERE conversation_id = ?", conversationId);
      this.db.run("UPDATE retention_archives SET state = 'done' WHERE archive_id = ?", archiveId);
      return { deleted: 1, removedFilePaths: [], finished: true };
    });
  }

  async unfinishedDeletions(): Promise<ArchiveRecord[]> {
    return this.db.all<ArchiveRow>("SELECT * FROM retention_archives WHERE state = 'deleting' ORDER BY archive_id").map(toArchive);
  }

  async storedFileIds(): Promise<Set<string>> {
    return new Set(this.db.tuples<[string]>("SELECT file_id FROM large_files").map((row) => row[0]));
  }

  async estimatePrunable(createdBefore: number): Promise<{ messages: number; bytes: number }> {
    // Leaf summaries wholly older than the cut, less what earlier runs archived: one pass over the summaries table.
    const row = this.db.get<{ covered: number; archived: number }>(
      `SELECT (SELECT coalesce(sum(source_message_count), 0) FROM summaries WHERE kind = 'leaf' AND latest_at < ?) AS covered,
              (SELECT coalesce(sum(message_count), 0) FROM retention_archives WHERE kind = 'messages') AS archived`,
      createdBefore,
    )!;
    const messages = Math.max(0, row.covered - row.archived);
    return { messages, bytes: Math.round(messages * (await this.growth(Number.MAX_SAFE_INTEGER)).bytesPerMessage) };
  }

  async growth(since: number): Promise<{ messages: number; bytesPerMessage: number }> {
    const bounds = this.db.get<{ low: number | null; high: number | null; stored: number }>(
      "SELECT min(message_id) AS low, max(message_id) AS high, (SELECT coalesce(sum(message_count), 0) FROM conversations) AS stored FROM messages",
    )!;
    const space = this.space();
    const bytesPerMessage = bounds.stored > 0 ? ((space.pageCount - space.freePages) * space.pageSize) / bounds.stored : 0;
    if (bounds.low === null || bounds.high === null) return { messages: 0, bytesPerMessage };
    // Ids grow with time (closely enough): the first id stored at or after `since`, by bisection (about 20 lookups).
    let low = bounds.low;
    let high = bounds.high + 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const at = this.db.get<{ message_id: number; created_at: number }>(
        "SELECT message_id, created_at FROM messages WHERE message_id >= ? ORDER BY message_id LIMIT 1", middle,
      );
      if (!at || at.created_at >= since) high = middle;
      else low = at.message_id + 1;
    }
    return { messages: Math.max(0, bounds.high - low + 1), bytesPerMessage };
  }

  async incrementalVacuum(pages: number): Promise<number> {
    const count = Math.max(1, Math.floor(pages));
    return this.db.write(() => {
      const before = this.space().freePages;
      this.db.raw.exec(`PRAGMA incremental_vacuum(${count})`);
      return before - this.space().freePages;
    });
  }

  async archives(limit: number): Promise<ArchiveRecord[]> {
    return this.db.all<ArchiveRow>("SELECT * FROM retention_archives ORDER BY archive_id DESC LIMIT ?", limit).map(toArchive);
  }

  private insertArchive(archive: NewArchive, state: "deleting" | "done"): number {
    return this.db.run(
      `INSERT INTO retention_archives (kind, path, created_at, conversation_id, agent_id, session_id, session_key, reason,
         message_count, seq_start, seq_end, byte_size, state)
       SELECT ?, ?, ?, conversation_id, agent_id, session_id, session_key, ?, ?, ?, ?, ?, ? FROM conversations WHERE conversation_id = ?`,
      archive.kind, archive.path, archive.createdAt, archive.reason, archive.messageCount, archive.seqStart, archive.seqEnd,
      archive.byteSize, state, archive.conversationId,
    ).lastInsertRowid;
  }

  private recordArchivedId(id: string, archiveId: number): void {
    this.db.run("INSERT OR REPLACE INTO retention_archived_ids (id, archive_id) VALUES (?, ?)", id, archiveId);
  }

  /** Which of these messages the context still shows (one read per conversation, bounded by its context items). */
  private inContext(messages: { conversationId: number; messageId: number }[]): Set<number> {
    const byConversation = new Map<number, number[]>();
    for (const { conversationId, messageId } of messages) {
      const list = byConversation.get(conversationId);
      if (list) list.push(messageId);
      else byConversation.set(conversationId, [messageId]);
    }
    const shown = new Set<number>();
    for (const [conversationId, ids] of byConversation) {
      for (const [messageId] of this.db.tuples<[number]>(
        "SELECT message_id FROM context_items WHERE conversation_id = ? AND message_id IN (SELECT value FROM json_each(?))",
        conversationId, JSON.stringify(ids),
      )) shown.add(messageId);
    }
    return shown;
  }

  private partsOf(messageIds: number[]): Map<number, PrunableMessage["parts"]> {
    const parts = new Map<number, PrunableMessage["parts"]>();
    if (messageIds.length === 0) return parts;
    for (const row of this.db.tuples<[number, number, string, number | null, number | null, string | null, string | null]>(
      `SELECT message_id, ordinal, kind, text_start, text_end, data, meta FROM message_parts
       WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, ordinal`,
      JSON.stringify(messageIds),
    )) {
      const part = { ordinal: row[1], kind: row[2], start: row[3], end: row[4], data: row[5], meta: row[6] };
      const list = parts.get(row[0]);
      if (list) list.push(part);
      else parts.set(row[0], [part]);
    }
    return parts;
  }
}

/** Where a summary or file id of a conversation archived whole went; null when retention never archived it. */
export function archivedIdLocation(db: Database, id: string): ArchivedLocation | null {
  const row = db.get<ArchiveRow>(
    "SELECT a.* FROM retention_archived_ids i JOIN retention_archives a ON a.archive_id = i.archive_id WHERE i.id = ?", id,
  );
  return row ? toLocation({ ...row }) : null;
}

/** The archives holding raw messages of `conversationIds` or whole conversations of their agents, newest first. */
export function archivesOf(db: Database, conversationIds: readonly ConversationId[], limit: number): ArchivedLocation[] {
  // Message archives of these conversations, and whole conversations archived of the agents that own them.
  const ids = JSON.stringify(conversationIds);
  return db.all<ArchiveRow>(
    `SELECT * FROM retention_archives
     WHERE (kind = 'messages' AND conversation_id IN (SELECT value FROM json_each(?1)))
        OR (kind = 'conversation' AND agent_id IN (SELECT agent_id FROM conversations WHERE conversation_id IN (SELECT value FROM json_each(?1))))
     GROUP BY path ORDER BY max(archive_id) DESC LIMIT ?2`,
    ids, limit,
  ).map((row) => toLocation({ ...row }));
}

/** For a leaf summary: its source messages retention archived, grouped by archive. */
export function archivedSourcesOf(db: Database, summaryRowId: number): (ArchivedLocation & { messageIds: MessageId[] })[] {
  const rows = db.all<ArchiveRow & { ids: string }>(
    `SELECT a.*, json_group_array(m.message_id) AS ids FROM summary_messages sm
       JOIN messages m ON m.message_id = sm.message_id JOIN retention_archives a ON a.archive_id = m.archive_id
     WHERE sm.summary_id = ? GROUP BY a.archive_id ORDER BY a.archive_id`,
    summaryRowId,
  );
  return rows.map((row) => ({ ...toLocation({ ...row }), messageIds: JSON.parse(row.ids) as MessageId[] }));
}
