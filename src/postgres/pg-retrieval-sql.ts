/**
 * SQL fragments, row shapes and row mapping of the PostgreSQL retrieval store (pg-retrieval-store.ts and
 * pg-file-retrieval.ts): placeholders are numbered as parameters are added (`SqlParams`), and scope and time filters
 * are shared text so every search applies them the same way. Stored text is NUL-escaped (pg-database.ts) and read
 * back through fromPgText here.
 */
import type { SummaryKind } from "../records.js";
import type { CandidatePage, ContainsFilter, MessageHitRow, SearchFilter, SummaryHitRow } from "../store/retrieval-store.js";
import { fromPgText } from "./pg-database.js";
import type { PgParam } from "./pg-queryable.js";

export const MIN_TIME = Number.MIN_SAFE_INTEGER;
export const MAX_TIME = Number.MAX_SAFE_INTEGER;

/** A statement's parameters, numbered as they are added. */
export class SqlParams {
  readonly values: PgParam[] = [];

  add(value: PgParam): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export const MESSAGE_HIT = "m.message_id, m.conversation_id, m.seq, m.role, m.created_at";
export const SUMMARY_HIT = "s.id, s.summary_id, s.conversation_id, s.kind, s.depth, s.earliest_at, s.latest_at, s.created_at, s.seq_start, s.seq_end";

/**
 * Messages in the filter's conversations (one as an equality, so an index on (conversation_id, …) is read in order)
 * and time range (a bound the filter does not set is not written, so such an index can answer alone).
 */
export function messageFilter(params: SqlParams, filter: SearchFilter, alias = "m"): string {
  const ids = filter.conversationIds;
  const conditions = [ids.length === 1
    ? `${alias}.conversation_id = ${params.add(ids[0]!)}`
    : `${alias}.conversation_id = ANY(${params.add(ids)}::bigint[])`];
  if (typeof filter.since === "number") conditions.push(`${alias}.created_at >= ${params.add(filter.since)}`);
  if (typeof filter.before === "number") conditions.push(`${alias}.created_at < ${params.add(filter.before)}`);
  return conditions.join(" AND ");
}

/** Summaries in the filter's conversations whose time range overlaps the filter's. */
export function summaryFilter(params: SqlParams, filter: SearchFilter): string {
  const conditions = [`s.conversation_id = ANY(${params.add(filter.conversationIds)}::bigint[])`];
  if (typeof filter.since === "number") conditions.push(`s.latest_at >= ${params.add(filter.since)}`);
  if (typeof filter.before === "number") conditions.push(`s.earliest_at < ${params.add(filter.before)}`);
  return conditions.join(" AND ");
}

export interface MessageHitSql {
  message_id: number;
  conversation_id: number;
  seq: number;
  role: string;
  created_at: number;
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
}

export const toMessageHit = (row: MessageHitSql, text: string): MessageHitRow => ({
  messageId: row.message_id,
  conversationId: row.conversation_id,
  seq: row.seq,
  role: fromPgText(row.role),
  createdAt: row.created_at,
  text,
  rank: 0,
});

export const toSummaryHit = (row: SummaryHitSql, text: string): SummaryHitRow => ({
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
  text,
  rank: 0,
});

/**
 * The filter "the stored text contains one of these substrings" (ASCII case-insensitive: ILIKE, its wildcards
 * escaped), or holds a NUL (its stored escape: the caller's regex decides on the real text), or (`keepNonAscii`) any
 * character outside ASCII. Empty without a filter.
 */
export function containsClause(params: SqlParams, column: string, contains: ContainsFilter | null): string {
  if (!contains || contains.anyOf.length === 0) return "";
  const patterns = contains.anyOf.map((literal) => `%${literal.replace(/[\\%_]/g, (character) => `\\${character}`)}%`);
  const otherwise = contains.keepNonAscii ? `octet_length(${column}) > char_length(${column})` : `strpos(${column}, chr(64976)) > 0`;
  return `AND (${column} ILIKE ANY(${params.add(patterns)}::text[]) OR ${otherwise})`;
}

/** A page of candidates read newest first: the rows in scope, and where the next page starts. */
export function candidatePage<Sql extends { candidate: number; in_scope: boolean }, Row>(
  rows: Sql[], pageSize: number, map: (row: Sql) => Row, timeOf: (row: Sql) => number,
): CandidatePage<Row> {
  const last = rows.at(-1);
  return {
    rows: rows.filter((row) => row.in_scope).map(map),
    next: rows.length < pageSize || !last ? null : last.candidate,
    oldestExamined: last ? timeOf(last) : null,
  };
}

/** Ids the first step of a newest-first index read examines in id order (newestFirst), by default. */
export const PROBE_IDS = 2_000;

/** One step of a newest-first read (`newestFirstSql`): its SELECT of rows with ids in [from, to] in `order`, at most `limit`. */
export type NewestFirstStep = (from: string, to: string, order: "id" | "index", limit: string) => string;

/**
 * The SQL of a read of up to `limit` rows newest first with ids in [from, to], in two steps, so that neither plan
 * PostgreSQL may pick for "matches ORDER BY id DESC LIMIT n" runs long. The newest `probe` ids are read in id order (a
 * common word fills the limit there; the planner may take the primary key backwards, at most `probe` rows), then the
 * rest with `order` "index": the SQL orders by `id + 0`, which keeps the planner off the primary key's order (that plan
 * reads every row of the table for a word found nowhere: 300 ms at 100k messages) so the GIN index drives it (its cost
 * is the matches). A `probe` of 0 reads the GIN index at once (a rare query). Both steps are one statement (a round
 * trip saved): the second runs only when the first found fewer than `limit` (a one-time filter on the first's count),
 * and the rows come out newest first, ordered by `id` (the steps' column holding the row id). Null: nothing to read.
 */
export function newestFirstSql(
  params: SqlParams, from: number, to: number, limit: number, id: string, step: NewestFirstStep, probe = PROBE_IDS, restWhenFewerThan = limit,
): string | null {
  if (to < from || limit <= 0) return null;
  const wanted = params.add(limit);
  if (probe <= 0) return step(params.add(from), params.add(to), "index", wanted);
  const probeFrom = Math.max(from, to - probe + 1);
  const newest = step(params.add(probeFrom), params.add(to), "id", wanted);
  if (probeFrom <= from) return newest;
  const rest = step(params.add(from), params.add(probeFrom - 1), "index", wanted);
  return `WITH newest AS MATERIALIZED (${newest})
    SELECT * FROM (SELECT * FROM newest UNION ALL SELECT * FROM (${rest}) rest WHERE (SELECT count(*) FROM newest) < ${restWhenFewerThan === limit ? wanted : params.add(restWhenFewerThan)}) steps
    ORDER BY ${id} DESC LIMIT ${wanted}`;
}

/** Where a regex candidate page reads its ids: window [from, to], `limit` of them, `probe` newest ids first (`newestFirstSql`). */
export interface CandidateWindow {
  from: number;
  to: number;
  limit: number;
  probe: number;
  /** The index is read for the rest of the window only when the probe found fewer than this (at most `limit`). */
  restWhenFewerThan: number;
}

/**
 * A regex candidate page's ids (`newestFirstSql`): up to `window.limit` rows of index `table` (row id column `id`)
 * matching the tsquery placeholder `tsquery` with ids in the window, newest first. Null: nothing to read.
 */
export function candidateIdsSql(params: SqlParams, table: string, id: string, tsquery: string, window: CandidateWindow): string | null {
  return newestFirstSql(params, window.from, window.to, window.limit, id, (from, upTo, order, wanted) =>
    `SELECT ${id} FROM ${table} WHERE document @@ ${tsquery}::tsquery AND ${newestFirstRange(id, from, upTo, order)}
     ORDER BY ${newestFirstOrder(id, order)} LIMIT ${wanted}`, window.probe, window.restWhenFewerThan);
}

/**
 * The newest `limit` regex candidates with ids in [1, to], read by `read` (a statement around `candidateIdsSql` for
 * the window it is given, returning one row per id, newest first; `probeIds`: the ids its first step walks, fewer for
 * rows dearer to check than messages). The index's matches for a regex's words can be
 * most of the rows ("await" is in 13% of them): read from the GIN index, every match of the window is fetched and
 * sorted to keep the newest (a bitmap of 128,000 rows at 1M messages, 575 ms), while walking the ids newest first
 * finds the page in the first few thousand. So the first statement reads the newest `probeIds` ids and goes on to the
 * index only when they held too few matches for a walk to pay; otherwise their share sizes a walk over the ids below
 * (three times the ids the rest of the page should need), which a second statement reads, then the index below it
 * when the walk still fell short. A walk is taken only when it is shorter than twice the matches the index would
 * fetch instead (a row walked costs about half a match fetched).
 */
export async function readCandidates<Row>(
  to: number, limit: number, read: (window: CandidateWindow) => Promise<Row[]>, probeIds = PROBE_IDS,
): Promise<Row[]> {
  if (to < 1 || limit <= 0) return [];
  // The fewest matches among the newest `probeIds` ids for which a walk can beat the index (share² > 1.5 × limit / to).
  const walkable = Math.min(limit, Math.max(1, Math.ceil(probeIds * Math.sqrt((1.5 * limit) / to))));
  const first = await read({ from: 1, to, limit, probe: probeIds, restWhenFewerThan: walkable });
  const probeFrom = to - probeIds + 1;
  if (first.length >= limit || first.length < walkable || probeFrom <= 1) return first;
  const share = first.length / probeIds;
  const need = limit - first.length;
  const below = probeFrom - 1;
  const walk = Math.ceil((3 * need) / share);
  const probe = walk < 2 * share * below ? walk : 0;
  return [...first, ...(await read({ from: 1, to: below, limit: need, probe, restWhenFewerThan: need }))];
}

/**
 * The probe for a full-text read whose matches are an estimated `share` of the rows: enough ids to hold `limit`
 * matches three times over, or 0 (read the GIN index at once) when the GIN index costs less. Reading the GIN index
 * fetches every match of the window (`matches`, if the caller estimates them; about 2.8 µs each: EXPLAIN at 100k), a
 * walk checks each row it passes (1.6 µs): a probe up to MAX_PROBE_IDS is always cheap, a longer one is taken when it
 * passes fewer than WALK_ROWS_PER_MATCH rows per match the GIN index would fetch; both limits are divided by `rowCost`,
 * the cost of checking one row in messages' (LARGE_DOCUMENT_COST for summaries and chunks). At 1M a question's "fix" (in 1.5% of
 * the messages) read 14,607 matches from the GIN index to keep one conversation's newest 25: 52 ms; the walk of 5,000
 * rows that replaces it, about 8.
 */
export function probeFor(share: number, limit: number, matches = 0, rowCost = 1): number {
  if (share <= 0) return 0;
  const probe = Math.max(limit, Math.ceil((3 * limit) / share));
  return probe <= Math.max(MAX_PROBE_IDS / rowCost, (WALK_ROWS_PER_MATCH * matches) / rowCost) ? probe : 0;
}

/**
 * The cost of checking a large document's tsvector (a summary, a stored-content chunk: a few KB, stored out of line), in
 * messages': `rowCost` of `probeFor`, and the share of PROBE_IDS a regex's candidate page walks in them. At
 * 1M the 2,000 chunks a regex page walked took 12.5 ms (6,804 buffers); 2,000 messages take about 3.
 */
export const LARGE_DOCUMENT_COST = 4;

/** Rows whose tsvectors a probe checks whatever the matches (a few ms); a rarer query reads the GIN index. */
export const MAX_PROBE_IDS = 4_000;

/** Rows a walk may pass per match a read of the GIN index would fetch instead (1.6 µs a row, 2.8 µs a match). */
const WALK_ROWS_PER_MATCH = 1.75;

/** The ORDER BY of a newestFirst step over `column`. */
export function newestFirstOrder(column: string, order: "id" | "index"): string {
  return order === "id" ? `${column} DESC` : `${column} + 0 DESC`;
}

/**
 * The id bounds [from, to] of a newestFirst step over `column`. In "index" order they are a filter on the GIN index's
 * matches (`+ 0`), never a primary-key range: with a range to read, the planner may walk the whole window in id order
 * checking each row's tsvector instead of reading the GIN index, as it did for a rare word over the stored files'
 * chunks once new chunks waited in the GIN index's pending list (its cost estimate counts the pending pages): 7,371
 * chunks' tsvectors, 57 ms, where the GIN index answered in 0.1 ms.
 */
export function newestFirstRange(column: string, from: string, to: string, order: "id" | "index"): string {
  const id = order === "id" ? column : `${column} + 0`;
  return `${id} >= ${from} AND ${id} <= ${to}`;
}
