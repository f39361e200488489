/**
 * Checks the storage invariants of compaction straight from SQLite: counters equal the sums over context items,
 * every context item points to an existing row, every summary links to its sources, summary metadata matches
 * its lineage, and every stored (non-excluded) message is covered exactly once, in order, by the context.
 */
import type { Database } from "../../src/sqlite/database.js";
import { MessageFlags } from "../../src/messages/message-codec.js";

interface SummaryRow {
  id: number;
  kind: string;
  depth: number;
  seq_start: number;
  seq_end: number;
  descendant_count: number;
  source_message_count: number;
}

export interface Lineage {
  messageIds: number[];
  summaryCount: number;
}

/** Every raw message below a summary, oldest first, walking summary_parents and summary_messages. */
export function expandSummary(db: Database, summaryRowId: number): Lineage {
  const parents = db.all<{ parent_summary_id: number }>(
    "SELECT parent_summary_id FROM summary_parents WHERE summary_id = ? ORDER BY ordinal", summaryRowId,
  );
  if (parents.length === 0) {
    const rows = db.all<{ message_id: number }>(
      "SELECT message_id FROM summary_messages WHERE summary_id = ? ORDER BY ordinal", summaryRowId,
    );
    return { messageIds: rows.map((row) => row.message_id), summaryCount: 0 };
  }
  const lineage: Lineage = { messageIds: [], summaryCount: 0 };
  for (const parent of parents) {
    const below = expandSummary(db, parent.parent_summary_id);
    lineage.messageIds.push(...below.messageIds);
    lineage.summaryCount += below.summaryCount + 1;
  }
  return lineage;
}

/** Returns a list of violated invariants (empty when all hold). */
export function checkInvariants(db: Database, conversationId: number): string[] {
  const problems: string[] = [];
  const conversation = db.get<{ context_tokens: number; context_raw_tokens: number; context_items: number }>(
    "SELECT context_tokens, context_raw_tokens, context_items FROM conversations WHERE conversation_id = ?", conversationId,
  )!;
  const items = db.all<{ ordinal: number; message_id: number | null; summary_id: number | null; token_count: number }>(
    "SELECT ordinal, message_id, summary_id, token_count FROM context_items WHERE conversation_id = ? ORDER BY ordinal",
    conversationId,
  );
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  if (conversation.context_tokens !== sum(items.map((item) => item.token_count))) problems.push("context_tokens counter drifted");
  if (conversation.context_raw_tokens !== sum(items.filter((item) => item.message_id !== null).map((item) => item.token_count))) {
    problems.push("context_raw_tokens counter drifted");
  }
  if (conversation.context_items !== items.length) problems.push("context_items counter drifted");

  const covered: number[] = [];
  for (const item of items) {
    if (item.message_id !== null) {
      if (!db.get("SELECT 1 AS found FROM messages WHERE message_id = ?", item.message_id)) problems.push(`item ${item.ordinal}: missing message`);
      covered.push(item.message_id);
    } else if (item.summary_id !== null) {
      if (!db.get("SELECT 1 AS found FROM summaries WHERE id = ?", item.summary_id)) problems.push(`item ${item.ordinal}: missing summary`);
      covered.push(...expandSummary(db, item.summary_id).messageIds);
    }
  }
  const stored = db.all<{ message_id: number; flags: number }>(
    "SELECT message_id, flags FROM messages WHERE conversation_id = ? ORDER BY seq", conversationId,
  );
  const expected = stored.filter((row) => !(row.flags & MessageFlags.excluded)).map((row) => row.message_id);
  if (JSON.stringify(covered) !== JSON.stringify(expected)) {
    problems.push(`context covers ${covered.length} messages, expected each of ${expected.length} exactly once and in order`);
  }

  const summaries = db.all<SummaryRow>(
    "SELECT id, kind, depth, seq_start, seq_end, descendant_count, source_message_count FROM summaries WHERE conversation_id = ?",
    conversationId,
  );
  for (const summary of summaries) {
    const messageLinks = db.get<{ count: number }>("SELECT COUNT(*) AS count FROM summary_messages WHERE summary_id = ?", summary.id)!.count;
    const parentLinks = db.get<{ count: number }>("SELECT COUNT(*) AS count FROM summary_parents WHERE summary_id = ?", summary.id)!.count;
    const isLinked = summary.kind === "leaf" ? messageLinks > 0 && parentLinks === 0 : parentLinks > 0 && messageLinks === 0;
    if (!isLinked) problems.push(`summary ${summary.id} (${summary.kind}) is not linked to its sources`);
    const lineage = expandSummary(db, summary.id);
    const seqs = db.all<{ seq: number }>(
      "SELECT seq FROM messages WHERE message_id IN (SELECT value FROM json_each(?))", JSON.stringify(lineage.messageIds),
    ).map((row) => row.seq);
    if (summary.source_message_count !== lineage.messageIds.length) problems.push(`summary ${summary.id}: source_message_count`);
    if (summary.descendant_count !== lineage.summaryCount) problems.push(`summary ${summary.id}: descendant_count`);
    if (summary.seq_start !== Math.min(...seqs) || summary.seq_end !== Math.max(...seqs)) problems.push(`summary ${summary.id}: seq range`);
  }
  return problems;
}
