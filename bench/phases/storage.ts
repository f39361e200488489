/**
 * Storage: database bytes per byte of message text, indexes included, and where the bytes go (the dbstat
 * virtual table, one row per table or index). Measured on the working copy before any phase writes to it, so
 * it describes the dataset exactly as the engine stored it. Beside it, what the dataset's build saw on disk at
 * its largest (database + write-ahead log, sampled throughout the build): the file measured here has its log
 * folded in, which hides a log that grew while writes went on.
 */
import { statSync } from "node:fs";
import { type BenchContext, databaseOf } from "../context.js";
import { Phase, type PhaseResult, round } from "../measure.js";
import { megabytes } from "../wal-sampler.js";

export function runStoragePhase(context: BenchContext): PhaseResult {
  const db = databaseOf(context);
  const phase = new Phase("storage");
  const rows = db.all<{ name: string; bytes: number; unused: number }>(
    "SELECT name, sum(pgsize) AS bytes, sum(unused) AS unused FROM dbstat GROUP BY name ORDER BY bytes DESC",
  );
  const pageSize = db.get<{ page_size: number }>("PRAGMA page_size")!.page_size;
  const pageCount = db.get<{ page_count: number }>("PRAGMA page_count")!.page_count;
  const freePages = db.get<{ freelist_count: number }>("PRAGMA freelist_count")!.freelist_count;
  const walBytes = fileSize(`${context.databasePath}-wal`);
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

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL file: everything is in the main file
  }
}
