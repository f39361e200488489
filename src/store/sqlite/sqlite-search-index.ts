/**
 * The SQLite side of SearchIndex: messages_fts (external content over `messages`) written in batches.
 *
 * `search_index_state.through` is the highest message_id in the index. Messages are never deleted and their ids
 * only grow, so the pending messages are exactly `message_id > through`, read by a rowid range. One transaction
 * indexes a chunk of them with a single INSERT … SELECT (one FTS5 segment per chunk, where indexing inside each
 * turn's write made one per turn) and advances `through` with it, so a crash leaves either both or neither.
 *
 * FTS5's automatic merging is off (schema version 2): it ran inside whichever commit crossed a work unit and
 * cost that commit 36-48 ms at a million messages. After indexing, segments are merged by FTS5 'merge' commands
 * on the connection's background worker (wal-checkpointer.ts); where no worker runs yet, here, one transaction
 * per step, until FTS5 reports nothing left to merge or the call's step budget is spent. FTS5's crisis merge
 * (16 segments on one level) remains the backstop.
 *
 * The term dictionary (`search_terms`, schema version 3) lists the index's distinct terms for regex words that
 * may end a longer word. A chunk's terms are taken from a temporary contentless FTS5 table with the index's own
 * tokenizer, so they are exactly the terms the index holds. That doubles the cost of a chunk, so the dictionary
 * is kept in its own transactions, behind the index: it covers the indexed messages in (floor, top]
 * (`term_dictionary` and `term_dictionary_top` in search_index_state). Maintenance extends it up to the index
 * and, on files upgraded from version 2, backfills it down to 0; a search extends a small gap itself and uses the
 * dictionary only when it covers every indexed message.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Database } from "../../db/database.js";
import { MERGE_STEP_PAGES } from "../../db/wal-checkpointer.js";
import type { IndexProgress, SearchIndex } from "../search-index.js";

/**
 * Messages per indexing transaction, which blocks the event loop while it runs: 5-7 ms at a million messages.
 */
export const INDEX_CHUNK_ROWS = 250;
/**
 * Messages per term-dictionary transaction: ~30 µs each with the dictionary saturated (a million messages), up
 * to ~70 µs while most terms are new (a young history), so 3-7 ms.
 */
export const TERMS_CHUNK_ROWS = 100;
/** Merge steps per indexed chunk, at most: enough to keep the segment count bounded as chunks arrive. */
const MERGE_STEPS_PER_CHUNK = 8;
/**
 * Past this many indexed messages a merge step can take tens of ms (a common word's doclist is merged whole), so
 * merging always goes to the background worker, started for it if need be; below, a step takes a few ms and a
 * connection that has not started its worker yet merges on its own thread.
 */
export const WORKER_MERGE_AFTER_MESSAGES = 100_000;

/** Terms made only of digits are left out of the dictionary: numbers are most of a history's distinct terms. */
const DICTIONARY_TERM = "term GLOB '*[^0-9]*'";

export class SqliteSearchIndex implements SearchIndex {
  constructor(private readonly db: Database) {}

  async pendingMessages(): Promise<number> {
    return this.pendingNow();
  }

  async indexPending(options: { whenAtLeast?: number; maxRows?: number } = {}): Promise<IndexProgress> {
    const { whenAtLeast = 1, maxRows = Number.POSITIVE_INFINITY } = options;
    let pending = this.pendingNow();
    if (pending === 0 || pending < whenAtLeast) return { indexed: 0, pending };
    let indexed = 0;
    let chunks = 0;
    while (pending > 0 && indexed < maxRows) {
      const limit = Math.min(INDEX_CHUNK_ROWS, maxRows - indexed);
      indexed += await this.db.write(() => this.indexChunk(limit));
      chunks++;
      pending = this.pendingNow();
      await yieldToEventLoop();
    }
    await this.merge(chunks * MERGE_STEPS_PER_CHUNK);
    return { indexed, pending };
  }

  /**
   * Brings the term dictionary closer to covering every indexed message, in bounded transactions: first the
   * newest indexed messages above its top, then (files upgraded from version 2) the oldest below its floor.
   * Returns how many messages it covered, at most `maxRows`.
   */
  async maintainTerms(maxRows: number): Promise<number> {
    let covered = await this.extendTerms(maxRows);
    while (covered < maxRows && this.dictionaryRange().floor > 0) {
      const done = await this.db.write(() => this.backfillChunk(Math.min(TERMS_CHUNK_ROWS, maxRows - covered)));
      if (done === 0) break;
      covered += done;
      await yieldToEventLoop();
    }
    return covered;
  }

  /** Adds the terms of up to `maxRows` indexed messages above the dictionary's top; returns how many. */
  async extendTerms(maxRows: number): Promise<number> {
    let covered = 0;
    while (covered < maxRows && this.dictionaryRange().top < this.through()) {
      covered += await this.db.write(() => this.extendChunk(Math.min(TERMS_CHUNK_ROWS, maxRows - covered)));
      await yieldToEventLoop();
    }
    return covered;
  }

  /** Indexed messages whose terms are not in the dictionary yet, below its floor and above its top. */
  uncoveredNow(): number {
    // Message ids are dense (each is the largest so far plus one; messages are never deleted): the floor is the
    // number of messages at or below it.
    const { floor, top } = this.dictionaryRange();
    return floor + Math.max(0, this.through() - top);
  }

  /** Covers the oldest `limit` indexed messages above the top and raises it past them. */
  private extendChunk(limit: number): number {
    const { top } = this.dictionaryRange();
    const chunk = this.db.get<{ last: number | null; count: number }>(
      `SELECT max(message_id) AS last, count(*) AS count
       FROM (SELECT message_id FROM messages WHERE message_id > ? AND message_id <= ? ORDER BY message_id LIMIT ?)`,
      top, this.through(), limit,
    )!;
    if (chunk.last === null) return 0;
    this.addTerms(top, chunk.last);
    this.db.run("UPDATE search_index_state SET through = ? WHERE name = 'term_dictionary_top'", chunk.last);
    return chunk.count;
  }

  /** Covers the newest `limit` messages below the floor and lowers it past them (to 0 when none are left). */
  private backfillChunk(limit: number): number {
    const { floor } = this.dictionaryRange();
    if (floor === 0) return 0;
    const chunk = this.db.get<{ first: number | null; count: number }>(
      `SELECT min(message_id) AS first, count(*) AS count
       FROM (SELECT message_id FROM messages WHERE message_id <= ? ORDER BY message_id DESC LIMIT ?)`,
      floor, limit,
    )!;
    const newFloor = chunk.first === null ? 0 : chunk.first - 1;
    if (chunk.first !== null) this.addTerms(newFloor, floor);
    this.db.run("UPDATE search_index_state SET through = ? WHERE name = 'term_dictionary'", newFloor);
    return chunk.count;
  }

  /** Adds the terms of messages `from` < message_id <= `to` that the dictionary lacks (inside a transaction). */
  private addTerms(from: number, to: number): void {
    // Temporary tables belong to the connection and vanish with a rolled-back transaction that created them, so
    // this runs every time (a no-op once they exist; measured: it does not expire the connection's statements).
    this.db.raw.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunk_terms USING fts5 (
        content, content = '', tokenize = 'unicode61 remove_diacritics 2'
      );
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunk_vocabulary USING fts5vocab (temp, chunk_terms, row);
    `);
    this.db.run(
      "INSERT INTO temp.chunk_terms (rowid, content) SELECT message_id, content FROM messages WHERE message_id > ? AND message_id <= ?",
      from, to,
    );
    this.db.run(
      `INSERT INTO search_terms (term, reversed)
       SELECT term, lcm_reverse(term) FROM temp.chunk_vocabulary -- lcm_reverse: see Database
       WHERE ${DICTIONARY_TERM} AND term NOT IN (SELECT term FROM search_terms)`,
    );
    this.db.run("INSERT INTO temp.chunk_terms (chunk_terms) VALUES ('delete-all')");
  }

  /**
   * Indexes up to `limit` pending messages inside the caller's write transaction; returns how many. Reading
   * `through` inside the transaction makes concurrent indexers (other processes) skip what one already did.
   */
  indexChunk(limit: number): number {
    const through = this.through();
    const last = this.db.get<{ last: number | null; count: number }>(
      `SELECT max(message_id) AS last, count(*) AS count
       FROM (SELECT message_id FROM messages WHERE message_id > ? ORDER BY message_id LIMIT ?)`,
      through, limit,
    )!;
    if (last.last === null) return 0;
    this.db.run(
      `INSERT INTO messages_fts (rowid, content)
       SELECT message_id, content FROM messages WHERE message_id > ? AND message_id <= ? ORDER BY message_id`,
      through, last.last,
    );
    this.db.run("UPDATE search_index_state SET through = ? WHERE name = 'messages_fts'", last.last);
    return last.count;
  }

  /**
   * Marks every stored message indexed, inside the caller's transaction (after an FTS5 'rebuild'). The term
   * dictionary starts over above them all (floor and top at the newest message), and maintenance backfills it.
   */
  markAllIndexed(): void {
    this.db.run(
      `UPDATE search_index_state SET through = (SELECT coalesce(max(message_id), 0) FROM messages)
       WHERE name IN ('messages_fts', 'term_dictionary', 'term_dictionary_top')`,
    );
  }

  /** True when the term dictionary holds the terms of every indexed message. */
  termDictionaryComplete(): boolean {
    const { floor, top } = this.dictionaryRange();
    return floor === 0 && top >= this.through();
  }

  /** Merges on the background worker, or here in bounded steps; stops early once FTS5 finds nothing to merge. */
  private async merge(maxSteps: number): Promise<void> {
    if (maxSteps === 0 || this.db.checkpointer?.requestIndexMerge(this.through() > WORKER_MERGE_AFTER_MESSAGES)) return;
    for (let step = 0; step < maxSteps; step++) {
      const worked = await this.db.write(() => {
        const before = this.totalChanges();
        this.db.run("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)", MERGE_STEP_PAGES);
        // FTS5 documents this test: the command changed two or more rows only when it merged something.
        return this.totalChanges() - before >= 2;
      });
      if (!worked) return;
      await yieldToEventLoop();
    }
  }

  private pendingNow(): number {
    const row = this.db.get<{ newest: number | null; through: number }>(
      `SELECT (SELECT max(message_id) FROM messages) AS newest,
              (SELECT through FROM search_index_state WHERE name = 'messages_fts') AS through`,
    )!;
    return Math.max(0, (row.newest ?? 0) - row.through);
  }

  /** The indexed messages the term dictionary covers: message_id in (floor, top]. */
  private dictionaryRange(): { floor: number; top: number } {
    return this.db.get<{ floor: number; top: number }>(
      `SELECT (SELECT through FROM search_index_state WHERE name = 'term_dictionary') AS floor,
              (SELECT through FROM search_index_state WHERE name = 'term_dictionary_top') AS top`,
    )!;
  }

  private through(): number {
    return this.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = 'messages_fts'")!.through;
  }

  private totalChanges(): number {
    return this.db.get<{ changes: number }>("SELECT total_changes() AS changes")!.changes;
  }
}
