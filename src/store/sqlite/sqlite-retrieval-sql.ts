/**
 * SQL fragments, row shapes and row mapping of the retrieval store (only sqlite-retrieval-store.ts imports this).
 * Filters are shared text so every search applies scope and time the same way.
 */
import type { SummaryKind } from "../../records.js";
import type { CandidatePage, MessageHitRow, SearchFilter, SummaryHitRow } from "../retrieval-store.js";

export const MIN_TIME = Number.MIN_SAFE_INTEGER;
export const MAX_TIME = Number.MAX_SAFE_INTEGER;
export const SNIPPET = "'«', '»', '…', 24";

export const MESSAGE_HIT = "m.message_id, m.conversation_id, m.seq, m.role, m.created_at";
export const MESSAGE_FILTER =
  "+m.conversation_id IN (SELECT value FROM json_each(?)) AND m.created_at >= ? AND m.created_at < ?";
export const SUMMARY_HIT = "s.id, s.summary_id, s.conversation_id, s.kind, s.depth, s.earliest_at, s.latest_at, s.created_at";
export const SUMMARY_FILTER =
  "+s.conversation_id IN (SELECT value FROM json_each(?)) AND s.latest_at >= ? AND s.earliest_at < ?";

/**
 * Relevance ranks at most this many of the newest in-scope matches: bm25 costs one evaluation per ranked row,
 * so an unbounded ranking of a word found in every message grows with the history (0.26 s at 100k messages,
 * measured; 55 ms bounded). Recency needs no bound: the index yields rows newest first and LIMIT stops it.
 */
export const RELEVANCE_CANDIDATES = 10_000;

/**
 * A term found in more messages than this makes FTS5's bm25() too slow (it counts the term's documents over the
 * whole doclist first): such queries rank the newest COMMON_RELEVANCE_CANDIDATES matches with the same formula
 * computed in JavaScript (retrieval/relevance.ts), with document frequencies estimated from the newest
 * COMMON_TERM_DOCUMENTS matches of each term (a bounded read: ~4 ms for a word in most of a million messages).
 */
export const COMMON_TERM_DOCUMENTS = 20_000;
export const COMMON_RELEVANCE_CANDIDATES = 2_000;

/** The newest COMMON_TERM_DOCUMENTS documents holding a term: how many, and the oldest of them. */
export const TERM_FREQUENCY = `SELECT count(*) AS count, min(rowid) AS oldest
  FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ${COMMON_TERM_DOCUMENTS})`;

/**
 * Recency queries select no rank: bm25 starts by counting every document that holds each term (a walk of the
 * term's whole doclist, 40 ms for a word in most of a million messages), and recency never uses it.
 */
export const MESSAGE_MATCHES = `
  FROM messages_fts CROSS JOIN messages m ON m.message_id = messages_fts.rowid
  WHERE messages_fts MATCH ? AND ${MESSAGE_FILTER} AND m.seq BETWEEN ? AND ?`;
export const SUMMARY_MATCHES = `
  FROM summaries_fts CROSS JOIN summaries s ON s.id = summaries_fts.rowid
  WHERE summaries_fts MATCH ? AND ${SUMMARY_FILTER}`;
export const MESSAGES_BY_RECENCY = `SELECT ${MESSAGE_HIT}, snippet(messages_fts, 0, ${SNIPPET}) AS text, 0 AS rank
  ${MESSAGE_MATCHES} ORDER BY messages_fts.rowid DESC LIMIT ?`;
/** The newest in-scope matches with their text and length in tokens (FTS5's docsize record), for ranking here. */
export const MESSAGE_CANDIDATES_WITH_TEXT = `SELECT ${MESSAGE_HIT}, m.content AS text, d.sz AS size, 0 AS rank
  FROM messages_fts CROSS JOIN messages m ON m.message_id = messages_fts.rowid
    CROSS JOIN messages_fts_docsize d ON d.id = messages_fts.rowid
  WHERE messages_fts MATCH ? AND ${MESSAGE_FILTER} AND m.seq BETWEEN ? AND ?
  ORDER BY messages_fts.rowid DESC LIMIT ${COMMON_RELEVANCE_CANDIDATES}`;
export const MESSAGES_BY_RELEVANCE = `SELECT * FROM (SELECT ${MESSAGE_HIT}, NULL AS text, messages_fts.rank AS rank
  ${MESSAGE_MATCHES} ORDER BY messages_fts.rowid DESC LIMIT ${RELEVANCE_CANDIDATES}) ORDER BY rank, message_id DESC LIMIT ?`;
export const SUMMARIES_BY_RECENCY = `SELECT ${SUMMARY_HIT}, snippet(summaries_fts, 0, ${SNIPPET}) AS text, 0 AS rank
  ${SUMMARY_MATCHES} ORDER BY summaries_fts.rowid DESC LIMIT ?`;
export const SUMMARIES_BY_RELEVANCE = `SELECT * FROM (SELECT ${SUMMARY_HIT}, NULL AS text, summaries_fts.rank AS rank
  ${SUMMARY_MATCHES} ORDER BY summaries_fts.rowid DESC LIMIT ${RELEVANCE_CANDIDATES}) ORDER BY rank, id DESC LIMIT ?`;

export interface MessageHitSql {
  message_id: number;
  conversation_id: number;
  seq: number;
  role: string;
  created_at: number;
  text: string | null;
  rank: number;
}

/**
 * The varints at the start of an FTS5 record: a docsize record holds the document's length in tokens (one
 * indexed column); the averages record (messages_fts_data id 1) the number of documents, then the total tokens.
 * SQLite's varint: big-endian groups of 7 bits, the high bit set on every byte but the last (lengths here never
 * need the 9-byte form).
 */
export function readVarints(record: Uint8Array | null, count: number): number[] {
  const values: number[] = [];
  let value = 0;
  for (let index = 0; record && index < record.length && values.length < count; index++) {
    const byte = record[index]!;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      values.push(value);
      value = 0;
    }
  }
  while (values.length < count) values.push(0);
  return values;
}

/** FTS5's averages record of the message index. */
export const MESSAGE_INDEX_AVERAGES = "SELECT block FROM messages_fts_data WHERE id = 1";

export interface SummaryHitSql {
  id: number;
  summary_id: string;
  conversation_id: number;
  kind: string;
  depth: number;
  earliest_at: number;
  latest_at: number;
  created_at: number;
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
  text: row.text ?? "",
  rank: row.rank,
});

export function filterParams(filter: SearchFilter): [string, number, number] {
  return [JSON.stringify(filter.conversationIds), filter.since ?? MIN_TIME, filter.before ?? MAX_TIME];
}

/**
 * The SQL filter "content contains one of these substrings" (ASCII case-insensitive, LIKE with its wildcards
 * escaped), or holds a NUL character. One substring gets a plain LIKE: a correlated json_each costs ~3x more per
 * row (measured).
 */
export function containsClause(column: string, substrings: string[] | null): [string, string[]] {
  if (!substrings || substrings.length === 0) return ["", []];
  const patterns = substrings.map((literal) => `%${literal.replace(/[\\%_]/g, (character) => `\\${character}`)}%`);
  if (patterns.length === 1) return [`AND (${column} LIKE ? ESCAPE '\\' OR ${holdsNul(column)})`, patterns];
  return [`AND (EXISTS (SELECT 1 FROM json_each(?) WHERE ${column} LIKE value ESCAPE '\\') OR ${holdsNul(column)})`, [JSON.stringify(patterns)]];
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
