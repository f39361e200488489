/**
 * Spec 030, Design 2b, measured before it was built: a copy of a dataset gets an FTS5 trigram index (detail=none,
 * contentless) over every message's searchable text (folded when it is not ASCII), filled in slices of SLICE rows
 * the way the backlog worker would; prints the rate, the index's size and the bytes written per byte of text, then
 * the time of trigram queries newest first (rare word, common word, a regex literal).
 * `npx tsx bench/trigram-probe.mts <dataset.db>`
 */
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fold } from "../src/text/text-analysis.js";
import { trigramExpression } from "../src/sqlite/sqlite-backlog-trigram.js";
import { argumentSpansSql, toSearchableText } from "../src/sqlite/sqlite-searchable-text.js";

/** Rows per slice, rows filled at most, and FTS5 settings to try (PROBE_SLICE, PROBE_ROWS, PROBE_SETTINGS="automerge=0,crisismerge=64"). */
const SLICE = Number(process.env.PROBE_SLICE ?? 5_000);
const MAX_ROWS = Number(process.env.PROBE_ROWS ?? Number.POSITIVE_INFINITY);
const SETTINGS = (process.env.PROBE_SETTINGS ?? "").split(",").filter(Boolean).map((pair) => pair.split("=") as [string, string]);
const source = process.argv[2]!;
const path = join(tmpdir(), `lcm-trigram-probe-${process.pid}.db`);
copyFileSync(source, path);
const written = () => Number(/write_bytes:\s*(\d+)/.exec(readFileSync("/proc/self/io", "utf8"))?.[1] ?? 0);
const db = new DatabaseSync(path);
db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
db.exec("CREATE VIRTUAL TABLE probe_trigram USING fts5(text, content='', detail=none, columnsize=0, tokenize='trigram')");
for (const [key, value] of SETTINGS) db.prepare("INSERT INTO probe_trigram (probe_trigram, rank) VALUES (?, ?)").run(key, BigInt(value));
const text = db.prepare("SELECT sum(length(CAST(content AS BLOB))) AS bytes, count(*) AS n FROM messages WHERE message_id <= ?").get(Number.isFinite(MAX_ROWS) ? MAX_ROWS : 1e15) as { bytes: number; n: number };
const read = db.prepare(`SELECT m.message_id AS id, m.content AS content, ${argumentSpansSql("m")} AS spans FROM messages m WHERE m.message_id > ? ORDER BY m.message_id LIMIT ?`);
const insert = db.prepare("INSERT INTO probe_trigram (rowid, text) VALUES (?, ?)");
const load = loadavg()[0];
const writtenBefore = written();
const started = performance.now();
let through = 0;
let cpuJs = 0;
let longestSlice = 0;
for (;;) {
  const rows = read.all(through, SLICE) as { id: number; content: string; spans: string | null }[];
  if (rows.length === 0 || through >= MAX_ROWS) break;
  const jsStarted = performance.now();
  const texts = rows.map((row) => {
    const searchable = toSearchableText(row.content, row.spans);
    return /^[\x00-\x7f]*$/.test(searchable) ? searchable : fold(searchable);
  });
  cpuJs += performance.now() - jsStarted;
  const sliceStarted = performance.now();
  db.exec("BEGIN IMMEDIATE");
  for (const [index, row] of rows.entries()) insert.run(row.id, texts[index]!);
  db.exec("COMMIT");
  longestSlice = Math.max(longestSlice, performance.now() - sliceStarted);
  through = rows.at(-1)!.id;
}
const seconds = (performance.now() - started) / 1000;
db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
const writtenBytes = written() - writtenBefore;
const size = db.prepare("SELECT sum(pgsize) AS bytes FROM dbstat WHERE name LIKE 'probe_trigram%'").get() as { bytes: number };
console.log(JSON.stringify({
  settings: SETTINGS, slice: SLICE, messages: text.n, textBytes: text.bytes, seconds: Math.round(seconds * 10) / 10, messagesPerSecond: Math.round(text.n / seconds),
  jsSeconds: Math.round(cpuJs / 100) / 10, longestSliceMs: Math.round(longestSlice),
  indexPerTextByte: Math.round((size.bytes / text.bytes) * 1000) / 1000, writtenPerTextByte: Math.round((writtenBytes / text.bytes) * 100) / 100,
  loadAverage: { before: load, after: loadavg()[0] },
}));
// detail=none answers no phrase: a substring is the AND of its trigrams (sqlite-backlog-trigram.ts).
const queries: Record<string, string> = {
  rare: trigramExpression(["quokkafjord"])!, common: trigramExpression(["the"])!, regexLiteral: trigramExpression(["await"])!,
  twoWords: `(${trigramExpression(["function"])}) AND (${trigramExpression(["return"])})`,
};
for (const [name, match] of Object.entries(queries)) {
  for (const limit of [120, 1_000]) {
    const samples: number[] = [];
    let count = 0;
    for (let run = 0; run < 5; run++) {
      const queryStarted = performance.now();
      count = (db.prepare(`SELECT rowid FROM probe_trigram WHERE probe_trigram MATCH ? AND rowid > ? ORDER BY rowid DESC LIMIT ?`).all(match, 0, limit)).length;
      samples.push(performance.now() - queryStarted);
    }
    samples.sort((a, b) => a - b);
    console.log(JSON.stringify({ query: name, limit, rows: count, medianMs: Math.round(samples[2]! * 10) / 10, load: loadavg()[0] }));
  }
  const countStarted = performance.now();
  const all = (db.prepare("SELECT count(*) AS n FROM probe_trigram WHERE probe_trigram MATCH ?").get(match) as { n: number }).n;
  console.log(JSON.stringify({ query: name, all, countMs: Math.round(performance.now() - countStarted) }));
}
const dropStarted = performance.now();
db.exec("INSERT INTO probe_trigram (probe_trigram) VALUES ('delete-all')");
console.log(JSON.stringify({ deleteAllMs: Math.round(performance.now() - dropStarted) }));
db.close();
for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
