/**
 * Conversation scope inside the full-text indexes (schema 20, issue 30). Each message and summary is indexed with one
 * more token in its `derived` column: its conversation's, `§c<conversation id>`. A search within a few conversations
 * ANDs its MATCH with theirs, so FTS5 passes over other conversations' matches inside the index (a merge of doclists)
 * instead of this code joining each of them to its row to read its conversation and drop it.
 *
 * Why: a one-conversation search for a common word read the newest matches of every conversation and kept those of
 * its own. At 10M messages the main conversation's newest 60 matches of "the" lay among 15,926 matches in all, each
 * looked up in `messages` (0.6 µs a row, 9.6 ms), where at 1M they lay among 5,910; a conversation without summaries
 * read all 4,589 summaries of another (8.8 ms, against 0.4 at 1M).
 *
 * The token cannot be a word: `§` (U+00A7) is punctuation, which text analysis (text/text-analysis.ts WORD) never puts
 * in a word or fragment, so no document's words and no query's terms hold it. FTS5's `ascii` tokenizer keeps every
 * non-ASCII character inside a token, so `§c17` is one token. The SQL conversation filter stays in every read: the
 * token narrows what FTS5 yields, the filter still decides.
 *
 * Rows indexed before schema 20 carry no token. `search_index_state` '<index>_scoped' is the lowest row id from which
 * every indexed row carries it (the watermark at migration, plus one; 1 once an index is rebuilt); a read below it
 * goes without the token.
 */
import type { Database } from "./database.js";
import type { PreparedTextQuery, TextSelection } from "../store/retrieval-store.js";

/** The indexes whose rows carry conversation tokens (sqlite-search-index.ts IndexTable; not imported: it imports this). */
type ScopedIndex = "messages_fts" | "summaries_fts";

/**
 * Conversations a scoped read names at most. FTS5 merges an OR of tokens entry by entry (six of them: 0.14 ms for "the"
 * where one took 0.12 at 1M); an agent's hundreds of sessions are left to the filter.
 */
export const SCOPED_CONVERSATIONS_AT_MOST = 16;
/**
 * A scoped read walks the scope's tokens between the matches FTS5 merges them with; the filtered one reads each
 * match's row to drop the other conversations'. Per row of a window that is about (share of the rows in scope ×
 * 0.28 µs) against (share of them matching × 0.6 µs). Measured at 1M (node:sqlite, a 50,000-row window, the main
 * conversation 40% of the rows): "the" through the token 0.12 ms, filtered 3.6 ms; two words found in 27 rows of the
 * window 4.2 ms through the token, 0.8 filtered. The token pays when the scope's share is below about twice the
 * matches' share.
 */
const SCOPED_WHEN_SHARE_BELOW_MATCHES = 2;
/** For a regex's candidates (how many rows its words match is not estimated): the scope's share below which the token pays. */
export const SCOPED_REGEX_SHARE = 0.05;

/** The token of conversation `conversationId` (appended to a document's `derived` column). */
export function scopeToken(conversationId: number): string {
  return `\u00a7c${conversationId}`;
}

/** `derived` with the conversation's token appended. */
export function withScopeToken(derived: string, conversationId: number): string {
  return derived === "" ? scopeToken(conversationId) : `${derived} ${scopeToken(conversationId)}`;
}

/**
 * The MATCH expression of `conversationIds`' tokens, or null when they are too many to name (or none). No column
 * filter: the tokens are only ever in `derived`, and a column filter makes FTS5 read each entry's positions.
 */
export function scopeExpression(conversationIds: readonly number[]): string | null {
  if (conversationIds.length === 0 || conversationIds.length > SCOPED_CONVERSATIONS_AT_MOST) return null;
  return `(${conversationIds.map((id) => `"${scopeToken(id)}"`).join(" OR ")})`;
}

/** The name of `table`'s scope watermark in search_index_state. */
export function scopeStateName(table: ScopedIndex): string {
  return `${table}_scoped`;
}

/** The lowest row id of `table` from which every indexed row carries its conversation's token. */
export function scopedFrom(db: Database, table: ScopedIndex): number {
  return db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = ?", scopeStateName(table))?.through
    ?? Number.MAX_SAFE_INTEGER;
}

/** Rows of `table`'s source in `conversationIds`: their message counts (kept on each conversation), or their summaries counted (an index range each). */
export function scopeRows(db: Database, table: ScopedIndex, conversationIds: readonly number[]): number {
  return table === "messages_fts"
    ? db.get<{ n: number | null }>(
        "SELECT sum(message_count) AS n FROM conversations WHERE conversation_id IN (SELECT value FROM json_each(?))", JSON.stringify(conversationIds),
      )!.n ?? 0
    : db.get<{ n: number }>("SELECT count(*) AS n FROM summaries WHERE conversation_id IN (SELECT value FROM json_each(?))", JSON.stringify(conversationIds))!.n;
}

/**
 * The share of `table`'s indexed rows (ids up to `through`) in `conversationIds` (scopeRows). Over the whole index, not
 * a window: sampling a window's tokens costs as much as reading it (FTS5 walks a doclist down to a window's upper
 * bound, 6.7 ms at 1M for a bound three quarters of the way up).
 */
export function scopeShare(db: Database, table: ScopedIndex, conversationIds: readonly number[], through: number): number {
  return Math.min(1, scopeRows(db, table, conversationIds) / Math.max(1, through));
}

/**
 * The share of the documents matching `selection`, from the prepared frequencies: a group matches at most as many
 * as its rarest term, and the groups (an OR) at most their sum.
 */
export function matchingShare(prepared: PreparedTextQuery, selection: TextSelection): number {
  let matching = 0;
  for (const group of selection.groups) {
    matching += Math.min(...group.map((index) => prepared.frequencies[index] ?? prepared.documents));
  }
  return Math.min(1, matching / Math.max(1, prepared.documents));
}

/** Whether a scoped read of a window pays, given the share of its rows in scope and the share matching. */
export function scopePays(scopeShareOfRows: number, matchingShare: number): boolean {
  return scopeShareOfRows < SCOPED_WHEN_SHARE_BELOW_MATCHES * matchingShare;
}

/**
 * The reads of a window of row ids that together return its newest `limit` candidates: the part at or above
 * `scopedFromId` with the scope's MATCH (null: none), the part below without. `read` gets the window part and the MATCH.
 */
export function scopedReads<Row>(
  match: string,
  scope: string | null,
  scopedFromId: number,
  window: { from: number; to: number },
  limit: number,
  read: (match: string, window: { from: number; to: number }, limit: number) => Row[],
): Row[] {
  if (scope === null || window.to < scopedFromId) return read(match, window, limit);
  const scoped = `(${match}) AND ${scope}`;
  if (window.from >= scopedFromId) return read(scoped, window, limit);
  const upper = read(scoped, { from: scopedFromId, to: window.to }, limit);
  if (upper.length >= limit) return upper;
  return [...upper, ...read(match, { from: window.from, to: scopedFromId - 1 }, limit - upper.length)];
}
