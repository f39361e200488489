/**
 * Stored times a JavaScript Date cannot hold, found and repaired on PostgreSQL (only pg-integrity-store.ts imports
 * this). The rule is the SQLite one (sqlite-timestamp-repair.ts, message-codec.ts timestampToMillis): nanoseconds and
 * microseconds divided down to milliseconds, else a neighbouring message's time, else 0; a host timestamp stored only
 * in `created_at` moves into the message's meta first; summaries' times are recomputed from their sources, depth by
 * depth. BIGINT holds such values; they are compared in SQL and never needed exactly in JavaScript.
 */
import type { ConversationId } from "../records.js";
import { MAX_DATE_MILLIS, MessageFlags, TIMESTAMP_SCALE } from "../messages/message-codec.js";
import { parseObject } from "../store/conversation-columns.js";
import { fromPgText, toPgText } from "./pg-database.js";
import type { PgQueryable } from "./pg-queryable.js";

/** `column` holds a time a Date can hold. */
function inDateRange(column: string): string {
  return `(${column} BETWEEN -${MAX_DATE_MILLIS} AND ${MAX_DATE_MILLIS})`;
}

/** Nanoseconds and microseconds divided down to milliseconds (numeric, so nothing overflows), else as is. */
function scaledToMillis(column: string): string {
  return `(CASE WHEN ${column} >= ${TIMESTAMP_SCALE.nanosecondsFrom} THEN round(${column}::numeric / 1000000)
    WHEN ${column} >= ${TIMESTAMP_SCALE.microsecondsFrom} THEN round(${column}::numeric / 1000)
    ELSE ${column}::numeric END)`;
}

/** The value scaled to milliseconds when that is in range, else `fallback`. */
function repaired(column: string, fallback: string): string {
  const scaled = scaledToMillis(column);
  return `(CASE WHEN ${inDateRange(scaled)} THEN ${scaled}::bigint ELSE ${fallback} END)`;
}

const SUMMARY_OUT_OF_RANGE =
  `(NOT ${inDateRange("earliest_at")} OR NOT ${inDateRange("latest_at")} OR NOT ${inDateRange("created_at")})`;

const IS_CREATED_AT = MessageFlags.timestampIsCreatedAt;
const NEIGHBOUR_TIME = (direction: "<" | ">") =>
  `(SELECT n.created_at FROM messages n WHERE n.conversation_id = messages.conversation_id AND n.seq ${direction} messages.seq
     AND ${inDateRange("n.created_at")} ORDER BY n.seq ${direction === "<" ? "DESC" : "ASC"} LIMIT 1)`;
/** created_at scaled down, else the previous message's time, else the next one's, else 0 (every SET reads the old row). */
const REPAIR_MESSAGES = `UPDATE messages SET
    flags = CASE WHEN message_id = ANY($2::bigint[]) THEN flags & ~${IS_CREATED_AT} ELSE flags END,
    created_at = ${repaired("created_at", `coalesce(${NEIGHBOUR_TIME("<")}, ${NEIGHBOUR_TIME(">")}, 0)`)}
  WHERE conversation_id = $1 AND NOT ${inDateRange("created_at")}`;

/** The earliest or latest in-range time of a summary's sources: its messages (leaf), the summaries it condensed. */
function sourceTime(aggregate: "min" | "max"): string {
  const column = aggregate === "min" ? "p.earliest_at" : "p.latest_at";
  const fromMessages = `(SELECT ${aggregate}(m.created_at) FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id
    WHERE sm.summary_id = summaries.id AND ${inDateRange("m.created_at")})`;
  const fromSummaries = `(SELECT ${aggregate}(${column}) FROM summary_parents sp JOIN summaries p ON p.id = sp.parent_summary_id
    WHERE sp.summary_id = summaries.id AND ${inDateRange(column)})`;
  return `coalesce(${fromMessages}, ${fromSummaries})`;
}
const REPAIR_SUMMARY_RANGE = `UPDATE summaries SET
    earliest_at = coalesce(${sourceTime("min")}, ${repaired("earliest_at", "0")}),
    latest_at = coalesce(${sourceTime("max")}, ${repaired("latest_at", "0")})
  WHERE conversation_id = $1 AND depth = $2 AND ${SUMMARY_OUT_OF_RANGE}`;
const REPAIR_SUMMARY_CREATED = `UPDATE summaries SET created_at = ${repaired("created_at", "latest_at")}
  WHERE conversation_id = $1 AND NOT ${inDateRange("created_at")}`;

export async function findTimestampsOutOfRange(
  database: PgQueryable, conversationId: ConversationId, limit: number,
): Promise<{ messageIds: number[]; summaryIds: string[] }> {
  const messages = await database.rows<{ message_id: number }>(
    `SELECT message_id FROM messages WHERE conversation_id = $1 AND NOT ${inDateRange("created_at")} ORDER BY seq LIMIT $2`, [conversationId, limit],
  );
  const summaries = await database.rows<{ summary_id: string }>(
    `SELECT summary_id FROM summaries WHERE conversation_id = $1 AND ${SUMMARY_OUT_OF_RANGE} ORDER BY seq_start LIMIT $2`, [conversationId, limit],
  );
  return { messageIds: messages.map((row) => row.message_id), summaryIds: summaries.map((row) => fromPgText(row.summary_id)) };
}

/** Inside one transaction: messages first, then summaries depth by depth (a condensed summary reads its repaired sources). */
export async function repairTimestampsIn(tx: PgQueryable, conversationId: ConversationId): Promise<{ messages: number; summaries: number }> {
  // The host's own timestamp, kept only in created_at (the flag), moves into meta first (read as text: exact digits).
  const kept = await tx.rows<{ message_id: number; meta: string; created_at: string }>(
    `SELECT message_id, meta, created_at::text AS created_at FROM messages
     WHERE conversation_id = $1 AND NOT ${inDateRange("created_at")} AND (flags & ${IS_CREATED_AT}) <> 0 ORDER BY message_id FOR UPDATE`,
    [conversationId],
  );
  const moved: number[] = [];
  for (const row of kept) {
    const meta = parseObject(fromPgText(row.meta));
    // Meta that is not a JSON object keeps the flag (as on SQLite): doctor reports the meta on its own.
    if (meta === null) continue;
    await tx.run("UPDATE messages SET meta = $1 WHERE message_id = $2", [toPgText(withTimestamp(meta, row.created_at)), row.message_id]);
    moved.push(row.message_id);
  }
  const messages = await tx.run(REPAIR_MESSAGES, [conversationId, moved]);
  const depths = await tx.rows<{ depth: number; count: number }>(
    `SELECT depth, count(*) AS count FROM summaries WHERE conversation_id = $1 AND ${SUMMARY_OUT_OF_RANGE} GROUP BY depth ORDER BY depth`,
    [conversationId],
  );
  for (const { depth } of depths) await tx.run(REPAIR_SUMMARY_RANGE, [conversationId, depth]);
  await tx.run(REPAIR_SUMMARY_CREATED, [conversationId]);
  return { messages, summaries: depths.reduce((sum, row) => sum + row.count, 0) };
}

/** The meta object with `timestamp` set to the integer `digits`, written with its exact digits. */
function withTimestamp(meta: Record<string, unknown>, digits: string): string {
  if (!/^-?\d+$/.test(digits)) throw new Error(`created_at is not an integer: ${digits}`);
  const rest = { ...meta };
  delete rest.timestamp;
  const body = JSON.stringify(rest);
  return body === "{}" ? `{"timestamp":${digits}}` : `${body.slice(0, -1)},"timestamp":${digits}}`;
}
