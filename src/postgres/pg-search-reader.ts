/**
 * How search reads run on PostgreSQL: each in a transaction of its own with `SET LOCAL statement_timeout`, so a read
 * the planner gets wrong on a large history is cancelled by the server after a few seconds instead of holding a
 * connection and the caller. A cancelled read becomes a clear LcmError ("timeout": what ran too long, how to narrow
 * it), not a storage failure: the database is fine, the question was too broad.
 */
import type { QueryResultRow } from "pg";
import { LcmError } from "../errors.js";
import { type PgDatabase, sqlState } from "./pg-database.js";
import type { PgParam } from "./pg-queryable.js";

/** How long one search statement may run by default. */
export const SEARCH_STATEMENT_TIMEOUT_MS = 5_000;
/** SQLSTATE of a statement the server cancelled (statement_timeout). */
const QUERY_CANCELED = "57014";

export class PgSearchReader {
  constructor(private readonly db: PgDatabase, readonly timeoutMs: number = SEARCH_STATEMENT_TIMEOUT_MS) {}

  /** Runs one search statement under the timeout; `what` names it in the error. */
  async rows<Row extends QueryResultRow>(what: string, sql: string, params: readonly PgParam[] = []): Promise<Row[]> {
    try {
      return await this.db.transaction(async (tx) => {
        await tx.run("SELECT set_config('statement_timeout', $1, true)", [String(this.timeoutMs)]);
        return tx.rows<Row>(sql, params);
      });
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

  async row<Row extends QueryResultRow>(what: string, sql: string, params: readonly PgParam[] = []): Promise<Row | null> {
    return (await this.rows<Row>(what, sql, params))[0] ?? null;
  }
}
