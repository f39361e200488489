/**
 * The PostgreSQL side of SearchIndex (specs/028-postgres.md, "Search"). Several gateways write one database and ids
 * commit out of order, so a row id watermark alone could skip a row forever: instead triggers put every new message
 * and summary in a queue (`*_search_pending`) inside the writer's own transaction, and the indexer drains it oldest
 * first, `FOR UPDATE SKIP LOCKED` (concurrent indexers take disjoint rows), writing each row's tsvector
 * (pg-search-document.ts), its new dictionary words and the queue's deletion in one transaction. The watermark
 * `indexedThrough` is derived, never stored: the id below the oldest new row still queued (or the newest id when none
 * is), so every committed row at or below it is in the index and the rows above it are read by scanning.
 */
import { analyzeDocument } from "../text/text-analysis.js";
import { nextLoopTurn } from "../runtime/time-slice.js";
import type { Logger } from "../contracts.js";
import { describeError } from "../errors.js";
import type { IndexProgress, SearchIndex } from "../store/search-index.js";
import type { PgDatabase } from "./pg-database.js";
import { argumentSpansSql, toSearchableText } from "./pg-searchable-text.js";
import { BLOCKS_THROUGH_SQL, PgBacklogBlocks } from "./pg-backlog-blocks.js";
import { type IndexSource, newestIdSql, watermarkSql } from "./pg-index-watermark.js";
import { type PgQueryable, type PgStatement, preparedStatement } from "./pg-queryable.js";
import { documentVector } from "./pg-search-document.js";
import { PgTermDictionary } from "./pg-term-dictionary.js";
import type { PgFileIndex } from "./pg-file-index.js";

/** Rows per indexing transaction, at most. */
export const INDEX_CHUNK_ROWS = 100;
/** Messages waiting at which the background indexing takes over from the turns' maintenance (as SQLite's worker). */
export const BACKLOG_IN_BACKGROUND_MESSAGES = 10_000;
/** Bytes of stored content the background indexing takes per step (rows: one chunk a step). */
const BACKGROUND_STEP_FILE_BYTES = 1024 * 1024;
/** The background indexing of each pool in this process (one per database), and the pools where it failed. */
const backgroundRuns = new WeakMap<PgDatabase, Promise<void>>();
const backgroundFailed = new WeakSet<PgDatabase>();
/** A chunk takes no further row once its analysis ran this long (its first row it always takes). */
const CHUNK_TIME_MS = 12;


/** Where each index reads its rows: the queue, the index table, and the row's text (with tool-call spans). */
const SOURCES: Record<IndexSource, { pending: string; index: string; id: string; rows: string; text: string; spans: string }> = {
  messages: {
    pending: "message_search_pending", index: "message_search", id: "message_id", rows: "messages m ON m.message_id = p.message_id",
    text: "m.content", spans: argumentSpansSql("m"),
  },
  summaries: {
    pending: "summary_search_pending", index: "summary_search", id: "summary_id", rows: "summaries m ON m.id = p.summary_id",
    text: "m.content", spans: "NULL",
  },
};

/**
 * Per source, one row: rows waiting (at most `atMost` counted: a placeholder), the watermark and the newest id
 * (`catchUp`; the full-text look-up reads it in its own statement, pg-text-search.ts).
 */
export function catchUpStateSql(source: IndexSource, atMost: string): string {
  const { pending } = SOURCES[source];
  return `SELECT (SELECT count(*)::int FROM (SELECT 1 FROM ${pending} LIMIT ${atMost}) w) AS waiting,
    ${watermarkSql(source)} AS through, coalesce((${newestIdSql(source)}), 0) AS newest,
    ${source === "messages" ? BLOCKS_THROUGH_SQL : "0::bigint"} AS blocks`;
}

const CATCH_UP_SQL = Object.fromEntries((["messages", "summaries"] as const).map((source) => [source, preparedStatement(catchUpStateSql(source, "$1"), { plan: "generic" })])) as Record<IndexSource, PgStatement>;

/** What a search reads of an index before using it: rows waiting, the watermark, the newest id. */
export interface IndexState {
  waiting: number;
  through: number;
  newest: number;
  /** The highest message id the backlog's blocks cover (pg-backlog-blocks.ts; 0: none, and always for summaries). */
  blocks: number;
}


export class PgSearchIndex implements SearchIndex {
  private readonly dictionary: PgTermDictionary;
  private readonly blocks: PgBacklogBlocks;

  constructor(private readonly db: PgDatabase, readonly files: PgFileIndex) {
    this.dictionary = new PgTermDictionary(db);
    this.blocks = new PgBacklogBlocks(db);
  }

  async pendingMessages(): Promise<number> {
    return this.pending("messages");
  }

  /**
   * A large backlog (a bulk import, a long history's bootstrap, a burst of sub-agents) indexed in the background, on
   * this process's event loop: the same chunks as maintenance (each at most CHUNK_TIME_MS of analysis and one short
   * transaction, the loop free between them), one after another until nothing is left, where maintenance takes
   * 5,000 rows a turn (a 1M backlog: 200 turns). True while it runs: maintenance then leaves the backlog to it. One per
   * database and process; another gateway runs its own, each chunk taking rows no other indexer holds. It stops when
   * caught up or when the pool closes; a failure is logged once, and from then on this answers false (maintenance
   * indexes in turn again). The analysis stays on the gateway's thread (SQLite's runs on a worker thread): the server
   * does the rest, and a chunk is as short as a turn's own. Before it indexes, the run covers the backlog with blocks
   * (pg-backlog-blocks.ts), which searches read meanwhile instead of every waiting row.
   */
  async indexBacklogInBackground(logger: Logger, whenAtLeast = BACKLOG_IN_BACKGROUND_MESSAGES): Promise<boolean> {
    if (this.db.readOnly || backgroundFailed.has(this.db)) return false;
    if (backgroundRuns.has(this.db)) return true;
    const waiting = await this.pending("messages", whenAtLeast);
    if (backgroundRuns.has(this.db)) return true; // started by another call meanwhile
    if (waiting < whenAtLeast) return false;
    const run = this.indexInBackground(logger).finally(() => backgroundRuns.delete(this.db));
    backgroundRuns.set(this.db, run);
    return true;
  }

  /** The background run of this database's pool, if one runs (tests wait for it). */
  backgroundRun(): Promise<void> | undefined {
    return backgroundRuns.get(this.db);
  }

  private async indexInBackground(logger: Logger): Promise<void> {
    try {
      // One chunk a step, the pool checked before each: a closing pool is never asked for a connection (one asked for
      // while it closes waits for its connection timeout, 10 s).
      // First the blocks (seconds), so that searches read only the rows that may hold what they look for while the
      // rows are indexed (minutes); emptied when every message is.
      await this.blocks.fill(() => this.db.isClosed);
      while (!this.db.isClosed && (await this.indexSource("messages", INDEX_CHUNK_ROWS)) > 0) await nextLoopTurn();
      if (!this.db.isClosed && (await this.pending("messages")) === 0) await this.blocks.empty();
      while (!this.db.isClosed && (await this.indexSource("summaries", INDEX_CHUNK_ROWS)) > 0) await nextLoopTurn();
      while (!this.db.isClosed && (await this.files.indexPending(BACKGROUND_STEP_FILE_BYTES)) > 0) await nextLoopTurn();
    } catch (error) {
      if (this.db.isClosed) return;
      backgroundFailed.add(this.db);
      logger.warn(`Background indexing of the search backlog stopped: ${describeError(error)}. Maintenance indexes it in turn from now on.`);
    }
  }

  async pendingSummaries(): Promise<number> {
    return this.pending("summaries");
  }

  /** Rows of `source` waiting for the index (new ones and changed ones). */
  async pending(source: IndexSource, atMost?: number): Promise<number> {
    const table = SOURCES[source].pending;
    const row = atMost === undefined
      ? await this.db.row<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`)
      : await this.db.row<{ count: number }>(`SELECT count(*)::int AS count FROM (SELECT 1 FROM ${table} LIMIT $1) w`, [atMost + 1]);
    return row?.count ?? 0;
  }

  /**
   * The highest id below which every row of `source` is indexed (the id before the oldest new row waiting, or the
   * newest id when none waits), and the newest id stored.
   */
  async through(source: IndexSource): Promise<{ through: number; newest: number }> {
    const row = await this.db.row<{ through: number; newest: number }>(
      `SELECT ${watermarkSql(source)} AS through, coalesce((${newestIdSql(source)}), 0) AS newest`,
    );
    return { through: row?.through ?? 0, newest: row?.newest ?? 0 };
  }

  /**
   * In one statement: how many rows of `source` wait for the index (at most `atMost` + 1 counted), and `through`.
   * A search's catch-up: when at most `atMost` wait, indexes them and reads the state again.
   */
  async catchUp(source: IndexSource, atMost: number): Promise<IndexState> {
    const read = async () => (await this.db.row<IndexState>(CATCH_UP_SQL[source], [atMost + 1]))!;
    const state = await read();
    if (!this.needsCatchUp(state, atMost)) return state;
    await this.indexSource(source, atMost);
    return read();
  }

  /**
   * The indexing of `catchUp` after its state was read elsewhere (`state`: with a full-text look-up); whether it
   * indexed (then what was read with the state is out of date).
   */
  async catchUpAfter(source: IndexSource, state: IndexState, atMost: number): Promise<boolean> {
    if (!this.needsCatchUp(state, atMost)) return false;
    await this.indexSource(source, atMost);
    return true;
  }

  /**
   * Whether a search indexes the rows waiting itself (some, at most `atMost`) before reading the index. A read-only
   * pool never does: its searches read the rows above the watermark directly (SqliteSearchIndex.indexIfAtMost does the same).
   */
  private needsCatchUp(state: IndexState, atMost: number): boolean {
    return !this.db.readOnly && state.waiting > 0 && state.waiting <= atMost;
  }

  async indexPending(options: { whenAtLeast?: number; maxRows?: number; maxFileBytes?: number } = {}): Promise<IndexProgress> {
    const { whenAtLeast = 1, maxRows = Number.POSITIVE_INFINITY, maxFileBytes = 0 } = options;
    let pending = await this.pending("messages");
    let indexed = 0;
    if (pending > 0 && pending >= whenAtLeast) {
      indexed = await this.indexSource("messages", maxRows);
      pending = await this.pending("messages");
    }
    if (indexed < maxRows && (await this.pending("summaries", 0)) > 0) await this.indexSource("summaries", maxRows - indexed);
    // Maintenance (a byte budget for stored files) also uploads the content of files this machine holds that the
    // database lacks (recorded before migration 8): another machine's gateway can then read and index them.
    if (maxFileBytes > 0) await this.files.stored.uploadHeld();
    const fileBytes = maxFileBytes > 0 ? await this.files.indexPending(maxFileBytes) : 0;
    return { indexed, pending, fileBytes };
  }

  private async indexSource(source: IndexSource, maxRows: number): Promise<number> {
    let indexed = 0;
    while (indexed < maxRows) {
      const limit = Math.min(INDEX_CHUNK_ROWS, maxRows - indexed);
      const { count, added } = await this.db.transaction((tx) => this.indexChunk(tx, source, limit));
      this.dictionary.committed(added);
      if (count === 0) break;
      indexed += count;
      await nextLoopTurn();
    }
    return indexed;
  }

  /**
   * Inside a transaction: takes up to `limit` queued rows no other indexer holds, oldest first, and indexes them
   * (a queued row whose row is gone is just dequeued). Rows the chunk's time budget leaves stay queued.
   */
  private async indexChunk(tx: PgQueryable, source: IndexSource, limit: number): Promise<{ count: number; added: string[] }> {
    const { pending, index, id, rows: join, text, spans } = SOURCES[source];
    const rows = await tx.rows<{ id: number; content: string | null; spans: string | null }>(
      `SELECT p.${id} AS id, ${text} AS content, ${spans} AS spans
       FROM (SELECT ${id} FROM ${pending} ORDER BY ${id} LIMIT $1 FOR UPDATE SKIP LOCKED) p LEFT JOIN ${join}
       ORDER BY p.${id}`,
      [limit],
    );
    if (rows.length === 0) return { count: 0, added: [] };
    const words = new Set<string>();
    const ids: number[] = [];
    const documents: string[] = [];
    const counts: number[] = [];
    const gone: number[] = [];
    const started = performance.now();
    for (const row of rows) {
      if (ids.length + gone.length > 0 && performance.now() - started > CHUNK_TIME_MS) break;
      if (row.content === null) {
        gone.push(row.id);
        continue;
      }
      const document = analyzeDocument(toSearchableText(row.content, row.spans), words);
      ids.push(row.id);
      documents.push(documentVector(document.words, document.derived));
      counts.push(document.wordCount);
    }
    // Dictionary first, then the index rows (whose trigger takes the statistics row's lock last): no lock cycle.
    const added = await this.dictionary.list(tx, words);
    if (ids.length > 0) {
      await tx.run(
        `INSERT INTO ${index} (${id}, document, word_count)
         SELECT * FROM unnest($1::bigint[], $2::text[]::tsvector[], $3::int[])
         ON CONFLICT (${id}) DO UPDATE SET document = EXCLUDED.document, word_count = EXCLUDED.word_count`,
        [ids, documents, counts],
      );
    }
    await tx.run(`DELETE FROM ${pending} WHERE ${id} = ANY($1::bigint[])`, [[...ids, ...gone]]);
    return { count: ids.length + gone.length, added };
  }
}
