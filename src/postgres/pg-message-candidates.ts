/**
 * Full-text candidates of messages on PostgreSQL, newest first within a window of ids, by the plan that suits how common
 * the query is. A GIN index returns its matches unordered: reading "the newest 50 matches" from it costs every match in
 * the window, which for a common word is most of the window's rows. So a query the estimate (the prepared query's
 * frequencies) finds often enough reads the scope's newest messages in id order instead (an index on
 * (conversation_id, message_id)), checks each one's tsvector, and stops at the limit; the walk is bounded
 * (pg-retrieval-sql.ts `probeFor`), and what it did not reach is read from the GIN index. A rarer query reads the GIN
 * index directly (its cost is its matches, few by definition), with the window's id bounds as a filter on its matches
 * when they are few against the window (`RANGE_IDS_PER_MATCH`): otherwise PostgreSQL may intersect the GIN bitmap with
 * a primary-key range bitmap of the whole window, whose cost is the window's width, not the matches (a rare word's
 * grep at 1M: three windows of up to 800,000 ids, 5.5 ms each, where its 66 matches cost 0.1 ms).
 */
import type { MessageHitRow, PreparedTextQuery, TextFilter, TextSelection } from "../store/retrieval-store.js";
import type { PgSearchReader } from "./pg-search-reader.js";
import { argumentSpansSql, toSearchableText } from "./pg-searchable-text.js";
import { MESSAGE_HIT, type MessageHitSql, messageFilter, probeFor, SqlParams, toMessageHit } from "./pg-retrieval-sql.js";


/**
 * Ids of the window per match the GIN index returns in all the index, below which the id bounds stay indexable: a match
 * filtered by id costs a heap page, a primary-key range a leaf page per ~360 ids (at 1M: 200,000 ids, 549 pages, 10 ms).
 */
const RANGE_IDS_PER_MATCH = 400;

type CandidateSql = MessageHitSql & { content: string; spans: string | null; word_count: number };

/** The estimated share of documents holding one of the selection's groups (each group: its terms taken as independent). */
export function selectionShare(prepared: PreparedTextQuery, selection: TextSelection): number {
  if (prepared.documents <= 0) return 0;
  let share = 0;
  for (const group of selection.groups) {
    share += group.reduce((product, position) => product * Math.min(1, (prepared.frequencies[position] ?? 0) / prepared.documents), 1);
  }
  return Math.min(1, share);
}

/** The scope of a read: the filter's conversations and times (pg-retrieval-sql.ts `messageFilter`), and its seqs. */
function scope(params: SqlParams, filter: TextFilter): string {
  const seqs = filter.seqRange ? ` AND m.seq BETWEEN ${params.add(filter.seqRange.from)} AND ${params.add(filter.seqRange.to)}` : "";
  return messageFilter(params, filter) + seqs;
}

export class PgMessageCandidates {
  constructor(private readonly reader: PgSearchReader) {}

  /**
   * Up to `limit` messages matching tsquery `query` with ids in [from, to] in `filter`, newest first; `share` is the
   * estimated share of the `documents` indexed that match.
   */
  async read(
    query: string, estimate: { share: number; documents: number }, filter: TextFilter, window: { from: number; to: number }, limit: number,
  ): Promise<(MessageHitRow & { wordCount: number })[]> {
    const { from, to } = window;
    if (to < from || limit <= 0) return [];
    // The GIN index's matches of the window, all conversations' (the scope is filtered after the fetch).
    const walk = probeFor(estimate.share, limit, estimate.share * Math.min(estimate.documents, to - from + 1));
    if (walk === 0) {
      const idsAsFilter = estimate.share * estimate.documents * RANGE_IDS_PER_MATCH <= to - from + 1;
      return this.fromIndex(query, filter, from, to, limit, idsAsFilter);
    }
    const walked = await this.walk(query, filter, from, to, walk, limit);
    if (walked.rows.length >= limit || walked.walked < walk || walked.lowest === null) return walked.rows;
    return [...walked.rows, ...(await this.fromIndex(query, filter, from, walked.lowest - 1, limit - walked.rows.length))];
  }

  /**
   * The scope's newest `walk` messages in [from, to], checked newest first until `limit` match; `walked` says how many
   * there were (fewer than `walk`: the window's scope is read to its end) and `lowest` the oldest id among them.
   */
  private async walk(query: string, filter: TextFilter, from: number, to: number, walk: number, limit: number) {
    const params = new SqlParams();
    const walkScope = scope(params, filter);
    const fromParam = params.add(from);
    const toParam = params.add(to);
    const rows = await this.reader.rows<Partial<CandidateSql> & { walked: number; lowest: number | null }>(
      "message candidates",
      `WITH bound AS MATERIALIZED (
         SELECT count(*)::int AS walked, min(message_id) AS lowest FROM (
           SELECT m.message_id FROM messages m
           WHERE ${walkScope} AND m.message_id >= ${fromParam} AND m.message_id <= ${toParam}
           ORDER BY m.message_id DESC LIMIT ${params.add(walk)}) newest)
       SELECT b.walked, b.lowest, h.* FROM bound b LEFT JOIN LATERAL (
         SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans, x.word_count
         FROM messages m JOIN message_search x ON x.message_id = m.message_id
         WHERE ${walkScope} AND m.message_id >= b.lowest AND m.message_id <= ${toParam} AND x.document @@ ${params.add(query)}::tsquery
         ORDER BY m.message_id DESC LIMIT ${params.add(limit)}) h ON true`,
      params.values,
    );
    const first = rows[0];
    return {
      walked: first?.walked ?? 0,
      lowest: first?.lowest ?? null,
      rows: rows.filter((row) => row.message_id !== null && row.message_id !== undefined).map((row) => toCandidate(row as CandidateSql)),
    };
  }

  /**
   * Matches in [from, to] from the GIN index, newest first (`+ 0` keeps the planner off the primary key's order; on the
   * bounds too when `idsAsFilter`, so that no range of the primary key is read).
   */
  private async fromIndex(query: string, filter: TextFilter, from: number, to: number, limit: number, idsAsFilter = false) {
    if (to < from) return [];
    const params = new SqlParams();
    const id = idsAsFilter ? "x.message_id + 0" : "x.message_id";
    const rows = await this.reader.rows<CandidateSql>(
      "message candidates",
      `SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans, x.word_count
       FROM message_search x JOIN messages m ON m.message_id = x.message_id
       WHERE x.document @@ ${params.add(query)}::tsquery AND ${id} >= ${params.add(from)} AND ${id} <= ${params.add(to)}
         AND ${scope(params, filter)}
       ORDER BY x.message_id + 0 DESC LIMIT ${params.add(limit)}`,
      params.values,
    );
    return rows.map(toCandidate);
  }
}

function toCandidate(row: CandidateSql): MessageHitRow & { wordCount: number } {
  return { ...toMessageHit(row, toSearchableText(row.content, row.spans)), wordCount: row.word_count };
}
