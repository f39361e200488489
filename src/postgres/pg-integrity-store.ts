/**
 * The PostgreSQL side of IntegrityStore: the same invariants as the SQLite checks, each one set-based statement over
 * one conversation returning at most FINDING_LIMIT offending rows, and the non-destructive repairs (recount, clear an
 * unreadable column, times out of range: pg-timestamp-repair.ts), each one transaction. JSON validity is asked of
 * lcm_json_type (migration 3), which answers NULL for text that is not JSON instead of failing the statement.
 */
import { isAbsolute, resolve } from "node:path";
import type { ConversationId } from "../records.js";
import { parseObject, unreadableConversationColumns } from "../store/conversation-columns.js";
import type { IntegrityStore, ItemForPairing, SearchIndexName, SummaryMismatch } from "../store/integrity-store.js";
import { fromPgText, type PgDatabase } from "./pg-database.js";
import { findTimestampsOutOfRange, repairTimestampsIn } from "./pg-timestamp-repair.js";

const FINDING_LIMIT = 50;

/** Conversation columns doctor --repair may clear: unset is a state the engine handles (see clearUnreadableColumns). */
const CLEARABLE_COLUMNS = ["bootstrap_state", "last_compaction"] as const;

/** What checks and rebuilds the full-text indexes (pg-search-check.ts); without one, ftsIntegrity finds nothing. */
export interface PgSearchIndexCheck {
  verify(index: SearchIndexName): Promise<string | null>;
  rebuild(index: SearchIndexName): Promise<void>;
}

export class PgIntegrityStore implements IntegrityStore {
  constructor(private readonly database: PgDatabase, private readonly searchIndex: PgSearchIndexCheck | null = null) {}

  async conversationIds(afterId: number, limit: number): Promise<ConversationId[]> {
    // A conversation retention is deleting (archive written, rows going newest first) is no longer history to check.
    return (await this.database.rows<{ id: number }>(
      `SELECT conversation_id AS id FROM conversations WHERE conversation_id > $1 AND coalesce(archive_reason, '') <> 'lcm-retention:deleting'
       ORDER BY conversation_id LIMIT $2`, [afterId, limit],
    )).map((row) => row.id);
  }

  async summariesWithoutSource(conversationId: ConversationId): Promise<string[]> {
    return (await this.database.rows<{ summary_id: string }>(
      `SELECT s.summary_id FROM summaries s WHERE s.conversation_id = $1
         AND NOT EXISTS (SELECT 1 FROM summary_messages sm WHERE sm.summary_id = s.id)
         AND NOT EXISTS (SELECT 1 FROM summary_parents sp WHERE sp.summary_id = s.id) LIMIT $2`,
      [conversationId, FINDING_LIMIT],
    )).map((row) => fromPgText(row.summary_id));
  }

  async danglingContextItems(conversationId: ConversationId): Promise<number[]> {
    return (await this.database.rows<{ ordinal: number }>(
      `SELECT ci.ordinal FROM context_items ci
         LEFT JOIN messages m ON m.message_id = ci.message_id
         LEFT JOIN summaries s ON s.id = ci.summary_id
       WHERE ci.conversation_id = $1
         AND ((ci.message_id IS NOT NULL AND (m.message_id IS NULL OR m.conversation_id <> ci.conversation_id))
           OR (ci.summary_id IS NOT NULL AND (s.id IS NULL OR s.conversation_id <> ci.conversation_id)))
       ORDER BY ci.ordinal LIMIT $2`,
      [conversationId, FINDING_LIMIT],
    )).map((row) => row.ordinal);
  }

  async contextOutOfOrder(conversationId: ConversationId, fromOrdinal = Number.MIN_SAFE_INTEGER): Promise<{ ordinal: number; start: number; previousEnd: number }[]> {
    return (await this.database.rows<{ ordinal: number; start: number; previous_end: number }>(
      `WITH items AS (
         SELECT ci.ordinal, coalesce(m.seq, s.seq_start) AS lo, coalesce(m.seq, s.seq_end) AS hi
         FROM context_items ci
           LEFT JOIN messages m ON m.message_id = ci.message_id
           LEFT JOIN summaries s ON s.id = ci.summary_id
         WHERE ci.conversation_id = $1 AND ci.ordinal >= $2)
       SELECT ordinal, lo AS start, previous_end
       FROM (SELECT ordinal, lo, lag(hi) OVER (ORDER BY ordinal) AS previous_end FROM items) ordered
       WHERE previous_end IS NOT NULL AND lo <= previous_end ORDER BY ordinal LIMIT $3`,
      [conversationId, fromOrdinal, FINDING_LIMIT],
    )).map((row) => ({ ordinal: row.ordinal, start: row.start, previousEnd: row.previous_end }));
  }

  async messageSeqStats(conversationId: ConversationId): Promise<{ count: number; minSeq: number | null; maxSeq: number | null }> {
    const row = await this.database.row<{ count: number; min_seq: number | null; max_seq: number | null }>(
      "SELECT count(*) AS count, min(seq) AS min_seq, max(seq) AS max_seq FROM messages WHERE conversation_id = $1", [conversationId],
    );
    return { count: row?.count ?? 0, minSeq: row?.min_seq ?? null, maxSeq: row?.max_seq ?? null };
  }

  async coverage(conversationId: ConversationId): Promise<{ visibleMessages: number; inContext: number; summarized: number }> {
    const row = await this.database.row<{ visible: number; in_context: number; summarized: number }>(
      `SELECT
         (SELECT count(*) FROM messages WHERE conversation_id = $1 AND (flags & 8) = 0) AS visible,
         (SELECT count(*) FROM context_items WHERE conversation_id = $1 AND message_id IS NOT NULL) AS in_context,
         (SELECT count(*) FROM summary_messages sm JOIN summaries s ON s.id = sm.summary_id WHERE s.conversation_id = $1) AS summarized`,
      [conversationId],
    );
    return { visibleMessages: row?.visible ?? 0, inContext: row?.in_context ?? 0, summarized: row?.summarized ?? 0 };
  }

  /**
   * Spans are UTF-16 offsets of the text as the host gave it. The bound is the stored text's UTF-8 byte length, never
   * smaller than its UTF-16 length (nor is an escaped NUL's, pg-database.ts toPgText): no false alarms, and any span
   * past the end of the text is still caught.
   */
  async partSpansOutOfRange(conversationId: ConversationId): Promise<number[]> {
    return (await this.database.rows<{ message_id: number }>(
      `SELECT DISTINCT p.message_id FROM message_parts p JOIN messages m ON m.message_id = p.message_id
       WHERE m.conversation_id = $1 AND p.text_start IS NOT NULL
         AND (p.text_start < 0 OR p.text_end < p.text_start OR p.text_end > octet_length(m.content)) LIMIT $2`,
      [conversationId, FINDING_LIMIT],
    )).map((row) => row.message_id);
  }

  async summaryMetadataMismatches(conversationId: ConversationId): Promise<SummaryMismatch[]> {
    const leaves = await this.database.rows<{ summary_id: string }>(
      `SELECT s.summary_id FROM summaries s
         JOIN (SELECT sm.summary_id AS id, min(m.seq) AS lo, max(m.seq) AS hi, count(*) AS n FROM summary_messages sm
               JOIN messages m ON m.message_id = sm.message_id GROUP BY sm.summary_id) src ON src.id = s.id
       WHERE s.conversation_id = $1 AND (s.depth <> 0 OR s.descendant_count <> 0 OR s.seq_start <> src.lo
         OR s.seq_end <> src.hi OR s.source_message_count <> src.n) LIMIT $2`,
      [conversationId, FINDING_LIMIT],
    );
    const condensed = await this.database.rows<{ summary_id: string }>(
      `SELECT s.summary_id FROM summaries s
         JOIN (SELECT sp.summary_id AS id, max(p.depth) AS depth, min(p.seq_start) AS lo, max(p.seq_end) AS hi,
                      sum(p.descendant_count + 1) AS descendants, sum(p.source_message_count) AS messages
               FROM summary_parents sp JOIN summaries p ON p.id = sp.parent_summary_id GROUP BY sp.summary_id) src ON src.id = s.id
       WHERE s.conversation_id = $1 AND (s.depth <> src.depth + 1 OR s.seq_start <> src.lo OR s.seq_end <> src.hi
         OR s.descendant_count <> src.descendants OR s.source_message_count <> src.messages) LIMIT $2`,
      [conversationId, FINDING_LIMIT],
    );
    return [
      ...leaves.map((row) => ({ summaryId: fromPgText(row.summary_id), what: "leaf sources" })),
      ...condensed.map((row) => ({ summaryId: fromPgText(row.summary_id), what: "condensed sources" })),
    ];
  }

  async counterMismatch(conversationId: ConversationId): Promise<string | null> {
    const row = await this.database.row<Record<string, number>>(
      `SELECT c.message_count AS "storedMessages", c.message_tokens AS "storedMessageTokens", c.context_tokens AS "storedContextTokens",
              c.context_raw_tokens AS "storedRawTokens", c.context_items AS "storedItems",
              (SELECT count(*) FROM messages WHERE conversation_id = c.conversation_id) AS messages,
              (SELECT coalesce(sum(token_count), 0)::bigint FROM messages WHERE conversation_id = c.conversation_id) AS "messageTokens",
              (SELECT coalesce(sum(token_count), 0)::bigint FROM context_items WHERE conversation_id = c.conversation_id) AS "contextTokens",
              (SELECT coalesce(sum(token_count), 0)::bigint FROM context_items WHERE conversation_id = c.conversation_id AND message_id IS NOT NULL) AS "rawTokens",
              (SELECT count(*) FROM context_items WHERE conversation_id = c.conversation_id) AS items
       FROM conversations c WHERE c.conversation_id = $1`,
      [conversationId],
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
    // The parts' meta is read as text and parsed here: a part whose meta is not JSON (hostile input) names no call.
    const rows = await this.database.rows<{ ordinal: number; flags: number; meta: string | null; call_metas: string[] | null }>(
      `SELECT ci.ordinal, ci.flags, CASE WHEN ci.flags & 2 <> 0 THEN m.meta END AS meta,
              CASE WHEN ci.flags & 1 <> 0 THEN (SELECT array_agg(p.meta ORDER BY p.ordinal) FROM message_parts p
                                                WHERE p.message_id = ci.message_id AND p.kind = 'toolCall') END AS call_metas
       FROM context_items ci LEFT JOIN messages m ON m.message_id = ci.message_id
       WHERE ci.conversation_id = $1 AND ci.ordinal >= $2 ORDER BY ci.ordinal`,
      [conversationId, fromOrdinal],
    );
    return rows.map((row) => ({
      ordinal: row.ordinal,
      flags: row.flags,
      toolCallId: stringField(row.meta, "toolCallId"),
      callIds: (row.call_metas ?? []).map((meta) => stringField(meta, "id")).filter((id): id is string => id !== null),
    }));
  }

  async ordinalOfNthNewestItem(conversationId: ConversationId, n: number): Promise<number> {
    const row = await this.database.row<{ ordinal: number }>(
      "SELECT ordinal FROM context_items WHERE conversation_id = $1 ORDER BY ordinal DESC LIMIT 1 OFFSET $2", [conversationId, Math.max(0, n - 1)],
    );
    return row?.ordinal ?? Number.MIN_SAFE_INTEGER;
  }

  /**
   * Each stored file of the conversation, and whether the database keeps its content (migration 8). A server has no
   * database folder: a recorded relative path is resolved against the working directory.
   */
  async largeFiles(conversationId: ConversationId): Promise<{ fileId: string; storagePath: string; keptInDatabase: boolean }[]> {
    return (await this.database.rows<{ file_id: string; storage_path: string; kept: boolean }>(
      `SELECT l.file_id, l.storage_path, EXISTS (SELECT 1 FROM large_file_content c WHERE c.file_id = l.file_id) AS kept
       FROM large_files l WHERE l.conversation_id = $1 ORDER BY l.file_id`, [conversationId],
    )).map((file) => {
      const path = fromPgText(file.storage_path);
      return { fileId: fromPgText(file.file_id), storagePath: isAbsolute(path) ? path : resolve(path), keptInDatabase: file.kept };
    });
  }

  async ftsIntegrity(index: SearchIndexName): Promise<string | null> {
    return this.searchIndex ? await this.searchIndex.verify(index) : null;
  }

  async rebuildFts(index: SearchIndexName): Promise<void> {
    if (this.searchIndex) await this.searchIndex.rebuild(index);
  }

  async timestampsOutOfRange(conversationId: ConversationId): Promise<{ messageIds: number[]; summaryIds: string[] }> {
    return findTimestampsOutOfRange(this.database, conversationId, FINDING_LIMIT);
  }

  async repairTimestamps(conversationId: ConversationId): Promise<{ messages: number; summaries: number }> {
    return this.database.transaction((tx) => repairTimestampsIn(tx, conversationId));
  }

  async unreadableValues(conversationId: ConversationId): Promise<{ subject: string; what: string }[]> {
    const row = await this.database.row<{ bootstrap_state: string | null; last_compaction: string | null; last_reset: string | null }>(
      "SELECT bootstrap_state, last_compaction, last_reset FROM conversations WHERE conversation_id = $1", [conversationId],
    );
    const found = row ? unreadableConversationColumns(row).map((column) => ({ subject: `conversation ${conversationId}`, what: column })) : [];
    for (const { message_id } of await this.database.rows<{ message_id: number }>(
      "SELECT message_id FROM messages WHERE conversation_id = $1 AND lcm_json_type(meta) IS DISTINCT FROM 'object' ORDER BY seq LIMIT $2",
      [conversationId, FINDING_LIMIT],
    )) found.push({ subject: `message ${message_id}`, what: "meta" });
    for (const { message_id } of await this.database.rows<{ message_id: number }>(
      `SELECT DISTINCT p.message_id FROM messages m JOIN message_parts p ON p.message_id = m.message_id
       WHERE m.conversation_id = $1 AND ((p.meta IS NOT NULL AND lcm_json_type(p.meta) IS NULL)
         OR (p.kind = 'raw' AND lcm_json_type(coalesce(p.data, 'null')) IS NULL))
       ORDER BY p.message_id LIMIT $2`, [conversationId, FINDING_LIMIT],
    )) found.push({ subject: `message ${message_id}`, what: "a part's meta or data" });
    for (const { summary_id } of await this.database.rows<{ summary_id: string }>(
      "SELECT summary_id FROM summaries WHERE conversation_id = $1 AND lcm_json_type(file_ids) IS DISTINCT FROM 'array' ORDER BY id LIMIT $2",
      [conversationId, FINDING_LIMIT],
    )) found.push({ subject: fromPgText(summary_id), what: "file_ids" });
    return found;
  }

  async clearUnreadableColumns(conversationId: ConversationId): Promise<string[]> {
    return this.database.transaction(async (tx) => {
      const row = await tx.row<{ bootstrap_state: string | null; last_compaction: string | null; last_reset: string | null }>(
        "SELECT bootstrap_state, last_compaction, last_reset FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId],
      );
      const columns = row ? unreadableConversationColumns(row).filter((column) => (CLEARABLE_COLUMNS as readonly string[]).includes(column)) : [];
      // Column names from the fixed list above, never from input.
      for (const column of columns) await tx.run(`UPDATE conversations SET ${column} = NULL WHERE conversation_id = $1`, [conversationId]);
      return columns;
    });
  }

  async recountConversation(conversationId: ConversationId): Promise<void> {
    await this.database.run(
      `UPDATE conversations SET
         message_count = (SELECT count(*) FROM messages WHERE conversation_id = $1),
         message_tokens = (SELECT coalesce(sum(token_count), 0) FROM messages WHERE conversation_id = $1),
         context_tokens = (SELECT coalesce(sum(token_count), 0) FROM context_items WHERE conversation_id = $1),
         context_raw_tokens = (SELECT coalesce(sum(token_count), 0) FROM context_items WHERE conversation_id = $1 AND message_id IS NOT NULL),
         context_items = (SELECT count(*) FROM context_items WHERE conversation_id = $1)
       WHERE conversation_id = $1`,
      [conversationId],
    );
  }
}

/** A string field of a stored JSON object; anything else (not JSON, not a string: hostile input) counts as none. */
function stringField(meta: string | null, field: string): string | null {
  const value = meta === null ? undefined : parseObject(fromPgText(meta))?.[field];
  return typeof value === "string" ? value : null;
}
