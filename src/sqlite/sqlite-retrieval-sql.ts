/**
 * SQL fragments, row shapes and row mapping of the retrieval store (only sqlite-retrieval-store.ts imports this).
 * Filters are shared text so every search applies scope and time the same way.
 */
import type { SummaryKind } from "../records.js";
import type { CandidatePage, ContainsFilter, MessageHitRow, SearchFilter, SummaryHitRow } from "../store/retrieval-store.js";

export const MIN_TIME = Number.MIN_SAFE_INTEGER;
export const MAX_TIME = Number.MAX_SAFE_INTEGER;

export const MESSAGE_HIT = "m.message_id, m.conversation_id, m.seq, m.role, m.created_at";
export const MESSAGE_FILTER =
  "+m.conversation_id IN (SELECT value FROM json_each(?)) AND m.created_at >= ? AND m.created_at < ?";
export const SUMMARY_HIT = "s.id, s.summary_id, s.conversation_id, s.kind, s.depth, s.earliest_at, s.latest_at, s.created_at, s.seq_start, s.seq_end";
export const SUMMARY_FILTER =
  "+s.conversation_id IN (SELECT value FROM json_each(?)) AND s.latest_at >= ? AND s.earliest_at < ?";

export interface MessageHitSql {
  message_id: number;
  conversation_id: number;
  seq: number;
  role: string;
  created_at: number;
  text: string | null;
  rank: number;
}

export interface SummaryHitSql {
  id: number;
  summary_id: string;
  conversation_id: number;
  kind: string;
  depth: number;
  earliest_at: number;
  latest_at: number;
  created_at: number;
  seq_start: number;
  seq_end: number;
  text: string | null;
  rank: number;
}

export type Candidate<Row> = Row & { candidate: number; in_scope: number };

export const toMessageHit = (row: MessageHitSql): MessageHitRow => ({
  messageId: row.message_id,
  conversationId: row.conversation_id,
  seq: row.seq,
  role: row.role,
  createdAt: row.created_at,
  text: row.text ?? "",
  rank: row.rank,
});

export const toSummaryHit = (row: SummaryHitSql): SummaryHitRow => ({
  rowId: row.id,
  summaryId: row.summary_id,
  conversationId: row.conversation_id,
  kind: row.kind as SummaryKind,
  depth: row.depth,
  earliestAt: row.earliest_at,
  latestAt: row.latest_at,
  createdAt: row.created_at,
  seqStart: row.seq_start,
  seqEnd: row.seq_end,
  text: row.text ?? "",
  rank: row.rank,
});

export function filterParams(filter: SearchFilter): [string, number, number] {
  return [JSON.stringify(filter.conversationIds), filter.since ?? MIN_TIME, filter.before ?? MAX_TIME];
}

/**
 * The SQL filter "content contains one of these substrings" (ASCII case-insensitive, LIKE with its wildcards
 * escaped), or holds a NUL character, or (`keepNonAscii`) holds any non-ASCII character. One substring gets a
 * plain LIKE: a correlated json_each costs ~3x more per row (measured).
 */
export function containsClause(column: string, contains: ContainsFilter | null): [string, string[]] {
  if (!contains || contains.anyOf.length === 0) return ["", []];
  const patterns = contains.anyOf.map((literal) => `%${literal.replace(/[\\%_]/g, (character) => `\\${character}`)}%`);
  const otherwise = contains.keepNonAscii ? isNonAscii(column) : holdsNul(column);
  if (patterns.length === 1) return [`AND (${column} LIKE ? ESCAPE '\\' OR ${otherwise})`, patterns];
  return [`AND (EXISTS (SELECT 1 FROM json_each(?) WHERE ${column} LIKE value ESCAPE '\\') OR ${otherwise})`, [JSON.stringify(patterns)]];
}

/** The text holds a character outside ASCII (its character count is below its byte count), or a NUL. */
function isNonAscii(column: string): string {
  return `(length(${column}) < length(CAST(${column} AS BLOB)))`;
}

/**
 * "The text holds a NUL character". SQLite's LIKE stops at the first NUL, so a substring after one would be
 * missed: such rows always pass the substring filter and the regex, which reads the whole text, decides. The
 * character count (length() also stops at a NUL) below the byte count is a cheap first test, true only for a NUL
 * or a non-ASCII character; the byte search confirms. Over ASCII text that fails the LIKE this adds ~30% to the
 * filter, where the byte search alone doubled it (measured, 200k rows).
 */
function holdsNul(column: string): string {
  return `(length(${column}) < length(CAST(${column} AS BLOB)) AND instr(CAST(${column} AS BLOB), X'00') > 0)`;
}

export function candidatePage<Sql extends { text: string | null }, Row>(
  rows: Candidate<Sql>[],
  pageSize: number,
  map: (row: Sql) => Row,
  timeOf: (row: Sql) => number,
): CandidatePage<Row> {
  const last = rows.at(-1);
  return {
    rows: rows.filter((row) => row.in_scope === 1).map(map),
    next: rows.length < pageSize || !last ? null : last.candidate,
    oldestExamined: last ? timeOf(last) : null,
  };
}
