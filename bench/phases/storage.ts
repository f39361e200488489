/**
 * Storage: database bytes per byte of message text, indexes included, and where the bytes go (the dbstat
 * virtual table, one row per table or index). Measured on the working copy before any phase writes to it, so
 * it describes the dataset exactly as the engine stored it. Beside it, what the dataset's build saw on disk at
 * its largest (database + write-ahead log, sampled throughout the build): the file measured here has its log
 * folded in, which hides a log that grew while writes went on. On PostgreSQL: the database's size on the server
 * (pg_database_size, after the load's VACUUM ANALYZE) and each table (heap and TOAST) and index; the build's log
 * figures are SQLite's and are left out (the server's WAL is shared by its databases and recycled by checkpoints).
 */
import { statSync } from "node:fs";
import type { BenchContext } from "../context.js";
import { Phase, type PhaseResult, round } from "../measure.js";
import { megabytes } from "../wal-sampler.js";

export async function runStoragePhase(context: BenchContext): Promise<PhaseResult> {
  if (context.target.kind === "postgres") return postgresStorage(context);
  const db = context.db.sqlite!;
  const phase = new Phase("storage");
  const rows = db.all<{ name: string; bytes: number; unused: number }>(
    "SELECT name, sum(pgsize) AS bytes, sum(unused) AS unused FROM dbstat GROUP BY name ORDER BY bytes DESC",
  );
  const pageSize = db.get<{ page_size: number }>("PRAGMA page_size")!.page_size;
  const pageCount = db.get<{ page_count: number }>("PRAGMA page_count")!.page_count;
  const freePages = db.get<{ freelist_count: number }>("PRAGMA freelist_count")!.freelist_count;
  const walBytes = fileSize(`${context.target.databasePath}-wal`);
  const databaseBytes = pageSize * pageCount + walBytes;
  const { textBytes, jsonBytes, messages, build } = context.manifest;
  const breakdown: Record<string, number> = {};
  for (const row of rows) breakdown[`bytes.${row.name}`] = row.bytes;
  const result = phase.finish({
    values: {
      databaseBytes,
      textBytes,
      jsonBytes,
      bytesPerTextByte: round(databaseBytes / textBytes, 3),
      bytesPerJsonByte: round(databaseBytes / jsonBytes, 3),
      bytesPerMessage: Math.round(databaseBytes / messages),
      freePages,
      unusedBytesInPages: rows.reduce((sum, row) => sum + row.unused, 0),
      ...(build.maxWalBytes === undefined ? {} : {
        buildMaxWalMb: megabytes(build.maxWalBytes),
        buildMaxFileBytesPerTextByte: round(build.maxFileBytes / textBytes, 3),
      }),
      ...breakdown,
    },
  });
  delete result.eventLoopMaxMs; // dbstat is a diagnostic the plugin never runs
  return result;
}

async function postgresStorage(context: BenchContext): Promise<PhaseResult> {
  const phase = new Phase("storage");
  const database = (await context.db.get<{ bytes: number }>("SELECT pg_database_size(current_database()) AS bytes"))!;
  // Every table of the schema with its TOAST (pg_table_size), and every index apart (pg_relation_size).
  const rows = await context.db.all<{ name: string; bytes: number }>(
    `SELECT c.relname AS name, CASE WHEN c.relkind = 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i', 'm')
      ORDER BY bytes DESC`,
  );
  const databaseBytes = Number(database.bytes);
  const { textBytes, jsonBytes, messages } = context.manifest;
  const breakdown: Record<string, number> = {};
  for (const row of rows) breakdown[`bytes.${row.name}`] = Number(row.bytes);
  const result = phase.finish({
    values: {
      databaseBytes,
      textBytes,
      jsonBytes,
      bytesPerTextByte: round(databaseBytes / textBytes, 3),
      bytesPerJsonByte: round(databaseBytes / jsonBytes, 3),
      bytesPerMessage: Math.round(databaseBytes / messages),
      ...breakdown,
    },
  });
  delete result.eventLoopMaxMs; // a size query the plugin never runs
  return result;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL file: everything is in the main file
  }
}
