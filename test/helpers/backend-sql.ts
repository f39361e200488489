/**
 * Plain SQL on a test backend's own database, for fixtures a contract test plants (rows no store writes, or a
 * planted corruption): statements are written with PostgreSQL's placeholders ($1, $2…), which SQLite reads as its
 * numbered ?1, ?2…. Only the tests use it; the stores never do.
 */
import { type PgDatabase, toPgText } from "../../src/postgres/pg-database.js";
import type { Database } from "../../src/sqlite/database.js";
import type { TestBackend } from "./backends.js";

type Param = string | number | null;

export interface BackendSql {
  /** Host text as the backend stores it (PostgreSQL cannot hold a NUL: pg-database.ts toPgText). */
  text(value: string): string;
  run(sql: string, params?: Param[]): Promise<void>;
  rows<Row>(sql: string, params?: Param[]): Promise<Row[]>;
}

export function backendSql(opened: TestBackend): BackendSql {
  const database = (opened.backend as unknown as { database: unknown }).database;
  if (opened.kind === "postgres") {
    const pg = database as PgDatabase;
    return {
      text: toPgText,
      run: async (sql, params = []) => void (await pg.run(sql, params)),
      rows: async <Row>(sql: string, params: Param[] = []) => (await pg.rows(sql, params)) as Row[],
    };
  }
  const sqlite = database as Database;
  const numbered = (sql: string) => sql.replace(/\$(\d+)/g, "?$1");
  return {
    text: (value) => value,
    run: async (sql, params = []) => void sqlite.run(numbered(sql), ...params),
    rows: async <Row>(sql: string, params: Param[] = []) => sqlite.all<Row>(numbered(sql), ...params),
  };
}
