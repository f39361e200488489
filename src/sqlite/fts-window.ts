/**
 * The row ids an FTS5 index matches inside a window of ids, newest first, read without giving FTS5 the window's lower
 * bound (issue 30).
 *
 * Why: with `ORDER BY rowid DESC` and `rowid >= from`, FTS5 (SQLite 3.53.4) pays for the whole doclist of each term
 * once the read runs past `from`, however small the window: "the" took 276 ms at 10M (29 ms at 1M) whether the window
 * held 581 of its matches or 284,548, and "function" 66 ms, where reading its newest 7,000 matches with no lower bound
 * took 0.5 ms. A read that reaches its LIMIT before `from` never pays it, which is why the first windows of a search
 * were cheap and the windows it read to the end were not. Here the ids come from a statement bounded above only, and
 * the read stops at the first id below `from`.
 */
import type { Database } from "./database.js";

/** Ids handed on at most per chunk (a JSON array read back by json_each). */
const MAX_CHUNK = 8_192;

/**
 * The ids `table` matches for `match` in `window`, newest first, in chunks of `firstChunk` ids, each next one four
 * times larger. Consume synchronously: the statement stays open between chunks, and stopping early (a `break`)
 * resets it.
 */
export function* windowIds(
  db: Database, table: string, match: string, window: { from: number; to: number }, firstChunk: number,
): Generator<number[]> {
  if (window.to < window.from) return;
  const statement = db.statement(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? AND rowid <= ? ORDER BY rowid DESC`, true);
  let size = Math.max(1, Math.min(firstChunk, MAX_CHUNK));
  let chunk: number[] = [];
  for (const [id] of statement.iterate(match, window.to) as Iterable<[number]>) {
    if (id < window.from) break;
    chunk.push(id);
    if (chunk.length >= size) {
      yield chunk;
      chunk = [];
      size = Math.min(size * 4, MAX_CHUNK);
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * The rows of the newest ids matching `match` in `window`, at most `limit`: `rowsOf(ids, wanted)` reads a chunk's rows
 * that pass the caller's filter, newest first (`ids` a JSON array, newest first).
 */
export function windowRows<Row>(
  db: Database, table: string, match: string, window: { from: number; to: number }, limit: number,
  rowsOf: (ids: string, wanted: number) => Row[],
): Row[] {
  const rows: Row[] = [];
  if (limit <= 0) return rows;
  for (const ids of windowIds(db, table, match, window, limit)) {
    rows.push(...rowsOf(JSON.stringify(ids), limit - rows.length));
    if (rows.length >= limit) break;
  }
  return rows;
}
