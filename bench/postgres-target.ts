/**
 * The PostgreSQL side of `npm run bench -- --backend postgres`: a real server on 127.0.0.1 for the run (Debian's
 * PostgreSQL, test/postgres/postgres-server.ts) with the durability of a production server (fsync, synchronous
 * commit and full-page writes on), and per size a database of its own loaded from the same cached SQLite dataset the
 * SQLite run measures, with the table copy of `lcm migrate` (transfer/table-migration.ts), then indexed and analyzed.
 */
import { openPostgresBackend } from "../src/postgres/open-postgres-backend.js";
import { PgDatabase } from "../src/postgres/pg-database.js";
import { openSqliteBackend } from "../src/sqlite/open-sqlite-backend.js";
import { copyAllTables } from "../src/transfer/table-migration.js";
import { type PostgresServer, startPostgres } from "../test/postgres/postgres-server.js";
import { round } from "./measure.js";

/**
 * The server's settings besides the test server's (loopback only, 256 MB shared_buffers, 300 connections). The test
 * server runs with fsync off; the bench's writes its WAL and pages safely (fsync and full-page writes on), with the
 * durability of the SQLite file it is compared with: SQLite runs its log with synchronous=NORMAL, where a commit
 * does not wait for the disk and the last commits may roll back after a power loss, never corrupting the file;
 * PostgreSQL's synchronous_commit=off is that promise (the WAL writer flushes within 3 × wal_writer_delay).
 */
export const BENCH_POSTGRES_SETTINGS: Record<string, string> = {
  fsync: "on",
  synchronous_commit: "off",
  full_page_writes: "on",
  // The default 1 GB between checkpoints: the 1M load writes more WAL than that, so checkpoints would be forced.
  max_wal_size: "4GB",
};

export function startBenchPostgres(log: (line: string) => void): Promise<PostgresServer> {
  return startPostgres({ settings: BENCH_POSTGRES_SETTINGS, log });
}

/** The URL of database `name` on the server at `serverUrl`. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one statement outside a transaction on the server's maintenance database (CREATE / DROP DATABASE). */
async function admin(serverUrl: string, sql: string): Promise<void> {
  const database = new PgDatabase(serverUrl, { poolSize: 1 });
  try {
    await (await database.pool()).query(sql);
  } finally {
    await database.close();
  }
}

/** A new empty database `name` (dropped first when a killed run left it); returns its URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Not a plain database name: ${name}`);
  await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  return databaseUrl(serverUrl, name);
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

export interface LoadFigures {
  /** The table copy: every row of the dataset, ids kept. */
  copySeconds: number;
  copiedRows: number;
  /** Full-text indexing of every copied message, summary and stored file afterwards (SearchIndex.indexPending). */
  indexSeconds: number;
  indexedMessages: number;
  /** VACUUM ANALYZE afterwards (autovacuum would do it on a running server; done here so every size starts alike). */
  vacuumSeconds: number;
}

/** Copies the SQLite dataset at `datasetPath` into the empty database at `url` (its own private pools). */
export async function copyDataset(datasetPath: string, url: string, log: (line: string) => void): Promise<Pick<LoadFigures, "copySeconds" | "copiedRows">> {
  const source = openSqliteBackend(datasetPath, "private");
  const target = openPostgresBackend(url, "private");
  try {
    const started = performance.now();
    let lastLog = started;
    const report = await copyAllTables(source.tableCopy, target.tableCopy, {
      batchRows: 2_000,
      onProgress: (table, done, total) => {
        if (performance.now() - lastLog < 15_000) return;
        lastLog = performance.now();
        log(`    copying ${table}: ${done.toLocaleString("en")} / ${total.toLocaleString("en")}`);
      },
    });
    return { copySeconds: round((performance.now() - started) / 1000, 1), copiedRows: report.copied };
  } finally {
    await source.close();
    await target.close();
  }
}

/** Indexes everything the copy left waiting, then VACUUM ANALYZE, on the process's shared pool for `url`. */
export async function indexAndAnalyze(url: string): Promise<Pick<LoadFigures, "indexSeconds" | "indexedMessages" | "vacuumSeconds">> {
  const backend = openPostgresBackend(url, "shared");
  const started = performance.now();
  let indexedMessages = 0;
  let waitingBefore = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const progress = await backend.searchIndex.indexPending({ maxFileBytes: Number.MAX_SAFE_INTEGER });
    indexedMessages += progress.indexed;
    const waiting = progress.pending + (await backend.searchIndex.pendingSummaries());
    if (waiting === 0) break;
    if (waiting >= waitingBefore) throw new Error(`indexPending made no progress with ${waiting} messages and summaries waiting`);
    waitingBefore = waiting;
  }
  const indexSeconds = round((performance.now() - started) / 1000, 1);
  const vacuumStarted = performance.now();
  await backend.database.run("VACUUM ANALYZE");
  return { indexSeconds, indexedMessages, vacuumSeconds: round((performance.now() - vacuumStarted) / 1000, 1) };
}
