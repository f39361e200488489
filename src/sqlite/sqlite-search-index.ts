/**
 * The SQLite side of SearchIndex: the contentless full-text indexes `messages_fts` and `summaries_fts` (schema
 * version 8), written in batches after the rows themselves, and the term dictionary written with them.
 *
 * `search_index_state.through` is the highest row id in each index. New rows get ids above every row left, and a
 * deletion that removes the newest rows (retention, an import that is taken back) lowers the mark to the newest row
 * left (sqlite-retention-store.ts lowerIndexedThrough), so the rows waiting are exactly `id > through`, a rowid range. One transaction indexes a chunk of them and advances
 * `through` with it, so a crash leaves both or neither. What is indexed is computed here, in JavaScript, by the
 * backend-neutral analysis (text/text-analysis.ts): the words of the searchable text (tool-call arguments
 * decoded) and their fragments; the tables tokenize only on the spaces between them.
 *
 * New words of a chunk go into the term dictionary (sqlite-term-dictionary.ts) in the chunk's transaction; those of
 * a row too long for one chunk in shares, in the chunks before it.
 *
 * FTS5's automatic merging is off; after indexing, message segments are merged by FTS5 'merge' commands on the
 * connection's background worker (wal-checkpointer.ts), or here in bounded steps where no worker runs. Summary
 * segments are few (one summary per dozens of messages) and merged here. While a backlog is indexed, the indexer
 * keeps every level of the index under FTS5's crisis-merge size (each chunk adds a segment to level 0): FTS5 would
 * otherwise merge level 0 inside the chunk that left 16 segments on it, and every full level above with it, in one
 * transaction (CRISIS_MERGE_SEGMENTS, fts5-structure.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Database } from "./database.js";
import { isBusyError } from "./database.js";
import { MERGE_STEP_PAGES } from "./wal-checkpointer.js";
import { nextLoopTurn } from "../runtime/time-slice.js";
import { analyzeDocument } from "../text/text-analysis.js";
import type { IndexProgress, SearchIndex } from "../store/search-index.js";
import { segmentsPerLevel } from "./fts5-structure.js";
import { argumentSpansSql, toSearchableText } from "./sqlite-searchable-text.js";
import { SqliteFileIndex } from "./sqlite-file-index.js";
import { BACKLOG_WORKER_MESSAGES, BacklogIndexThread, type WorkerEntry } from "./backlog-index-thread.js";
import type { Logger } from "../contracts.js";
import { TermDictionary } from "./sqlite-term-dictionary.js";
import { scopeStateName, withScopeToken } from "./search-scope.js";
import { BacklogBlocks } from "./sqlite-backlog-blocks.js";
import { BACKLOG_TRIGRAM, BacklogTrigram } from "./sqlite-backlog-trigram.js";

/**
 * Rows per indexing transaction, which blocks the event loop while it runs: the analysis, the FTS5 insert and the
 * chunk's new dictionary words cost about 100-180 µs of CPU per message at a million messages (more for long tool
 * output), so a chunk takes 10-20 ms; CHUNK_TIME_MS cuts one short that runs longer, counting the words still to be
 * listed at their measured cost (a chunk of new vocabulary spent 20 ms listing 786 words and 16 ms committing them).
 */
export const INDEX_CHUNK_ROWS = 100;
/**
 * A chunk takes no row that would make it run longer than this, its new dictionary words (listed after the rows) and
 * their commit counted at their measured cost; its first row it takes whatever it costs, unless its new words alone
 * are past it: those are then listed in shares over several chunks before the row is indexed.
 */
const CHUNK_TIME_MS = 12;
/** Fewest words a chunk lists ahead for a row too long for one chunk, however high their measured cost. */
const MIN_WORDS_LISTED_AHEAD = 64;
/** Merge steps per indexed chunk, at most: enough to keep the segment count bounded as chunks arrive. */
const MERGE_STEPS_PER_CHUNK = 4;
/**
 * Past this many indexed messages a merge step can take tens of ms (a common word's doclist is merged whole), so
 * merging always goes to the background worker, started for it if need be; below, a step takes a few ms and a
 * connection that has not started its worker yet merges on its own thread.
 */
export const WORKER_MERGE_AFTER_MESSAGES = 100_000;
/**
 * FTS5 merges a level of the index at once (`crisismerge`, 16 segments) inside the write that flushes level 0's
 * 16th segment, and then every level above that the merge fills to 16 in turn, all in one transaction. Each
 * indexing chunk adds one segment to level 0, so a backlog indexed with nothing merged in between made every 16th
 * chunk merge level 0 (1,600 rows: 25 ms more in that chunk's commit at 100k messages), the 256th level 1 too
 * (25,600 rows), the 4,096th level 2 as well (409,600 rows: 130 MB of write-ahead log at a million messages, past the
 * bound of spec 012, and seconds on the event loop). The indexer asks the background worker to merge once a level is
 * half full, and waits for it before a chunk whose flush would merge anything (the worker's merges go in bounded
 * steps, the log checked after each).
 */
export const CRISIS_MERGE_SEGMENTS = 16;
/** Share of `crisismerge` on a level at which the indexer asks the worker to merge, before a chunk has to wait. */
const MERGE_REQUEST_SHARE = 0.5;
/** How often a waiting indexer looks at the levels again, and how long it waits at most before it goes on regardless. */
const LEVEL_POLL_MS = 10;
export const MAX_LEVEL_WAIT_MS = 5_000;
/** The structure record of an FTS5 index: the row of its `_data` table with this id (FTS5_STRUCTURE_ROWID). */
const STRUCTURE_ROW_ID = 10;

export type IndexTable = "messages_fts" | "summaries_fts";

/**
 * How a run of chunks goes: rows per chunk and its time budget; on the backlog worker also when to stop (the
 * gateway closing) and whether this indexer may go on (its lease, checked inside each chunk's transaction).
 */
export interface IndexPace {
  rows: number;
  budgetMs: number;
  /**
   * Analyse a chunk's rows before its transaction, which then only writes them (the backlog worker): the write lock
   * is held for the writes alone, so a chunk can take thousands of rows, and each commit, which rewrites the pages of
   * the term dictionary its new words touch, covers many more words (spec 030, 3b).
   */
  analyseFirst?: boolean;
  shouldStop?: () => boolean;
  holds?: () => boolean;
  /** Awaited after each chunk's commit, outside any transaction (the backlog worker bounds its log there). */
  afterChunk?: () => Promise<void>;
}

/** The gateway thread's pace: chunks short enough that the event loop never waits long (maintain, searches). */
const GATEWAY_PACE: IndexPace = { rows: INDEX_CHUNK_ROWS, budgetMs: CHUNK_TIME_MS };

/**
 * How many levels FTS5 would merge if one more segment were flushed onto level 0 of an index with these levels:
 * level 0 if it would reach CRISIS_MERGE_SEGMENTS, then each level above while the merge below fills it too.
 */
export function crisisMergeDepth(levels: readonly number[], crisisSegments = CRISIS_MERGE_SEGMENTS): number {
  let depth = 0;
  while ((levels[depth] ?? 0) + 1 >= crisisSegments) depth++;
  return depth;
}

/** Where each index reads its rows: the table, its row id, the newest id, the searchable text of a row. */
const SOURCES: Record<IndexTable, { table: string; id: string; newest: string; text: string; spans: string }> = {
  messages_fts: {
    table: "messages m", id: "m.message_id", newest: "SELECT max(message_id) FROM messages", text: "m.content", spans: argumentSpansSql("m"),
  },
  summaries_fts: { table: "summaries m", id: "m.id", newest: "SELECT max(id) FROM summaries", text: "m.content", spans: "NULL" },
};

/** A row waiting to be indexed: its id, stored text, tool-call argument spans and conversation. */
type PendingRow = [id: number, content: string, spans: string | null, conversationId: number];

export class SqliteSearchIndex implements SearchIndex {
  private readonly dictionary: TermDictionary;
  /** How long the last chunk analysed first held the write lock, its commit included (indexAnalysedChunk). */
  private lastWriteMs = 0;
  /** The index of content stored aside (sqlite-file-index.ts), written after the messages and summaries. */
  readonly files: SqliteFileIndex;

  constructor(private readonly db: Database, private readonly options: { workerEntry?: WorkerEntry } = {}) {
    this.dictionary = new TermDictionary(db);
    this.files = new SqliteFileIndex(db);
  }

  /**
   * Hands a backlog of at least `whenAtLeast` messages (default BACKLOG_WORKER_MESSAGES) to the connection's backlog
   * worker (backlog-index-thread.ts), starting it if need be. True while a worker indexes (this process's, or
   * another's holding the lease): the caller leaves the backlog to it. False: a smaller backlog, an in-memory or
   * read-only database, or a failed worker (logged once): the caller indexes in turn.
   */
  async indexBacklogInBackground(logger: Logger, whenAtLeast = BACKLOG_WORKER_MESSAGES): Promise<boolean> {
    if (this.db.readOnly || this.db.path === ":memory:") return false;
    const thread = this.db.backlogIndexer as BacklogIndexThread | null;
    if (thread === null && this.pending("messages_fts") < whenAtLeast) return false;
    const running = thread ?? new BacklogIndexThread(this.db, this.options.workerEntry);
    this.db.backlogIndexer = running;
    // Once started, a worker keeps the backlog until it caught up; a new one starts for the next large backlog.
    const state = running.isRunning || this.pending("messages_fts") >= whenAtLeast ? running.ensure(logger) : "in-turn";
    return state !== "in-turn";
  }

  async pendingMessages(): Promise<number> {
    return this.pending("messages_fts");
  }

  async pendingSummaries(): Promise<number> {
    return this.pending("summaries_fts");
  }

  /** Rows of `table` stored but not indexed yet. */
  pending(table: IndexTable): number {
    const row = this.db.get<{ newest: number | null; through: number }>(
      `SELECT (${SOURCES[table].newest}) AS newest, (SELECT through FROM search_index_state WHERE name = ?) AS through`,
      table,
    )!;
    return Math.max(0, (row.newest ?? 0) - row.through);
  }

  /** The highest row id in `table`'s index: rows above it are not indexed yet. */
  through(table: IndexTable): number {
    return this.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = ?", table)!.through;
  }

  /**
   * Indexes pending messages, then pending summaries, oldest first, in chunks of INDEX_CHUNK_ROWS with the event
   * loop running between them, up to `maxRows` rows; nothing while fewer than `whenAtLeast` messages wait.
   */
  async indexPending(options: { whenAtLeast?: number; maxRows?: number; maxFileBytes?: number } = {}): Promise<IndexProgress> {
    const { whenAtLeast = 1, maxRows = Number.POSITIVE_INFINITY, maxFileBytes = 0 } = options;
    let pending = this.pending("messages_fts");
    let indexed = 0;
    if (pending > 0 && pending >= whenAtLeast) {
      indexed = await this.indexTable("messages_fts", maxRows);
      pending = this.pending("messages_fts");
    }
    if (indexed < maxRows && this.pending("summaries_fts") > 0) await this.indexTable("summaries_fts", maxRows - indexed);
    const fileBytes = maxFileBytes > 0 ? await this.files.indexPending(maxFileBytes) : 0;
    return { indexed, pending, fileBytes };
  }

  /**
   * Indexes `table`'s backlog when it holds at most `limit` rows (a search's own catch-up: a few chunks); a larger
   * backlog (or any, on a read-only connection) is left for maintenance and the caller reads the rows not yet
   * indexed directly. Returns the rows still waiting.
   */
  async indexIfAtMost(table: IndexTable, limit: number): Promise<number> {
    const waiting = this.pending(table);
    // A read-only connection never writes: its searches read every row not indexed directly.
    if (waiting === 0 || waiting > limit || this.db.readOnly) return waiting;
    await this.indexTable(table, limit);
    return this.pending(table);
  }

  /**
   * Empties `table`'s index and starts it over (the doctor's repair; a contentless index cannot be rebuilt from
   * its content in place): maintenance and searches index the rows again, oldest first. Starting the message index
   * over starts the summary index, the index of stored content, the term dictionary and the backlog's trigram index
   * over too: the dictionary lists the words of all three.
   */
  async rebuild(table: IndexTable): Promise<void> {
    const tables: IndexTable[] = table === "messages_fts" ? ["messages_fts", "summaries_fts"] : [table];
    await this.db.write(() => {
      for (const name of tables) {
        this.db.run(`INSERT INTO ${name} (${name}) VALUES ('delete-all')`);
        this.db.run("UPDATE search_index_state SET through = 0 WHERE name = ?", name);
        // Every row is indexed again, each with its conversation's token (search-scope.ts).
        this.db.run("UPDATE search_index_state SET through = 1 WHERE name = ?", scopeStateName(name));
      }
      if (table === "messages_fts") {
        this.db.run("DELETE FROM search_terms");
        // The backlog's trigram index starts over too: a repair trusts no index (sqlite-backlog-trigram.ts).
        this.db.run(`INSERT INTO ${BACKLOG_TRIGRAM} (${BACKLOG_TRIGRAM}) VALUES ('delete-all')`);
        this.db.run("UPDATE search_index_state SET through = 0 WHERE name = ?", BACKLOG_TRIGRAM);
        new BacklogBlocks(this.db).empty();
      }
    });
    this.dictionary.forget();
    // The dictionary lists the words of stored content too: that index starts over with it.
    if (table === "messages_fts") await this.files.rebuild();
  }

  /**
   * What is wrong with `table`'s index, or null: FTS5's own structure check, then whether it holds exactly the
   * rows it claims (a contentless index cannot compare itself with the rows, so its row count stands in).
   * FTS5's check is an INSERT, so it takes the write lock like any writer: it waits for the lock (another
   * connection writing, the checkpoint worker truncating the log) instead of reporting "database is locked" as
   * a damaged index.
   */
  async verify(table: IndexTable): Promise<string | null> {
    const problem = await this.db.write(() => {
      try {
        this.db.run(`INSERT INTO ${table} (${table}, rank) VALUES ('integrity-check', 0)`);
        return null;
      } catch (error) {
        if (isBusyError(error)) throw error;
        return error instanceof Error ? error.message : String(error);
      }
    });
    if (problem !== null) return problem;
    const through = this.through(table);
    const source = SOURCES[table];
    const counts = this.db.get<{ indexed: number; rows: number }>(
      `SELECT (SELECT count(*) FROM ${table}_docsize) AS indexed,
              (SELECT count(*) FROM ${source.table} WHERE ${source.id} <= ?) AS rows`,
      through,
    )!;
    return counts.indexed === counts.rows
      ? null
      : `${table} holds ${counts.indexed} rows but claims the ${counts.rows} rows up to id ${through}; rebuild it (/lcm doctor repair).`;
  }

  /**
   * The backlog worker's run (backlog-index-worker.ts): indexes pending messages, then summaries, in slices of
   * `pace`, until none wait, `pace.shouldStop()` says so, or `pace.holds()` (called inside each slice's transaction:
   * the lease, renewed with the slice) says another indexer took over. Returns the rows indexed.
   */
  async indexBacklog(pace: IndexPace): Promise<number> {
    // A large backlog is first cut into blocks (a coarse filter, seconds at 1M), then indexed by its trigrams (a
    // search reads it through them meanwhile), then fully; a run that stopped during any of them resumes where it
    // stopped (the watermarks are kept across restarts).
    const trigram = new BacklogTrigram(this.db);
    const blocks = new BacklogBlocks(this.db);
    if (this.pending("messages_fts") >= BACKLOG_WORKER_MESSAGES || Math.max(trigram.through(), blocks.through()) > this.through("messages_fts")) {
      if ((await blocks.fill(pace)) < 0) return 0;
      if ((await trigram.fill(pace)) < 0) return 0;
    }
    let indexed = 0;
    for (const table of ["messages_fts", "summaries_fts"] as const) {
      if (pace.shouldStop?.()) break;
      indexed += await this.indexTable(table, Number.POSITIVE_INFINITY, pace);
    }
    if (!pace.shouldStop?.()) await trigram.emptyWhenCaughtUp(pace.holds, blocks);
    return indexed;
  }

  private async indexTable(table: IndexTable, maxRows: number, pace: IndexPace = GATEWAY_PACE): Promise<number> {
    let indexed = 0;
    let chunks = 0;
    let isPacing = true;
    // Analysed first, a chunk holds the lock only to write: sized so that its transaction takes about budgetMs.
    let analysedRows = Math.min(pace.rows, INDEX_CHUNK_ROWS);
    while (indexed < maxRows && !pace.shouldStop?.()) {
      // A wait that ran out (nothing merged the levels) is not repeated for every chunk of the run.
      if (isPacing) isPacing = await this.keepCrisisMergesSmall(table);
      const limit = Math.min(pace.analyseFirst ? analysedRows : pace.rows, maxRows - indexed);
      const added: string[] = [];
      this.dictionary.startChunk();
      const count = pace.analyseFirst
        ? await this.indexAnalysedChunk(limit, table, added, pace.holds)
        : await this.db.write(() => (pace.holds?.() === false ? -1 : this.indexChunk(limit, table, added, pace.budgetMs)));
      if (count < 0) break;
      if (pace.analyseFirst && count > 0) {
        const perRowMs = Math.max(this.lastWriteMs, 1) / count;
        analysedRows = Math.max(INDEX_CHUNK_ROWS, Math.min(pace.rows, Math.round(pace.budgetMs / perRowMs)));
      }
      this.dictionary.committed(added);
      // Nothing waiting (a chunk that listed a long row's words ahead indexed no row, and the run goes on).
      if (count === 0 && added.length === 0) break;
      indexed += count;
      if (count > 0) chunks++;
      await pace.afterChunk?.();
      // A full turn, timers included: a chunk that ran in a timer callback (after a wait for the lock or for the
      // merges) and one setImmediate ran the next chunk before any timer, two chunks in one block (22-29 ms of CPU).
      await nextLoopTurn();
    }
    await this.merge(table, chunks * MERGE_STEPS_PER_CHUNK);
    return indexed;
  }

  /** The watermark of `table` and up to `limit` rows above it, oldest first, with their text, tool-call spans and conversation. */
  private pendingRows(table: IndexTable, limit: number): { through: number; rows: PendingRow[] } {
    const source = SOURCES[table];
    const through = this.through(table);
    if (table === "messages_fts") this.dictionary.forgetIfStartedOver(through);
    const rows = this.db.tuples<PendingRow>(
      `SELECT ${source.id}, ${source.text}, ${source.spans}, m.conversation_id FROM ${source.table} WHERE ${source.id} > ? ORDER BY ${source.id} LIMIT ?`,
      through, limit,
    );
    return { through, rows };
  }

  /**
   * Indexes up to `limit` pending rows of `table` inside the caller's write transaction; returns how many, and
   * appends the dictionary words it listed to `added` (remember them once the transaction committed). Reading
   * `through` inside the transaction makes concurrent indexers (other processes) skip what one already did. Returns 0
   * with words in `added` when the first row's new words alone are past the chunk's budget: a share of them is listed,
   * and the row waits for a later chunk.
   */
  indexChunk(limit: number, table: IndexTable = "messages_fts", added: string[] = [], budgetMs = CHUNK_TIME_MS): number {
    const { through, rows } = this.pendingRows(table, limit);
    if (rows.length === 0) return 0;
    const chunkWords = this.dictionary.chunkWords();
    const msPerUnknownWord = this.dictionary.msPerUnknownWord();
    const started = performance.now();
    let last = through;
    let indexed = 0;
    for (const [id, content, spans, conversationId] of rows) {
      chunkWords.startRow();
      const document = analyzeDocument(toSearchableText(content, spans), chunkWords);
      // Long tool outputs, and words new to the dictionary (listed below, in this transaction), cost more than the
      // rest: a row that would take the chunk past its budget goes to the next chunk, which it starts. One long tool
      // output of new words lists 300-600 of them (6-12 ms with the commit); ending the chunk after it, as this did,
      // added that to a full chunk (24 ms of CPU at 1M).
      const dictionaryMs = chunkWords.unknown * msPerUnknownWord;
      if (performance.now() - started + dictionaryMs > budgetMs) {
        if (indexed > 0) {
          chunkWords.dropRow();
          break;
        }
        // The first row alone is past the budget. With more new words than fit, list the share that fits and index
        // the row later (the dictionary may list a word before its row is indexed, never after); otherwise take it.
        const room = Math.floor((budgetMs - (performance.now() - started)) / msPerUnknownWord);
        const share = Math.max(MIN_WORDS_LISTED_AHEAD, room);
        if (chunkWords.rowUnknown.length > share) {
          const words = chunkWords.rowUnknown.slice(0, share);
          this.dictionary.list(new Set(words), added, { started, loopMs: performance.now() - started, unknownWords: words.length });
          return 0;
        }
      }
      this.db.run(`INSERT INTO ${table} (rowid, words, derived) VALUES (?, ?, ?)`, id, document.words, withScopeToken(document.derived, conversationId));
      last = id;
      indexed++;
    }
    this.dictionary.list(chunkWords, added, { started, loopMs: performance.now() - started, unknownWords: chunkWords.unknown });
    this.db.run("UPDATE search_index_state SET through = ? WHERE name = ?", last, table);
    return indexed;
  }

  /**
   * Indexes up to `limit` pending rows of `table`, analysed before the transaction that writes them; -1 when `holds`
   * (called in the transaction) says this indexer may not go on. Another indexer that advanced the watermark
   * meanwhile makes the chunk write nothing (0 rows, and the caller's next chunk starts from the new watermark).
   */
  private async indexAnalysedChunk(limit: number, table: IndexTable, added: string[], holds?: () => boolean): Promise<number> {
    const { through, rows } = this.pendingRows(table, limit);
    if (rows.length === 0) return 0;
    const chunkWords = this.dictionary.chunkWords();
    const documents = rows.map(([id, content, spans, conversationId]) => {
      chunkWords.startRow();
      const document = analyzeDocument(toSearchableText(content, spans), chunkWords);
      return { id, words: document.words, derived: withScopeToken(document.derived, conversationId) };
    });
    const started = performance.now();
    let writing = 0;
    const count = await this.db.write(() => {
      writing = performance.now();
      if (holds?.() === false) return -1;
      if (this.through(table) !== through) return 0;
      for (const document of documents) {
        this.db.run(`INSERT INTO ${table} (rowid, words, derived) VALUES (?, ?, ?)`, document.id, document.words, document.derived);
      }
      this.dictionary.list(chunkWords, added, { started, loopMs: performance.now() - started, unknownWords: chunkWords.unknown });
      this.db.run("UPDATE search_index_state SET through = ? WHERE name = ?", documents.at(-1)!.id, table);
      return documents.length;
    });
    // From the lock taken to the commit done (db.write resolves after COMMIT): what a gateway's write waits for.
    this.lastWriteMs = performance.now() - writing;
    return count;
  }

  /**
   * Re-indexes one summary whose text a repair replaced, inside the caller's write transaction: its old words leave
   * `summaries_fts` and its new ones enter it, with any word new to the term dictionary listed in the same
   * transaction (appended to `added`: pass them to `committedWords` once it committed). A summary above the index's
   * watermark is not indexed yet; the indexer will read its new text.
   */
  reindexSummaryText(summaryRowId: number, added: string[]): void {
    if (summaryRowId > this.through("summaries_fts")) return;
    this.db.run("DELETE FROM summaries_fts WHERE rowid = ?", summaryRowId);
    const row = this.db.get<{ content: string; conversation_id: number }>("SELECT content, conversation_id FROM summaries WHERE id = ?", summaryRowId);
    if (!row) return;
    const started = performance.now();
    this.dictionary.startChunk();
    const words = this.dictionary.chunkWords();
    words.startRow();
    const document = analyzeDocument(toSearchableText(row.content, null), words);
    this.db.run(
      "INSERT INTO summaries_fts (rowid, words, derived) VALUES (?, ?, ?)", summaryRowId, document.words, withScopeToken(document.derived, row.conversation_id),
    );
    this.dictionary.list(words, added, { started, loopMs: performance.now() - started, unknownWords: words.unknown });
  }

  /** After the transaction of reindexSummaryText committed: remembers the words it listed. */
  committedWords(added: readonly string[]): void {
    this.dictionary.committed(added);
  }

  /** Segments on each level of `table`'s index, level 0 first (empty when FTS5's record is not one this code reads). */
  segmentsPerLevel(table: IndexTable): number[] {
    const row = this.db.get<{ block: Uint8Array }>(`SELECT block FROM ${table}_data WHERE id = ?`, STRUCTURE_ROW_ID);
    return segmentsPerLevel(row?.block) ?? [];
  }

  /** FTS5's `crisismerge` setting of `table` (16 unless set). */
  private crisisMergeSegments(table: IndexTable): number {
    const value = Number(this.db.get<{ v: unknown }>(`SELECT v FROM ${table}_config WHERE k = 'crisismerge'`)?.v);
    return Number.isInteger(value) && value > 1 ? value : CRISIS_MERGE_SEGMENTS;
  }

  /**
   * Before a chunk: asks the worker to merge once a level fills up halfway, and waits (the event loop runs) while the
   * chunk's flush would make FTS5 merge in the chunk's own transaction, at most MAX_LEVEL_WAIT_MS.
   * Where no worker merges (small or in-memory databases, a failed worker), merges here in bounded steps instead.
   * False when the wait ran out.
   */
  private async keepCrisisMergesSmall(table: IndexTable): Promise<boolean> {
    let levels = this.segmentsPerLevel(table);
    const crisisSegments = this.crisisMergeSegments(table);
    if (!levels.some((segments) => segments >= crisisSegments * MERGE_REQUEST_SHARE)) return true;
    const started = Date.now();
    for (;;) {
      if (!this.mergeOnWorker(table)) {
        if (crisisMergeDepth(levels, crisisSegments) > 0) await this.mergeHere(table, MERGE_STEPS_PER_CHUNK);
        return true;
      }
      // Asked again on every look: a merge run the worker ended early (busy) starts over; a running one ignores it.
      if (crisisMergeDepth(levels, crisisSegments) === 0) return true;
      if (Date.now() - started >= MAX_LEVEL_WAIT_MS) return false;
      await sleep(LEVEL_POLL_MS);
      levels = this.segmentsPerLevel(table);
    }
  }

  /** Merges on the background worker, or here in bounded steps; stops early once FTS5 finds nothing to merge. */
  private async merge(table: IndexTable, maxSteps: number): Promise<void> {
    if (maxSteps === 0) return;
    if (this.mergeOnWorker(table)) return;
    await this.mergeHere(table, maxSteps);
  }

  /** Asks the connection's worker to merge `table` (message index only); false when the caller must merge. */
  private mergeOnWorker(table: IndexTable): boolean {
    return table === "messages_fts" && (this.db.checkpointer?.requestIndexMerge(this.through(table) > WORKER_MERGE_AFTER_MESSAGES) ?? false);
  }

  private async mergeHere(table: IndexTable, maxSteps: number): Promise<void> {
    for (let step = 0; step < maxSteps; step++) {
      const worked = await this.db.write(() => {
        const before = this.totalChanges();
        this.db.run(`INSERT INTO ${table} (${table}, rank) VALUES ('merge', ?)`, MERGE_STEP_PAGES);
        // FTS5 documents this test: the command changed two or more rows only when it merged something.
        return this.totalChanges() - before >= 2;
      });
      if (!worked) return;
      await nextLoopTurn();
    }
  }

  private totalChanges(): number {
    return this.db.get<{ changes: number }>("SELECT total_changes() AS changes")!.changes;
  }
}
