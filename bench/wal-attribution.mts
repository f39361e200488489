/**
 * Where the backlog worker's writes go (issue 30, spec 030 3b): indexes LIMIT messages of a copy of a dataset with
 * its indexes emptied, at the worker's pace, with checkpoints off so the write-ahead log keeps every page each
 * commit wrote; then counts the log's frames per table or index (dbstat's owner of each page number).
 * `npx tsx bench/wal-attribution.mts <dataset.db> [limit] [sliceRows] [sliceMs] [analyse-first | in-transaction]`
 */
import { copyFileSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { openDatabase } from "../src/sqlite/connection-registry.js";
import { SqliteSearchIndex } from "../src/sqlite/sqlite-search-index.js";

const [source, limitText = "20000", rowsText = "5000", msText = "250", mode = "analyse-first"] = process.argv.slice(2);
const path = "/tmp/lcm-wal-attribution.db";
for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
copyFileSync(source!, path);
const db = openDatabase(path);
const index = new SqliteSearchIndex(db);
await index.rebuild("messages_fts");
db.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
db.raw.exec("PRAGMA wal_autocheckpoint = 0");
db.checkpointer?.close();
const limit = Number(limitText);
// How long each transaction holds the write lock: what a gateway's write waits for at most.
const writeNow = db.writeNow.bind(db);
let longestLockMs = 0;
db.writeNow = <T,>(body: () => T): T => {
  const started = performance.now();
  try {
    return writeNow(body);
  } finally {
    longestLockMs = Math.max(longestLockMs, performance.now() - started);
  }
};
let commits = 0;
await index.indexBacklog({ rows: Number(rowsText), budgetMs: Number(msText), analyseFirst: mode === "analyse-first", shouldStop: () => index.through("messages_fts") >= limit, holds: () => (commits++, true) });
const pageSize = db.get<{ page_size: number }>("PRAGMA page_size")!.page_size;
const owner = new Map(db.all<{ name: string; pageno: number }>("SELECT name, pageno FROM dbstat").map((row) => [row.pageno, row.name]));
const wal = openSync(`${path}-wal`, "r");
const frames = (statSync(`${path}-wal`).size - 32) / (24 + pageSize);
const header = Buffer.alloc(24);
const perOwner = new Map<string, number>();
for (let frame = 0; frame < frames; frame++) {
  readSync(wal, header, 0, 24, 32 + frame * (24 + pageSize));
  const name = owner.get(header.readUInt32BE(0)) ?? "(freed or new)";
  perOwner.set(name, (perOwner.get(name) ?? 0) + 1);
}
const text = db.get<{ bytes: number }>("SELECT sum(length(CAST(content AS BLOB))) AS bytes FROM messages WHERE message_id <= ?", index.through("messages_fts"))!.bytes;
console.log(`${index.through("messages_fts")} messages, ${(text / 2 ** 20).toFixed(1)} MB of text, ${commits} slices, ${frames} log frames = ${(frames * pageSize / text).toFixed(1)} bytes per byte of text (before any checkpoint copies them); longest transaction ${longestLockMs.toFixed(0)} ms`);
for (const [name, count] of [...perOwner].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
  console.log(`${name.padEnd(28)} ${String(count).padStart(8)} frames  ${(count * pageSize / 2 ** 20).toFixed(1).padStart(7)} MB  ${(100 * count / frames).toFixed(1)}%`);
}
