/**
 * The SQLite side of RetentionStore (schema version 10). Pruned messages keep their row as a stub (identity, seq,
 * role, time, token count; `archive_id` names the archive with their text), so deduplication, summary links, seq
 * contiguity and the counters hold and `/lcm doctor` stays clean; their parts go and their full-text row becomes an
 * empty document (the index still holds one row per indexed message). A conversation archived whole is taken out of
 * use first (archived, reason `lcm-retention:deleting`), then deleted newest rows first: context items, summaries
 * (children before the summaries they condense), messages, files, turns, the row itself. Every write takes rows
 * until its time slice (runtime/time-slice.ts) has run out, then commits: a transaction lasts about 15 ms whatever
 * the rows cost, and the caller lets the event loop run before the next.
 */
import type { SQLInputValue } from "node:sqlite";
import type { Database } from "./database.js";
import { resolveRecordedPath } from "./stored-file-path.js";
import type { ConversationId, MessageId } from "../records.js";
import type { SliceDeadline } from "../runtime/time-slice.js";
import type {
  ArchiveRecord,
  DatabaseSpace,
  DeletionStep,
  EndedConversation,
  NewArchive,
  PrunableMessage,
  RetentionStore,
} from "../store/retention-store.js";

/** archive_reason of a conversation retention is deleting (its archive is written; rows go in steps). */
export const RETENTION_DELETING_REASON = "lcm-retention:deleting";

const AUTO_VACUUM = ["none", "full", "incremental"] as const;

/**
 * Rows per batch when a conversation goes whole; a transaction takes batches until its time slice has run out. A
 * summary is deleted with its edges (a leaf links tens of messages), hence far fewer of them per batch.
 */
const DELETE_BATCH = { contextItems: 100, summaries: 4, messages: 25, files: 10, turns: 100 } as const;

/** Pruned messages deleted before their stubs are inserted again (enough to empty whole pages; see pruneMessages). */
const STUB_GROUP = 20;

type MessageTuple = [
  messageId: number, conversationId: number, seq: number, role: string, content: string, tokenCount: number, createdAt: number,
  identityKey: string, flags: number, meta: string,
];
/** One leaf summary's covered raw messages that are not pruned, older than the cut and not in any context. */
const COVERED_MESSAGES_SQL =
  `SELECT m.message_id, m.conversation_id, m.seq, m.role, m.content, m.token_count, m.created_at, m.identity_key, m.flags, m.meta
   FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id
   WHERE sm.summary_id = ? AND m.archive_id IS NULL AND m.created_at < ?
     AND NOT EXISTS (SELECT 1 FROM context_items ci WHERE ci.message_id = m.message_id)
   ORDER BY sm.ordinal`;

/** One retention_archives row (sqlite-export-store.ts reads them for recall too). */
export type ArchiveRow = {
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

export class SqliteRetentionStore implements RetentionStore {
  constructor(private readonly db: Database) {}

  async space(): Promise<DatabaseSpace> {
    return this.spaceNow();
  }

  /** The figures of space(), read at once (inside a transaction, where no await may come). */
  private spaceNow(): DatabaseSpace {
    const { pageSize, pageCount, freePages } = this.pagesNow();
    const autoVacuum = AUTO_VACUUM[Number(Object.values(this.db.get<Record<string, number>>("PRAGMA auto_vacuum")!)[0])] ?? "none";
    return { usedBytes: (pageCount - freePages) * pageSize, freeBytes: freePages * pageSize, autoVacuum, vacuumUnitBytes: pageSize };
  }

  private pagesNow(): { pageSize: number; pageCount: number; freePages: number } {
    const pragma = (name: string) => Number(Object.values(this.db.get<Record<string, number>>(`PRAGMA ${name}`)!)[0]);
    return { pageSize: pragma("page_size"), pageCount: pragma("page_count"), freePages: pragma("freelist_count") };
  }

  async endedConversations(idleBefore: number, limit: number, restoredBefore = Number.MAX_SAFE_INTEGER): Promise<EndedConversation[]> {
    return this.db.all<EndedConversation>(
      `SELECT conversation_id AS conversationId, agent_id AS agentId, session_id AS sessionId, session_key AS sessionKey,
         updated_at AS updatedAt, message_count AS messageCount
       FROM conversations WHERE ended_at IS NOT NULL AND archived_at IS NULL AND updated_at < ? AND coalesce(restored_at, 0) < ?
       ORDER BY updated_at, conversation_id LIMIT ?`,
      idleBefore, restoredBefore, limit,
    ).map((row) => ({ ...row }));
  }

  async prunableMessages(
    createdBefore: number, afterSummaryRowId: number, limit: number, deadline: SliceDeadline, restoredBefore = Number.MAX_SAFE_INTEGER,
  ): Promise<{ messages: PrunableMessage[]; nextSummaryRowId: number | null }> {
    // Plan: SEARCH summaries USING INTEGER PRIMARY KEY (rowid>?); then per summary SEARCH sm USING PRIMARY KEY
    // (summary_id=?), SEARCH m USING INTEGER PRIMARY KEY, SEARCH ci USING COVERING INDEX context_items_message
    // (message_id=?), a sort of the summary's few edges by ordinal; the parts by message_parts' primary key.
    const summaries = this.db.tuples<[number, string]>(
      `SELECT s.id, s.summary_id FROM summaries s JOIN conversations c ON c.conversation_id = s.conversation_id
       WHERE s.id > ? AND s.kind = 'leaf' AND s.earliest_at < ? AND coalesce(c.archive_reason, '') <> ? AND coalesce(c.restored_at, 0) < ?
       ORDER BY s.id LIMIT ?`,
      afterSummaryRowId, createdBefore, RETENTION_DELETING_REASON, restoredBefore, limit,
    );
    const messages: PrunableMessage[] = [];
    for (const [index, [rowId, summaryId]] of summaries.entries()) {
      for (const row of this.db.tuples<MessageTuple>(COVERED_MESSAGES_SQL, rowId, createdBefore)) {
        messages.push({
          messageId: row[0], conversationId: row[1], seq: row[2], role: row[3], content: row[4], tokenCount: row[5], createdAt: row[6],
          identityKey: row[7], flags: row[8], meta: row[9], parts: this.partsOf(row[0]), summaryId,
        });
      }
      // At least one summary per call; past the slice, the rest of the page waits for the next call.
      if (deadline.expired() && index < summaries.length - 1) return { messages, nextSummaryRowId: rowId };
    }
    return { messages, nextSummaryRowId: summaries.length < limit ? null : summaries.at(-1)![0] };
  }

  async pruneMessages(
    archive: NewArchive, messageIds: readonly MessageId[], createdBefore: number, deadline: SliceDeadline, restoredBefore = Number.MAX_SAFE_INTEGER,
  ): Promise<{ handled: number; pruned: number; busy: boolean }> {
    return this.db.write(() => {
      const indexedThrough = this.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = 'messages_fts'")?.through ?? 0;
      // Each row is deleted, then inserted again as a stub (same id, identity, seq, role, time, token count), a group
      // at a time: the stubs are packed into few pages and the emptied pages go to the free list. Updating the rows in
      // place left every page with its rows, 85% empty: a 100k-message file shrank by 12% instead of 65%
      // (docs/operations.md). summary_messages points at the rows in between, so the foreign keys are checked at
      // commit (this pragma ends with the transaction).
      this.db.raw.exec("PRAGMA defer_foreign_keys = ON");
      let archiveId: number | null = null;
      let handled = 0;
      let pruned = 0;
      const stubs: Record<string, SQLInputValue>[] = [];
      const insertStubs = () => {
        for (const stub of stubs) {
          // Every column as read (a column a later migration adds is kept too).
          const columns = Object.keys(stub);
          this.db.run(
            `INSERT INTO messages (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`, ...columns.map((column) => stub[column]!),
          );
          // The index keeps one (empty) row per indexed message: its row count is what the integrity check compares.
          if (Number(stub.message_id) <= indexedThrough) {
            this.db.run("INSERT INTO messages_fts (rowid, words, derived) VALUES (?, '', '')", stub.message_id!);
          }
        }
        pruned += stubs.length;
        stubs.length = 0;
      };
      for (const messageId of messageIds) {
        handled++;
        // Re-checked in the transaction: a message the context shows again (or never stopped showing), one pruned
        // meanwhile, one of a conversation being deleted whole, or of one restored meanwhile, stays as it is.
        const state = this.db.tuples<[archiveId: number | null, createdAt: number, reason: string | null, shown: number, restoredAt: number]>(
          `SELECT m.archive_id, m.created_at, c.archive_reason,
                  EXISTS (SELECT 1 FROM context_items ci WHERE ci.message_id = m.message_id), coalesce(c.restored_at, 0)
           FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id WHERE m.message_id = ?`,
          messageId,
        )[0];
        const isHeld = state !== undefined && state[4] >= restoredBefore;
        if (state && state[0] === null && state[1] < createdBefore && state[2] !== RETENTION_DELETING_REASON && state[3] === 0 && !isHeld) {
          archiveId ??= this.insertArchive(archive, "done");
          const row = this.db.get<Record<string, SQLInputValue>>("SELECT * FROM messages WHERE message_id = ?", messageId)!;
          stubs.push({ ...row, content: "", meta: "{}", archive_id: archiveId });
          this.db.run("DELETE FROM message_parts WHERE message_id = ?", messageId);
          // Its trigger takes the message out of the full-text index (when it was indexed).
          this.db.run("DELETE FROM messages WHERE message_id = ?", messageId);
        }
        if (deadline.expired()) break;
        if (stubs.length >= STUB_GROUP) insertStubs();
      }
      insertStubs();
      if (archiveId !== null) this.db.run("UPDATE retention_archives SET message_count = ? WHERE archive_id = ?", pruned, archiveId);
      return { handled, pruned, busy: false };
    }, { slice: deadline });
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

  async deleteConversationStep(archiveId: number, deadline: SliceDeadline): Promise<DeletionStep> {
    return this.db.write(() => {
      const archive = this.db.get<{ conversation_id: number; state: string }>(
        "SELECT conversation_id, state FROM retention_archives WHERE archive_id = ?", archiveId,
      );
      if (!archive || archive.state === "done") return { deleted: 0, removedFilePaths: [], finished: true, busy: false };
      const step: DeletionStep = { deleted: 0, removedFilePaths: [], finished: false, busy: false };
      // Small batches, newest rows first, until the slice has run out (at least one batch per transaction).
      for (;;) {
        const deleted = this.deleteNextRows(archive.conversation_id, archiveId, step.removedFilePaths);
        if (deleted === 0) {
          // Its successor after /reset named it; the archive row keeps the id.
          this.db.run("UPDATE conversations SET previous_conversation_id = NULL WHERE previous_conversation_id = ?", archive.conversation_id);
          this.db.run("DELETE FROM conversations WHERE conversation_id = ?", archive.conversation_id);
          this.db.run("UPDATE retention_archives SET state = 'done' WHERE archive_id = ?", archiveId);
          return { ...step, deleted: step.deleted + 1, finished: true };
        }
        step.deleted += deleted;
        if (deadline.expired()) return step;
      }
    }, { slice: deadline });
  }

  /**
   * Deletes the next small batch of a conversation's rows, in the order nothing is left pointing at a deleted row:
   * context items, summaries (newest first: a condensed summary is newer than those it condenses), messages, large
   * files (their paths go to `removedFilePaths`), turns, repair records. Returns the rows deleted; 0 once only the row itself is left.
   */
  private deleteNextRows(conversationId: number, archiveId: number, removedFilePaths: string[]): number {
    const items = this.db.tuples<[number]>(
      "SELECT ordinal FROM context_items WHERE conversation_id = ? ORDER BY ordinal DESC LIMIT ?", conversationId, DELETE_BATCH.contextItems,
    );
    if (items.length > 0) {
      this.db.run("DELETE FROM context_items WHERE conversation_id = ? AND ordinal >= ?", conversationId, items.at(-1)![0]);
      return items.length;
    }
    const summaries = this.db.tuples<[number, string]>(
      "SELECT id, summary_id FROM summaries WHERE conversation_id = ? ORDER BY id DESC LIMIT ?", conversationId, DELETE_BATCH.summaries,
    );
    if (summaries.length > 0) {
      const ids = JSON.stringify(summaries.map((row) => row[0]));
      for (const [, summaryId] of summaries) this.recordArchivedId(summaryId, archiveId);
      this.db.run("DELETE FROM summary_parents WHERE summary_id IN (SELECT value FROM json_each(?))", ids);
      this.db.run("DELETE FROM summary_parents WHERE parent_summary_id IN (SELECT value FROM json_each(?))", ids);
      this.db.run("DELETE FROM summary_messages WHERE summary_id IN (SELECT value FROM json_each(?))", ids);
      this.db.run("DELETE FROM summaries WHERE id IN (SELECT value FROM json_each(?))", ids);
      lowerIndexedThrough(this.db);
      return summaries.length;
    }
    const messages = this.db.tuples<[number]>(
      "SELECT message_id FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?", conversationId, DELETE_BATCH.messages,
    );
    if (messages.length > 0) {
      const ids = JSON.stringify(messages.map((row) => row[0]));
      this.db.run("DELETE FROM message_parts WHERE message_id IN (SELECT value FROM json_each(?))", ids);
      this.db.run("DELETE FROM messages WHERE message_id IN (SELECT value FROM json_each(?))", ids);
      lowerIndexedThrough(this.db);
      return messages.length;
    }
    const files = this.db.tuples<[string, string]>(
      "SELECT file_id, storage_path FROM large_files WHERE conversation_id = ? LIMIT ?", conversationId, DELETE_BATCH.files,
    );
    if (files.length > 0) {
      for (const [fileId, path] of files) {
        this.recordArchivedId(fileId, archiveId);
        this.db.run("DELETE FROM large_files WHERE file_id = ?", fileId);
        removedFilePaths.push(resolveRecordedPath(this.db.path, path));
      }
      return files.length;
    }
    const turns = this.db.run(
      `DELETE FROM committed_turns WHERE conversation_id = ?1 AND advancement_key IN
         (SELECT advancement_key FROM committed_turns WHERE conversation_id = ?1 LIMIT ?2)`,
      conversationId, DELETE_BATCH.turns,
    ).changes;
    if (turns > 0) return turns;
    // Undo records of repairs to its summaries (they reference the conversation: without this its row could not go).
    return this.db.run(
      "DELETE FROM summary_repairs WHERE repair_id IN (SELECT repair_id FROM summary_repairs WHERE conversation_id = ?1 LIMIT ?2)",
      conversationId, DELETE_BATCH.turns,
    ).changes;
  }

  async unfinishedDeletions(): Promise<ArchiveRecord[]> {
    return this.db.all<ArchiveRow>("SELECT * FROM retention_archives WHERE state = 'deleting' ORDER BY archive_id").map(toArchive);
  }

  async storedFileIds(): Promise<Set<string>> {
    return new Set(this.db.tuples<[string]>("SELECT file_id FROM large_files").map((row) => row[0]));
  }

  async estimatePrunable(createdBefore: number): Promise<{ messages: number; tokens: number }> {
    // Leaf summaries wholly older than the cut, less what earlier runs archived (the oldest first, so older than any
    // cut a later run uses): one pass over the summaries table, one over the archive list.
    const row = this.db.get<{ covered: number; tokens: number; archived: number }>(
      `SELECT coalesce(sum(source_message_count), 0) AS covered, coalesce(sum(source_token_count), 0) AS tokens,
              (SELECT coalesce(sum(message_count), 0) FROM retention_archives WHERE kind = 'messages') AS archived
       FROM summaries WHERE kind = 'leaf' AND latest_at < ?`,
      createdBefore,
    )!;
    const messages = Math.max(0, row.covered - row.archived);
    return { messages, tokens: row.covered > 0 ? Math.round((row.tokens * messages) / row.covered) : 0 };
  }

  async growth(since: number): Promise<{ messages: number; bytesPerMessage: number }> {
    // min and max apart: SQLite answers one min() or max() from the end of the key, both in one SELECT by a full scan
    // (29 ms at a million messages).
    const bounds = this.db.get<{ low: number | null; high: number | null; stored: number }>(
      `SELECT (SELECT min(message_id) FROM messages) AS low, (SELECT max(message_id) FROM messages) AS high,
              (SELECT coalesce(sum(message_count), 0) FROM conversations) AS stored`,
    )!;
    const bytesPerMessage = bounds.stored > 0 ? this.spaceNow().usedBytes / bounds.stored : 0;
    if (bounds.low === null || bounds.high === null) return { messages: 0, bytesPerMessage };
    return { messages: Math.max(0, bounds.high - this.firstStoredSince(since, bounds.low, bounds.high) + 1), bytesPerMessage };
  }

  /**
   * The first message id stored at or after `since`: from the hourly marks of schema 14 (by when rows were stored,
   * whatever their own times), and for rows stored before the first mark, from their own times (by bisection over the
   * ids, about 20 lookups). Plan: SEARCH message_stored_hours USING INTEGER PRIMARY KEY (rowid>?).
   */
  private firstStoredSince(since: number, lowId: number, highId: number): number {
    const hour = Math.floor(since / 3_600_000);
    const first = this.db.tuples<[number, number]>("SELECT hour, first_message_id FROM message_stored_hours ORDER BY hour LIMIT 1")[0];
    if (first && hour >= first[0]) {
      const mark = this.db.tuples<[number]>("SELECT first_message_id FROM message_stored_hours WHERE hour >= ? ORDER BY hour LIMIT 1", hour)[0];
      return mark ? mark[0] : highId + 1;
    }
    // Rows older than the first mark (or no mark at all): their own times, ids growing with them closely enough.
    const end = first ? Math.min(first[1], highId + 1) : highId + 1;
    let low = lowId;
    let high = end;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const at = this.db.get<{ message_id: number; created_at: number }>(
        "SELECT message_id, created_at FROM messages WHERE message_id >= ? ORDER BY message_id LIMIT 1", middle,
      );
      if (!at || at.message_id >= end || at.created_at >= since) high = middle;
      else low = at.message_id + 1;
    }
    return low;
  }

  async incrementalVacuum(pages: number, slice?: SliceDeadline): Promise<number> {
    const count = Math.max(1, Math.floor(pages));
    return this.db.write(() => {
      const before = this.pagesNow().freePages;
      this.db.raw.exec(`PRAGMA incremental_vacuum(${count})`);
      return before - this.pagesNow().freePages;
    }, slice ? { slice } : {});
  }

  async reclaimSpace(options: { full: boolean }): Promise<void> {
    if (options.full) {
      this.db.raw.exec("PRAGMA auto_vacuum = INCREMENTAL");
      this.db.raw.exec("VACUUM");
    }
    this.db.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }

  async archivePathsOf(conversationId: ConversationId): Promise<string[]> {
    // Plan: SEARCH retention_archives USING INDEX retention_archives_conversation (conversation_id=?).
    return this.db.tuples<[string]>(
      "SELECT DISTINCT path FROM retention_archives WHERE conversation_id = ? ORDER BY archive_id", conversationId,
    ).map((row) => row[0]);
  }

  async lastArchiveAt(): Promise<number | null> {
    return this.db.tuples<[number | null]>("SELECT max(created_at) FROM retention_archives")[0]?.[0] ?? null;
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

  private partsOf(messageId: number): PrunableMessage["parts"] {
    return this.db.tuples<[number, string, number | null, number | null, string | null, string | null]>(
      "SELECT ordinal, kind, text_start, text_end, data, meta FROM message_parts WHERE message_id = ? ORDER BY ordinal", messageId,
    ).map((row) => ({ ordinal: row[0], kind: row[1], start: row[2], end: row[3], data: row[4], meta: row[5] }));
  }
}

/**
 * After rows were deleted: no index high-water mark above the newest row left. SQLite gives a new row the id after the
 * highest one, so once the newest rows are gone, ids are handed out again; a mark left above them would count the new
 * rows as indexed (they never would be: not searchable, and doctor finds the index out of sync). Every row at or below
 * the lowered mark was indexed before, so nothing is indexed twice. Runs inside the deleting transaction.
 */
export function lowerIndexedThrough(db: Database): void {
  db.run("UPDATE search_index_state SET through = min(through, (SELECT coalesce(max(message_id), 0) FROM messages)) WHERE name = 'messages_fts'");
  db.run("UPDATE search_index_state SET through = min(through, (SELECT coalesce(max(id), 0) FROM summaries)) WHERE name = 'summaries_fts'");
  // The backlog's trigram index (sqlite-backlog-trigram.ts): a row id used again is not covered by what it held.
  db.run("UPDATE search_index_state SET through = min(through, (SELECT coalesce(max(message_id), 0) FROM messages)) WHERE name = 'backlog_trigram'");
  // The backlog's blocks (sqlite-backlog-blocks.ts) likewise: those reaching above the newest message go, and their
  // watermark is the last one kept.
  db.run("DELETE FROM backlog_blocks WHERE last_id > (SELECT coalesce(max(message_id), 0) FROM messages)");
  db.run("UPDATE search_index_state SET through = min(through, (SELECT coalesce(max(last_id), 0) FROM backlog_blocks)) WHERE name = 'backlog_blocks'");
}
