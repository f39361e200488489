/**
 * Measures `lcm import lossless-claw --apply` on a 100k-message peer database (not a timed test): the command runs
 * in-process, as the bin runs it, while bench/loop-probe.ts watches the event loop. Prints the import rate and the
 * longest block (wall-clock, and the main thread's CPU time in it), apart for the import and for the search indexing
 * that follows it.
 * `npx tsx bench/import-block.ts` (MESSAGES=… for another size; PROFILE=1 names the calls inside each block > 25 ms).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import os from "node:os";
import { Writable } from "node:stream";
import { Command } from "commander";
import { defineLcmCommands } from "../src/cli/lcm-program.js";
import { openDatabase } from "../src/sqlite/connection-registry.js";
import { SqlitePeerImportStore } from "../src/sqlite/sqlite-peer-import-store.js";
import { PeerReader } from "../src/transfer/lossless-claw/peer-reader.js";
import { SqliteSearchIndex } from "../src/sqlite/sqlite-search-index.js";
import { buildLargePeer } from "../test/transfer/lossless-claw/large-peer.js";
import { round, startLoopProbe } from "./loop-probe.js";

const MESSAGES = Number(process.env.MESSAGES ?? 100_000);
const directory = mkdtempSync(join(tmpdir(), "lcm-import-block-"));
const source = join(directory, "lcm.db");
const target = join(directory, "lcm-context.db");
buildLargePeer(source, MESSAGES);

/** Every call of these classes' methods, with when it ran (PROFILE=1). */
const calls: { name: string; start: number; end: number }[] = [];
if (process.env.PROFILE) {
  for (const type of [SqlitePeerImportStore, PeerReader, SqliteSearchIndex] as unknown as { name: string; prototype: Record<string, unknown> }[]) {
    for (const name of Object.getOwnPropertyNames(type.prototype)) {
      const method = type.prototype[name];
      if (name === "constructor" || typeof method !== "function") continue;
      type.prototype[name] = function (this: unknown, ...args: unknown[]) {
        const start = performance.now();
        const result = (method as (...values: unknown[]) => unknown).apply(this, args);
        calls.push({ name: `${type.name}.${name}`, start, end: performance.now() });
        return result;
      };
    }
  }
}
let indexingStartedAt = Number.POSITIVE_INFINITY;
const indexPending = SqliteSearchIndex.prototype.indexPending;
SqliteSearchIndex.prototype.indexPending = function (this: SqliteSearchIndex, ...args: Parameters<typeof indexPending>) {
  indexingStartedAt = Math.min(indexingStartedAt, performance.now());
  return indexPending.apply(this, args);
};

const probe = startLoopProbe();

let stdout = "";
const sink = (keep: boolean) => new Writable({ write(chunk: Buffer, _encoding, done) { if (keep) stdout += chunk.toString(); done(); } });
const program = new Command("lcm").exitOverride();
let exitCode = 0;
defineLcmCommands(program, {
  stdout: sink(true) as unknown as NodeJS.WriteStream, stderr: sink(false) as unknown as NodeJS.WriteStream,
  env: { HOME: directory }, setExitCode: (code) => { exitCode = code; },
});
const started = performance.now();
await program.parseAsync(["node", "lcm", "import", "lossless-claw", source, "--db", target, "--apply", "--json"]);
const durationMs = performance.now() - started;
const loop = probe.stop();

const report = JSON.parse(stdout) as { written: { messages: number; summaries: number }; durationMs: number; messagesPerSecond: number; indexed: { messages: number } | null };
const longestIn = (from: number, to: number) => {
  const inside = loop.stretches.filter((stretch) => stretch.to > from && stretch.from < to);
  return { wallMs: round(Math.max(0, ...inside.map((stretch) => stretch.wallMs))), cpuMs: round(Math.max(0, ...inside.map((stretch) => stretch.cpuMs))) };
};
console.log(JSON.stringify({
  exitCode, messages: report.written.messages, summaries: report.written.summaries, importMs: report.durationMs,
  messagesPerSecond: report.messagesPerSecond, indexedMessages: report.indexed?.messages ?? 0,
  indexingMs: Math.round(started + durationMs - indexingStartedAt), commandMs: Math.round(durationMs),
  longestBlockMs: round(loop.longest.wallMs), longestBlockCpuMs: round(loop.longest.cpuMs), mostCpuInOneBlockMs: round(loop.longestCpu.cpuMs),
  import: longestIn(started, indexingStartedAt), indexing: longestIn(indexingStartedAt, Number.POSITIVE_INFINITY),
  loopDelayMaxMs: round(loop.delayMaxMs), loopDelayP99Ms: round(loop.delayP99Ms), loadAverage: os.loadavg().map(round),
}, null, 1));
// What the two indexes schema 10 added for retention take (dbstat; page counts when SQLite lacks it).
const database = openDatabase(target);
try {
  const pageSize = Number(database.get<{ page_size: number }>("PRAGMA page_size")!.page_size);
  const total = Number(database.get<{ page_count: number }>("PRAGMA page_count")!.page_count) * pageSize;
  const names = ["summary_messages", "summary_messages_message", "context_items", "context_items_message", "messages"];
  const sizes = Object.fromEntries(database.all<{ name: string; bytes: number; pages: number }>(
    `SELECT name, sum(pgsize) AS bytes, count(*) AS pages FROM dbstat WHERE name IN (SELECT value FROM json_each(?)) GROUP BY name`,
    JSON.stringify(names),
  ).map((row) => [row.name, row.bytes]));
  const rows = { summaryMessages: database.get<{ n: number }>("SELECT count(*) AS n FROM summary_messages")!.n, contextItems: database.get<{ n: number }>("SELECT count(*) AS n FROM context_items")!.n };
  console.log(JSON.stringify({ fileBytes: total, rows, indexBytes: sizes }, null, 1));
} finally {
  database.close();
}
if (process.env.PROFILE) {
  for (const stretch of loop.stretches.filter((entry) => entry.wallMs > 25 || entry.cpuMs > 15)) {
    const inside = calls.filter((call) => call.end > stretch.from && call.start < stretch.to && call.end - call.start > 1);
    console.log(`block ${round(stretch.wallMs)} ms (cpu ${round(stretch.cpuMs)}): ${inside.map((call) => `${call.name} ${round(call.end - call.start)}`).join(", ") || "(no store call: planning or encoding)"}`);
  }
}
