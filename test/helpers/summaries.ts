/**
 * Builds summary DAGs directly with SQL, one transaction each, exactly as compaction leaves them: the summary row,
 * its lineage (summary_messages or summary_parents), the replaced context items swapped for one summary item, and
 * the conversation's counters. Recall tests use it to shape a DAG precisely; the needle test also runs the real
 * compaction path.
 */
import type { Database } from "../../src/sqlite/database.js";

let counter = 0;

function nextSummaryId(): string {
  counter++;
  return `sum_${counter.toString(16).padStart(16, "0")}`;
}

export interface SummaryOptions {
  level?: "normal" | "aggressive" | "fallback";
  tokenCount?: number;
  fileIds?: string[];
}

interface ItemRow {
  ordinal: number;
  token_count: number;
}

/** Replaces the context items of messages with seq in [seqFrom, seqTo] by one leaf summary; returns its id. */
export function insertLeafSummary(
  db: Database,
  conversationId: number,
  seqFrom: number,
  seqTo: number,
  content: string,
  options: SummaryOptions = {},
): string {
  return db.writeNow(() => {
    const messages = db.all<{ message_id: number; created_at: number; token_count: number; seq: number }>(
      "SELECT message_id, created_at, token_count, seq FROM messages WHERE conversation_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
      conversationId, seqFrom, seqTo,
    );
    if (messages.length === 0) throw new Error(`no messages with seq ${seqFrom}..${seqTo}`);
    const items = db.all<ItemRow>(
      `SELECT ordinal, token_count FROM context_items WHERE conversation_id = ?
       AND message_id IN (SELECT value FROM json_each(?)) ORDER BY ordinal`,
      conversationId, JSON.stringify(messages.map((message) => message.message_id)),
    );
    const summaryId = nextSummaryId();
    const tokenCount = options.tokenCount ?? Math.ceil(content.length / 4);
    const { lastInsertRowid: rowId } = db.run(
      `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at,
         latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
       VALUES (?, ?, 'leaf', 0, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
      summaryId, conversationId, content, tokenCount, messages.reduce((sum, message) => sum + message.token_count, 0),
      messages[0]!.created_at, messages.at(-1)!.created_at, messages.length, messages[0]!.seq, messages.at(-1)!.seq,
      JSON.stringify(options.fileIds ?? []), options.level ?? "normal", messages.at(-1)!.created_at + 1,
    );
    messages.forEach((message, ordinal) =>
      db.run("INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)", rowId, message.message_id, ordinal),
    );
    replaceItems(db, conversationId, items, rowId, tokenCount, true);
    return summaryId;
  });
}

/** Replaces the context items of `summaryIds` (adjacent, same depth) by one condensed summary; returns its id. */
export function insertCondensedSummary(db: Database, conversationId: number, summaryIds: string[], content: string, options: SummaryOptions = {}): string {
  return db.writeNow(() => {
    const parents = db.all<{ id: number; depth: number; earliest_at: number; latest_at: number; token_count: number; descendant_count: number; source_message_count: number; seq_start: number; seq_end: number }>(
      `SELECT id, depth, earliest_at, latest_at, token_count, descendant_count, source_message_count, seq_start, seq_end
       FROM summaries WHERE summary_id IN (SELECT value FROM json_each(?)) ORDER BY seq_start`,
      JSON.stringify(summaryIds),
    );
    const items = db.all<ItemRow>(
      `SELECT ordinal, token_count FROM context_items WHERE conversation_id = ?
       AND summary_id IN (SELECT value FROM json_each(?)) ORDER BY ordinal`,
      conversationId, JSON.stringify(parents.map((parent) => parent.id)),
    );
    const summaryId = nextSummaryId();
    const tokenCount = options.tokenCount ?? Math.ceil(content.length / 4);
    const { lastInsertRowid: rowId } = db.run(
      `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at,
         latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
       VALUES (?, ?, 'condensed', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, ?)`,
      summaryId, conversationId, Math.max(...parents.map((parent) => parent.depth)) + 1, content, tokenCount,
      parents.reduce((sum, parent) => sum + parent.token_count, 0), parents[0]!.earliest_at, parents.at(-1)!.latest_at,
      parents.reduce((sum, parent) => sum + parent.descendant_count + 1, 0),
      parents.reduce((sum, parent) => sum + parent.source_message_count, 0), parents[0]!.seq_start, parents.at(-1)!.seq_end,
      options.level ?? "normal", parents.at(-1)!.latest_at + 2,
    );
    parents.forEach((parent, ordinal) =>
      db.run("INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, ?, ?)", rowId, parent.id, ordinal),
    );
    replaceItems(db, conversationId, items, rowId, tokenCount, false);
    return summaryId;
  });
}

function replaceItems(db: Database, conversationId: number, items: ItemRow[], summaryRowId: number, tokenCount: number, raw: boolean): void {
  const first = items[0];
  const last = items.at(-1);
  if (!first || !last) throw new Error("nothing in the context to replace");
  const removed = items.reduce((sum, item) => sum + item.token_count, 0);
  db.run("DELETE FROM context_items WHERE conversation_id = ? AND ordinal BETWEEN ? AND ?", conversationId, first.ordinal, last.ordinal);
  db.run(
    "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES (?, ?, ?, ?, 0)",
    conversationId, first.ordinal, summaryRowId, tokenCount,
  );
  db.run(
    `UPDATE conversations SET context_tokens = context_tokens - ? + ?, context_raw_tokens = context_raw_tokens - ?,
       context_items = context_items - ? WHERE conversation_id = ?`,
    removed, tokenCount, raw ? removed : 0, items.length - 1, conversationId,
  );
}
