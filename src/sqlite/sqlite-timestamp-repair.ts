/**
 * Stored times that a JavaScript Date cannot hold, found and repaired in SQL (only sqlite-integrity-store.ts
 * imports this). Older versions stored a host timestamp as it came once it was 1e11 or more, so a nanosecond
 * epoch (1.7e18) became a `created_at` that node:sqlite refuses to read ("too large to be represented as a
 * JavaScript number"): every assemble of the conversation failed and lcm_grep's time filter skipped the row.
 * These queries never read such a column into JavaScript: they select ids, and rewrite the values in SQL with the
 * rule the codec now applies at the boundary (message-codec.ts timestampToMillis).
 */
import type { Database } from "./database.js";
import type { ConversationId } from "../records.js";
import { MAX_DATE_MILLIS, MessageFlags, TIMESTAMP_SCALE } from "../messages/message-codec.js";

/** `column` holds a time a Date can hold; false for anything else, text included (text sorts above numbers). */
function inDateRange(column: string): string {
  return `(${column} BETWEEN -${MAX_DATE_MILLIS} AND ${MAX_DATE_MILLIS})`;
}

/** Nanoseconds and microseconds divided down to milliseconds, as timestampToMillis reads a number; else as is. */
function scaledToMillis(column: string): string {
  const numeric = `typeof(${column}) IN ('integer', 'real')`;
  return `(CASE WHEN ${numeric} AND ${column} >= ${TIMESTAMP_SCALE.nanosecondsFrom} THEN round(${column} / 1000000.0)
    WHEN ${numeric} AND ${column} >= ${TIMESTAMP_SCALE.microsecondsFrom} THEN round(${column} / 1000.0)
    ELSE ${column} END)`;
}

/** The value scaled to milliseconds when that is in range, else `fallback`. */
function repaired(column: string, fallback: string): string {
  const scaled = scaledToMillis(column);
  return `(CASE WHEN ${inDateRange(scaled)} THEN CAST(${scaled} AS INTEGER) ELSE ${fallback} END)`;
}

const SUMMARY_OUT_OF_RANGE =
  `(NOT ${inDateRange("earliest_at")} OR NOT ${inDateRange("latest_at")} OR NOT ${inDateRange("created_at")})`;

/**
 * One conversation's rows in index order (EXPLAIN QUERY PLAN: SEARCH messages USING INDEX on (conversation_id, seq),
 * SEARCH summaries USING INDEX summaries_conversation_seq; no temp B-tree), so a check reads only that conversation.
 */
const MESSAGES_OUT_OF_RANGE =
  `SELECT message_id FROM messages WHERE conversation_id = ? AND NOT ${inDateRange("created_at")} ORDER BY seq LIMIT ?`;
const SUMMARIES_OUT_OF_RANGE =
  `SELECT summary_id FROM summaries WHERE conversation_id = ? AND ${SUMMARY_OUT_OF_RANGE} ORDER BY seq_start LIMIT ?`;

const IS_CREATED_AT = MessageFlags.timestampIsCreatedAt;
const NEIGHBOUR_TIME = (direction: "<" | ">") =>
  `(SELECT n.created_at FROM messages n WHERE n.conversation_id = messages.conversation_id AND n.seq ${direction} messages.seq
     AND ${inDateRange("n.created_at")} ORDER BY n.seq ${direction === "<" ? "DESC" : "ASC"} LIMIT 1)`;
/**
 * A host timestamp stored only in created_at (the flag) moves into meta as "timestamp" and the flag is cleared,
 * so decoding still gives the host's own value; then created_at is scaled down, else takes the previous message's
 * time, else the next one's, else 0. SQLite evaluates every SET expression on the row as it was.
 */
const REPAIR_MESSAGES = `UPDATE messages SET
    meta = CASE WHEN (flags & ${IS_CREATED_AT}) <> 0 AND json_valid(meta) THEN json_set(meta, '$.timestamp', created_at) ELSE meta END,
    flags = CASE WHEN (flags & ${IS_CREATED_AT}) <> 0 AND json_valid(meta) THEN flags & ~${IS_CREATED_AT} ELSE flags END,
    created_at = ${repaired("created_at", `coalesce(${NEIGHBOUR_TIME("<")}, ${NEIGHBOUR_TIME(">")}, 0)`)}
  WHERE conversation_id = ? AND NOT ${inDateRange("created_at")}`;

/** The earliest or latest in-range time of a summary's sources: its messages (leaf), the summaries it condensed. */
function sourceTime(aggregate: "min" | "max"): string {
  const column = aggregate === "min" ? "p.earliest_at" : "p.latest_at";
  const fromMessages = `(SELECT ${aggregate}(m.created_at) FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id
    WHERE sm.summary_id = summaries.id AND ${inDateRange("m.created_at")})`;
  const fromSummaries = `(SELECT ${aggregate}(${column}) FROM summary_parents sp JOIN summaries p ON p.id = sp.parent_summary_id
    WHERE sp.summary_id = summaries.id AND ${inDateRange(column)})`;
  return `coalesce(${fromMessages}, ${fromSummaries})`;
}
/** Earliest and latest recomputed from the sources in range; without any, the own value scaled down, else 0. */
const REPAIR_SUMMARY_RANGE = `UPDATE summaries SET
    earliest_at = coalesce(${sourceTime("min")}, ${repaired("earliest_at", "0")}),
    latest_at = coalesce(${sourceTime("max")}, ${repaired("latest_at", "0")})
  WHERE conversation_id = ? AND depth = ? AND ${SUMMARY_OUT_OF_RANGE}`;
/** When the summary was written: scaled down, else the newest time it covers. */
const REPAIR_SUMMARY_CREATED = `UPDATE summaries SET created_at = ${repaired("created_at", "latest_at")}
  WHERE conversation_id = ? AND NOT ${inDateRange("created_at")}`;

export function findTimestampsOutOfRange(db: Database, conversationId: ConversationId, limit: number): { messageIds: number[]; summaryIds: string[] } {
  return {
    messageIds: db.tuples<[number]>(MESSAGES_OUT_OF_RANGE, conversationId, limit).map(([id]) => id),
    summaryIds: db.tuples<[string]>(SUMMARIES_OUT_OF_RANGE, conversationId, limit).map(([id]) => id),
  };
}

/** One transaction: messages first, then summaries depth by depth (a condensed summary reads its repaired sources). */
export function repairTimestampsNow(db: Database, conversationId: ConversationId): { messages: number; summaries: number } {
  const messages = db.run(REPAIR_MESSAGES, conversationId).changes;
  const depths = db.tuples<[number, number]>(
    `SELECT depth, count(*) FROM summaries WHERE conversation_id = ? AND ${SUMMARY_OUT_OF_RANGE} GROUP BY depth ORDER BY depth`, conversationId,
  );
  for (const [depth] of depths) db.run(REPAIR_SUMMARY_RANGE, conversationId, depth);
  db.run(REPAIR_SUMMARY_CREATED, conversationId);
  return { messages, summaries: depths.reduce((sum, [, count]) => sum + count, 0) };
}
