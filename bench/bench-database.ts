/**
 * Which database a benchmark run measures (a SQLite file, or a database on a PostgreSQL server), the plugin settings
 * that open it, and the bench's own bookkeeping reads on it (counts, ids, context sizes) written once in SQLite's
 * SQL with `?` placeholders and run on either backend. Full-text indexing goes through the backend's SearchIndex
 * contract, as maintain does it, on the process's shared connection (the engine's own).
 */
import { openPostgresBackend } from "../src/postgres/open-postgres-backend.js";
import type { PgDatabase, PgParam } from "../src/postgres/pg-database.js";
import { processShared } from "../src/runtime/process-shared.js";
import { closeSharedDatabase, openSharedDatabase } from "../src/sqlite/connection-registry.js";
import type { Database } from "../src/sqlite/database.js";
import { openSqliteBackend } from "../src/sqlite/open-sqlite-backend.js";
import type { IndexProgress, SearchIndex } from "../src/store/search-index.js";

/**
 * A database the bench drives. `filesDirectory`: where its plugin stores files aside; the dataset's own
 * (datasetPaths) while it is built, then one per run for a working copy (it reads the dataset's files where their
 * recorded paths say), one per copy a phase makes (copyFilesDirectory) and one per scratch database. Never one shared by two databases: the plugin's maintain removes
 * the files of a conversation directory that its database has no row for, and every database has a conversation 1.
 */
export type BenchTarget = ({ kind: "sqlite"; databasePath: string } | { kind: "postgres"; url: string }) & { filesDirectory: string };

type Param = string | number | null;

export interface BenchDatabase {
  readonly target: BenchTarget;
  get<Row>(sql: string, ...params: Param[]): Promise<Row | undefined>;
  all<Row>(sql: string, ...params: Param[]): Promise<Row[]>;
  /** Indexes what waits for the full-text index, as maintain does (SearchIndex.indexPending). */
  indexPending(options?: { whenAtLeast?: number }): Promise<IndexProgress>;
  /** The SQLite connection (WAL and checkpointer figures), or null on PostgreSQL. */
  readonly sqlite: Database | null;
  /** The PostgreSQL pool, or null on SQLite. */
  readonly postgres: PgDatabase | null;
}

/**
 * Settings of every bench database: tool outputs of 2,000 tokens or more (the long ones, 1% of tool results) are
 * stored aside, as a small window's share stores them (spec 011), so every search also covers stored content.
 */
export function targetConfig(target: BenchTarget): Record<string, unknown> {
  if (target.kind === "sqlite") {
    return { databasePath: target.databasePath, filesDirectory: target.filesDirectory, largeFileTokenThreshold: 2_000 };
  }
  return { databaseUrl: target.url, filesDirectory: target.filesDirectory, largeFileTokenThreshold: 2_000 };
}

/** Bookkeeping reads on the process's shared connection to `target` (the one the plugin's engines use). */
export function openBenchDatabase(target: BenchTarget): BenchDatabase {
  if (target.kind === "sqlite") {
    const database = (): Database => openSharedDatabase(target.databasePath);
    return {
      target,
      get: async (sql, ...params) => database().get(sql, ...params),
      all: async (sql, ...params) => database().all(sql, ...params),
      indexPending: (options) => searchIndexOf(openSqliteBackend(target.databasePath, "shared").searchIndex, options),
      get sqlite() {
        return database();
      },
      postgres: null,
    };
  }
  const backend = () => openPostgresBackend(target.url, "shared");
  return {
    target,
    get: async (sql, ...params) => ((await backend().database.row(postgresSql(sql), params as PgParam[])) ?? undefined) as never,
    all: async (sql, ...params) => (await backend().database.rows(postgresSql(sql), params as PgParam[])) as never,
    indexPending: (options) => searchIndexOf(backend().searchIndex, options),
    sqlite: null,
    get postgres() {
      return backend().database;
    },
  };
}

function searchIndexOf(index: SearchIndex, options?: { whenAtLeast?: number }): Promise<IndexProgress> {
  return index.indexPending(options);
}

/** SQLite's `?` and `?N` placeholders as PostgreSQL's `$N` (the bench's SQL has no `?` inside a literal). */
export function postgresSql(sql: string): string {
  let next = 0;
  return sql.replace(/\?(\d+)?/g, (_match, number: string | undefined) => `$${number ?? ++next}`);
}

/** A target named on a command line: a postgres:// URL, else a SQLite file path; its files in `filesDirectory`. */
export function targetOf(location: string, filesDirectory: string): BenchTarget {
  return /^postgres(ql)?:\/\//.test(location) ? { kind: "postgres", url: location, filesDirectory } : { kind: "sqlite", databasePath: location, filesDirectory };
}

export function locationOf(target: BenchTarget): string {
  return target.kind === "sqlite" ? target.databasePath : target.url;
}

/**
 * Closes the process's shared connection to `target` (the engines' own): the next engine opens it anew, as after a
 * restart. PostgreSQL: the shared pool for the URL ends and leaves the process-wide map (open-postgres-backend.ts).
 */
export async function closeShared(target: BenchTarget): Promise<void> {
  if (target.kind === "sqlite") {
    closeSharedDatabase(target.databasePath);
    return;
  }
  const pools = processShared("postgres-pools.v1", () => new Map<string, PgDatabase>());
  const database = pools.get(target.url);
  pools.delete(target.url);
  await database?.close();
}
