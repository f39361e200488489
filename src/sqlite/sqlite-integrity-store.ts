/**
 * The SQL behind the IntegrityChecker: set-based queries that each verify one invariant over one conversation
 * (or one table) and return the offending rows, at most FINDING_LIMIT of them. Repairs that only recompute
 * derived data live here too. Every query is read-only except the explicit repair methods.
 */
import type { Database } from "./database.js";
import { resolveRecordedPath } from "./stored-file-path.js";
import type { ConversationId } from "../records.js";
import { parseObject, unreadableConversationColumns } from "../store/conversation-columns.js";
import type { IntegrityStore, ItemForPairing, SearchIndexName, SummaryMismatch } from "../store/integrity-store.js";
import { SqliteSearchIndex } from "./sqlite-search-index.js";
import { findTimestampsOutOfRange, repairTimestampsNow } from "./sqlite-timestamp-repair.js";

const FINDING_LIMIT = 50;

/** A tool result's call id from its meta JSON; anything but a string (hostile input) counts as none. */
function toolCallIdOf(meta: string | null): string | null {
  const id = meta ? parseObject(meta)?.toolCallId : undefined;
  return typeof id === "string" ? id : null;
}

/** Conversation columns doctor --repair may clear: unset is a state the engine handles (see clearUnreadableColumns). */
const CLEARABLE_COLUMNS = ["bootstrap_state", "last_compaction"];

export class SqliteIntegrityStore implements IntegrityStore {
  private readonly index: SqliteSearchIndex;

  constructor(private readonly db: Database) {
    this.index = new SqliteSearchIndex(db);
  }

  async conversationIds(afterId: number, limit: number): Promise<ConversationId[]> {
    return this.db
      // A conversation retention is deleting (archive written, rows going newest first) is no longer history to check.
      .all<{ id: number }>(
        `SELECT conversation_id AS id FROM conversations WHERE conversation_id > ? AND coalesce(archive_reason, '') <> 'lcm-retention:deleting'
         ORDER BY conversation_id LIMIT ?`, afterId, limit,
      )
      .map((row) => row.id);
  }

  async summariesWithoutSource(conversationId: ConversationId): Promise<string[]> {
    return this.db
      .all<{ summary_id: string }>(
        `SELECT s.summary_id FROM summaries s WHERE s.conversation_id = ?
           AND NOT EXISTS (SELECT 1 FROM summary_messages sm WHERE sm.summary_id = s.id)
           AND NOT EXISTS (SELECT 1 FROM summary_parents sp WHERE sp.summary_id = s.id) LIMIT ?`,
        conversationId, FINDING_LIMIT,
      )
      .map((row) => row.summary_id);
  }

  async danglingContextItems(conversationId: ConversationId): Promise<number[]> {
    return this.db
      .all<{ ordinal: number }>(
        `SELECT ci.ordinal FROM context_items ci
           LEFT JOIN messages m ON m.message_id = ci.message_id
           LEFT JOIN summaries s ON s.id = ci.summary_id
         WHERE ci.conversation_id = ?
           AND ((ci.message_id IS NOT NULL AND (m.message_id IS NULL OR m.conversation_id <> ci.conversation_id))
             OR (ci.summary_id IS NOT NULL AND (s.id IS NULL OR s.conversation_id <> ci.conversation_id)))
         LIMIT ?`,
        conversationId, FINDING_LIMIT,
      )
      .map((row) => row.ordinal);
  }

  async contextOutOfOrder(conversationId: ConversationId, fromOrdinal = Number.MIN_SAFE_INTEGER): Promise<{ ordinal: number; start: number; previousEnd: number }[]> {
    return this.db.all(
      `WITH items AS (
         SELECT ci.ordinal, coalesce(m.seq, s.seq_start) AS lo, coalesce(m.seq, s.seq_end) AS hi
         FROM context_items ci
           LEFT JOIN messages m ON m.message_id = ci.message_id
           LEFT JOIN summaries s ON s.id = ci.summary_id
         WHERE ci.conversation_id = ? AND ci.ordinal >= ?)
       SELECT ordinal, lo AS start, previous_end AS previousEnd
       FROM (SELECT ordinal, lo, lag(hi) OVER (ORDER BY ordinal) AS previous_end FROM items)
       WHERE previous_end IS NOT NULL AND lo <= previous_end LIMIT ?`,
      conversationId, fromOrdinal, FINDING_LIMIT,
    );
  }

  async messageSeqStats(conversationId: ConversationId): Promise<{ count: number; minSeq: number | null; maxSeq: number | null }> {
    return this.db.get(
      "SELECT count(*) AS count, min(seq) AS minSeq, max(seq) AS maxSeq FROM messages WHERE conversation_id = ?", conversationId,
    )!;
  }

  async coverage(conversationId: ConversationId): Promise<{ visibleMessages: number; inContext: number; summarized: number }> {
    return this.db.get(
      `SELECT
         (SELECT count(*) FROM messages WHERE conversation_id = ?1 AND (flags & 8) = 0) AS visibleMessages,
         (SELECT count(*) FROM context_items WHERE conversation_id = ?1 AND message_id IS NOT NULL) AS inContext,
         (SELECT count(*) FROM summary_messages sm JOIN summaries s ON s.id = sm.summary_id WHERE s.conversation_id = ?1) AS summarized`,
      conversationId,
    )!;
  }

  /**
   * Spans are UTF-16 offsets. SQLite's length() stops at the first NUL character, so the bound used is the
   * content's UTF-8 byte length, which is never smaller than its UTF-16 length: no false alarms, and any span
   * past the end of the text is still caught.
   */
  async partSpansOutOfRange(conversationId: ConversationId): Promise<number[]> {
    return this.db
      .all<{ message_id: number }>(
        `SELECT DISTINCT p.message_id FROM message_parts p JOIN messages m ON m.message_id = p.message_id
         WHERE m.conversation_id = ? AND p.text_start IS NOT NULL
           AND (p.text_start < 0 OR p.text_end < p.text_start OR p.text_end > length(CAST(m.content AS BLOB))) LIMIT ?`,
        conversationId, FINDING_LIMIT,
      )
      .map((row) => row.message_id);
  }

  async summaryMetadataMismatches(conversationId: ConversationId): Promise<SummaryMismatch[]> {
    const leaves = this.db.all<SummaryMismatch>(
      `SELECT s.summary_id AS summaryId, 'leaf sources' AS what FROM summaries s
         JOIN (SELECT sm.summary_id AS id, min(m.seq) AS lo, max(m.seq) AS hi, count(*) AS n FROM summary_messages sm
               JOIN messages m ON m.message_id = sm.message_id GROUP BY sm.summary_id) src ON src.id = s.id
       WHERE s.conversation_id = ? AND (s.depth <> 0 OR s.descendant_count <> 0 OR s.seq_start <> src.lo
         OR s.seq_end <> src.hi OR s.source_message_count <> src.n) LIMIT ?`,
      conversationId, FINDING_LIMIT,
    );
    const condensed = this.db.all<SummaryMismatch>(
      `SELECT s.summary_id AS summaryId, 'condensed sources' AS what FROM summaries s
         JOIN (SELECT sp.summary_id AS id, max(p.depth) AS depth, min(p.seq_start) AS lo, max(p.seq_end) AS hi,
                      sum(p.descendant_count + 1) AS descendants, sum(p.source_message_count) AS messages
               FROM summary_parents sp JOIN summaries p ON p.id = sp.parent_summary_id GROUP BY sp.summary_id) src ON src.id = s.id
       WHERE s.conversation_id = ? AND (s.depth <> src.depth + 1 OR s.seq_start <> src.lo OR s.seq_end <> src.hi
         OR s.descendant_count <> src.descendants OR s.source_message_count <> src.messages) LIMIT ?`,
      conversationId, FINDING_LIMIT,
    );
    return [...leaves, ...condensed];
  }

  async counterMismatch(conversationId: ConversationId): Promise<string | null> {
    const row = this.db.get<Record<string, number>>(
      `SELECT c.message_count AS storedMessages, c.message_tokens AS storedMessageTokens, c.context_tokens AS storedContextTokens,
              c.context_raw_tokens AS storedRawTokens, c.context_items AS storedItems,
              (SELECT count(*) FROM messages WHERE conversation_id = c.conversation_id) AS messages,
              (SELECT coalesce(sum(token_count), 0) FROM messages WHERE conversation_id = c.conversation_id) AS messageTokens,
              (SELECT coalesce(sum(token_count), 0) FROM context_items WHERE conversation_id = c.conversation_id) AS contextTokens,
              (SELECT coalesce(sum(token_count), 0) FROM context_items WHERE conversation_id = c.conversation_id AND message_id IS NOT NULL) AS rawTokens,
              (SELECT count(*) FROM context_items WHERE conversation_id = c.conversation_id) AS items
       FROM conversations c WHERE c.conversation_id = ?`,
      conversationId,
    );
    if (!row) return null;
    const pairs: [string, string][] = [
      ["storedMessages", "messages"], ["storedMessageTokens", "messageTokens"], ["storedContextTokens", "contextTokens"],
      ["storedRawTokens", "rawTokens"], ["storedItems", "items"],
    ];
    const wrong = pairs.filter(([stored, actual]) => row[stored] !== row[actual]);
    return wrong.length === 0 ? null : wrong.map(([stored, actual]) => `${actual}: counter ${row[stored]}, rows ${row[actual]}`).join("; ");
  }

  async itemsForPairing(conversationId: ConversationId, fromOrdinal: number): Promise<ItemForPairing[]> {
    return this.db
      .all<{ ordinal: number; flags: number; meta: string | null; call_ids: string | null }>(
        `SELECT ci.ordinal, ci.flags, CASE WHEN ci.flags & 2 THEN m.meta END AS meta,
                CASE WHEN ci.flags & 1 THEN (SELECT json_group_array(json_extract(p.meta, '$.id')) FROM message_parts p
                                             WHERE p.message_id = ci.message_id AND p.kind = 'toolCall') END AS call_ids
         FROM context_items ci LEFT JOIN messages m ON m.message_id = ci.message_id
         WHERE ci.conversation_id = ? AND ci.ordinal >= ? ORDER BY ci.ordinal`,
        conversationId, fromOrdinal,
      )
      .map((row) => ({
        ordinal: row.ordinal,
        flags: row.flags,
        toolCallId: toolCallIdOf(row.meta),
        callIds: row.call_ids ? (JSON.parse(row.call_ids) as (string | null)[]).filter((id): id is string => typeof id === "string") : [],
      }));
  }

  async ordinalOfNthNewestItem(conversationId: ConversationId, n: number): Promise<number> {
    const row = this.db.get<{ ordinal: number }>(
      "SELECT ordinal FROM context_items WHERE conversation_id = ? ORDER BY ordinal DESC LIMIT 1 OFFSET ?", conversationId, n - 1,
    );
    return row?.ordinal ?? Number.MIN_SAFE_INTEGER;
  }

  /** Each stored file of the conversation, its recorded path resolved against the database's folder. */
  async largeFiles(conversationId: ConversationId): Promise<{ fileId: string; storagePath: string }[]> {
    return this.db.all<{ fileId: string; storagePath: string }>(
      "SELECT file_id AS fileId, storage_path AS storagePath FROM large_files WHERE conversation_id = ?", conversationId,
    ).map((file) => ({ fileId: file.fileId, storagePath: resolveRecordedPath(this.db.path, file.storagePath) }));
  }

  async ftsIntegrity(index: SearchIndexName): Promise<string | null> {
    // Stored content is not caught up first (it may be gigabytes): its index holds exactly the chunks it lists.
    if (index === "files") return await this.index.files.verify();
    await this.index.indexPending();
    return await this.index.verify(`${index}_fts`);
  }

  async rebuildFts(index: SearchIndexName): Promise<void> {
    // The indexes are contentless (schema 8): started over, then filled again in batches as at first.
    if (index === "files") await this.index.files.rebuild();
    else await this.index.rebuild(`${index}_fts`);
  }

  async timestampsOutOfRange(conversationId: ConversationId): Promise<{ messageIds: number[]; summaryIds: string[] }> {
    return findTimestampsOutOfRange(this.db, conversationId, FINDING_LIMIT);
  }

  async repairTimestamps(conversationId: ConversationId): Promise<{ messages: number; summaries: number }> {
    return this.db.write(() => repairTimestampsNow(this.db, conversationId));
  }

  async unreadableValues(conversationId: ConversationId): Promise<{ subject: string; what: string }[]> {
    const row = this.db.get<{ bootstrap_state: string | null; last_compaction: string | null; last_reset: string | null }>(
      "SELECT bootstrap_state, last_compaction, last_reset FROM conversations WHERE conversation_id = ?", conversationId,
    );
    const found = row ? unreadableConversationColumns(row).map((column) => ({ subject: `conversation ${conversationId}`, what: column })) : [];
    // Plans: SEARCH messages USING INDEX sqlite_autoindex_messages_2 (conversation_id=?), then each message's parts by primary key.
    for (const { message_id } of this.db.all<{ message_id: number }>(
      "SELECT message_id FROM messages WHERE conversation_id = ? AND NOT (json_valid(meta) AND json_type(meta) = 'object') LIMIT ?",
      conversationId, FINDING_LIMIT,
    )) found.push({ subject: `message ${message_id}`, what: "meta" });
    for (const { message_id } of this.db.all<{ message_id: number }>(
      `SELECT DISTINCT p.message_id FROM messages m JOIN message_parts p ON p.message_id = m.message_id
       WHERE m.conversation_id = ? AND ((p.meta IS NOT NULL AND NOT json_valid(p.meta)) OR (p.kind = 'raw' AND NOT json_valid(coalesce(p.data, 'null'))))
       LIMIT ?`, conversationId, FINDING_LIMIT,
    )) found.push({ subject: `message ${message_id}`, what: "a part's meta or data" });
    for (const { summary_id } of this.db.all<{ summary_id: string }>(
      "SELECT summary_id FROM summaries WHERE conversation_id = ? AND NOT (json_valid(file_ids) AND json_type(file_ids) = 'array') LIMIT ?",
      conversationId, FINDING_LIMIT,
    )) found.push({ subject: summary_id, what: "file_ids" });
    return found;
  }

  async clearUnreadableColumns(conversationId: ConversationId): Promise<string[]> {
    return this.db.write(() => {
      const row = this.db.get<{ bootstrap_state: string | null; last_compaction: string | null; last_reset: string | null }>(
        "SELECT bootstrap_state, last_compaction, last_reset FROM conversations WHERE conversation_id = ?", conversationId,
      );
      const columns = row ? unreadableConversationColumns(row).filter((column) => CLEARABLE_COLUMNS.includes(column)) : [];
      for (const column of columns) this.db.run(`UPDATE conversations SET ${column} = NULL WHERE conversation_id = ?`, conversationId);
      return columns;
    });
  }

  async recountConversation(conversationId: ConversationId): Promise<void> {
    await this.db.write(() =>
      this.db.run(
        `UPDATE conversations SET
           message_count = (SELECT count(*) FROM messages WHERE conversation_id = ?1),
           message_tokens = (SELECT coalesce(sum(token_count), 0) FROM messages WHERE conversation_id = ?1),
           context_tokens = (SELECT coalesce(sum(token_count), 0) FROM context_items WHERE conversation_id = ?1),
           context_raw_tokens = (SELECT coalesce(sum(token_count), 0) FROM context_items WHERE conversation_id = ?1 AND message_id IS NOT NULL),
           context_items = (SELECT count(*) FROM context_items WHERE conversation_id = ?1)
         WHERE conversation_id = ?1`,
        conversationId,
      ),
    );
  }
}
