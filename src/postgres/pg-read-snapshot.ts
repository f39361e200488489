/**
 * One committed state of a PostgreSQL database for a long read (an export, a backup, a migration's source): a
 * REPEATABLE READ, READ ONLY transaction on one pooled client, held while the reader writes its file between pages.
 * It takes no row lock and blocks no writer (only DDL waits for it), unlike every other transaction of the stores,
 * which holds nothing but its own statements. Outside `run`, statements go to the pool as usual.
 */
import type { PoolClient, QueryResultRow } from "pg";
import type { PgDatabase, PgParam } from "./pg-database.js";

export class PgReadSnapshot {
  private client: PoolClient | null = null;

  constructor(private readonly database: PgDatabase) {}

  /** Runs `body` with every query of this reader in one snapshot (a nested call joins the outer one). */
  async run<T>(body: () => Promise<T>): Promise<T> {
    if (this.client !== null) return body();
    await this.database.ready();
    const client = await (await this.database.pool()).connect();
    let broken = false;
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      this.client = client;
      const result = await body();
      await client.query("COMMIT");
      return result;
    } catch (error) {
      broken = await client.query("ROLLBACK").then(() => false, () => true);
      throw error;
    } finally {
      this.client = null;
      client.release(broken);
    }
  }

  /** Rows as objects, in the snapshot when one is open. */
  async rows<Row extends QueryResultRow>(sql: string, params: readonly PgParam[] = []): Promise<Row[]> {
    if (this.client === null) return this.database.rows<Row>(sql, params);
    return (await this.client.query<Row>(sql, params as unknown[])).rows;
  }

  /** Rows as arrays in column order (the driver's array mode), in the snapshot when one is open. */
  async arrays<Row extends unknown[]>(sql: string, params: readonly PgParam[] = []): Promise<Row[]> {
    const query = { text: sql, values: params as unknown[], rowMode: "array" as const };
    if (this.client !== null) return (await this.client.query<Row>(query)).rows;
    await this.database.ready();
    return (await (await this.database.pool()).query<Row>(query)).rows;
  }
}
