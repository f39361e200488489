/**
 * How search reads run on PostgreSQL: on a pool of their own (a sibling of the backend's, on the same database) whose
 * connections carry a short `statement_timeout`, so a read the planner gets wrong on a large history is cancelled by
 * the server after a few seconds instead of holding a connection and the caller; the writers' pool keeps its own,
 * longer limit. (A transaction per read with SET LOCAL did the same at three more round trips per statement: a
 * full-text grep runs a hundred or more.) A cancelled read becomes a clear LcmError ("timeout": what ran too long, how
 * to narrow it), not a storage failure: the database is fine, the question was too broad.
 */
import type { QueryResultRow } from "pg";
import { LcmError } from "../errors.js";
import { type PgDatabase, sqlState } from "./pg-database.js";
import type { PgParam, PgQueryable, PgSql } from "./pg-queryable.js";

/** How long one search statement may run by default. */
export const SEARCH_STATEMENT_TIMEOUT_MS = 5_000;
/** Connections of the search pool: reads are short, and a gateway runs a few searches at once at most. */
const SEARCH_POOL_SIZE = 4;
/** SQLSTATE of a statement the server cancelled (statement_timeout). */
const QUERY_CANCELED = "57014";

export class PgSearchReader {
  readonly pool: PgDatabase;

  constructor(db: PgDatabase, readonly timeoutMs: number = SEARCH_STATEMENT_TIMEOUT_MS) {
    // No sequential scans where an index serves: the planner does not count decompressing a TOASTed tsvector, so on
    // a small table (788 chunks of stored content) it checked every row's vector (14 ms) instead of the GIN index's
    // few matches (0.1 ms). A read no index serves still scans. (plan_cache_mode = force_generic_plan was tried for
    // the prepared look-ups: it also applies to the unnamed statement every other read is sent as, whose plan must
    // know the query: a rare word's candidates ran 16 ms instead of 0.6.)
    this.pool = db.sibling(`search-${timeoutMs}`, { statementTimeoutMs: timeoutMs, poolSize: SEARCH_POOL_SIZE, planner: { enable_seqscan: "off" } });
  }

  /** Runs `body`'s statements on the search pool, each under the timeout; `what` names the step in the error. */
  async each<T>(what: string, body: (reads: PgQueryable) => Promise<T>): Promise<T> {
    try {
      return await body(this.pool);
    } catch (error) {
      if (sqlState(error) !== QUERY_CANCELED) throw error;
      throw new LcmError(
        "timeout",
        `The search's ${what} ran past its ${this.timeoutMs} ms limit on PostgreSQL and was stopped; nothing was returned for it. ` +
          `Narrow the search (a rarer word, "since"/"before", one conversation) and try again.`,
        // No `cause`: the server is fine, and the driver's error (SQLSTATE 57014) would read as a storage failure.
        { timeoutMs: this.timeoutMs, sqlState: QUERY_CANCELED },
      );
    }
  }

  /** Runs one search statement under the timeout. */
  rows<Row extends QueryResultRow>(what: string, sql: PgSql, params: readonly PgParam[] = []): Promise<Row[]> {
    return this.each(what, (reads) => reads.rows<Row>(sql, params));
  }

  async row<Row extends QueryResultRow>(what: string, sql: PgSql, params: readonly PgParam[] = []): Promise<Row | null> {
    return (await this.rows<Row>(what, sql, params))[0] ?? null;
  }
}
