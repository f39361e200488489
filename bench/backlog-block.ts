/**
 * Measures a whole history indexed as a backlog (issue 30): a copy of a bench dataset with every full-text index
 * emptied (as a bulk import with `--no-index` leaves it), then the first lcm_grep over it, then the backlog worker
 * (sqlite/backlog-index-thread.ts) indexing it while lcm_grep runs every SEARCH_EVERY_MS: seconds, the longest
 * event-loop block of this (the calling) thread, search times and whether each said it covered the whole history,
 * peak RSS, and bytes written (/proc/self/io write_bytes, worker threads included) per byte of message text.
 * `npx tsx bench/backlog-block.ts <dataset.db>` (a cached dataset of the current or previous schema; it is copied).
 */
import { copyFileSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { BacklogIndexThread } from "../src/sqlite/backlog-index-thread.js";
import { closeSharedDatabase, openSharedDatabase } from "../src/sqlite/connection-registry.js";
import { SqliteSearchIndex } from "../src/sqlite/sqlite-search-index.js";
import { RARE_TERM } from "./generate.js";
import { BenchHost } from "./host.js";
import { benchConfig } from "./dataset.js";
import { round, startLoopProbe } from "./loop-probe.js";

const SEARCH_EVERY_MS = 1_000;
const source = process.argv[2];
if (!source) throw new Error("usage: npx tsx bench/backlog-block.ts <dataset.db>");
const path = join(tmpdir(), `lcm-backlog-block-${process.pid}.db`);
copyFileSync(source, path);

const writtenBytes = () => Number(/write_bytes:\s*(\d+)/.exec(readFileSync("/proc/self/io", "utf8"))![1]);
const rssMb = () => process.memoryUsage.rss() / 2 ** 20;
const percentile = (values: number[], share: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(share * values.length))] ?? 0;

const db = openSharedDatabase(path); // migrates to the current schema
const index = new SqliteSearchIndex(db);
await index.rebuild("messages_fts"); // messages, summaries, stored content and the term dictionary start over
const text = db.get<{ bytes: number; n: number }>("SELECT sum(length(CAST(content AS BLOB))) AS bytes, count(*) AS n FROM messages")!;
const session = db.get<{ agent_id: string; session_key: string; session_id: string }>("SELECT agent_id, session_key, session_id FROM conversations ORDER BY message_count DESC LIMIT 1")!;
const host = new BenchHost(benchConfig(path));
const tool = host.tool("lcm_grep", { agentId: session.agent_id, sessionKey: session.session_key, sessionId: session.session_id })!;
const search = async () => {
  const started = performance.now();
  const result = await tool.execute("backlog", { pattern: RARE_TERM, mode: "full_text", allConversations: true });
  const details = result.details as { matches?: unknown[]; truncated?: boolean };
  return { ms: performance.now() - started, hits: details.matches?.length ?? 0, truncated: details.truncated === true };
};

console.log(`messages ${text.n}, text ${round(text.bytes / 2 ** 20)} MB, load ${loadavg().map(round).join(" ")}`);
const rssBefore = rssMb();
const first = await search();
console.log(`first lcm_grep with nothing indexed: ${round(first.ms)} ms, ${first.hits} hit(s), truncated ${first.truncated}, RSS ${round(rssBefore)} → ${round(rssMb())} MB`);

const writtenBefore = writtenBytes();
const probe = startLoopProbe();
const started = performance.now();
if (!(await index.indexBacklogInBackground(host.logger as never, 1))) throw new Error("the backlog worker did not start");
const thread = db.backlogIndexer as BacklogIndexThread;
const searches: Awaited<ReturnType<typeof search>>[] = [];
let peakRss = rssMb();
while (thread.isRunning) {
  searches.push(await search());
  peakRss = Math.max(peakRss, rssMb());
  await new Promise((resolve) => setTimeout(resolve, SEARCH_EVERY_MS));
}
await thread.exited;
const seconds = (performance.now() - started) / 1000;
const loop = probe.stop();
const written = writtenBytes() - writtenBefore;
const fileBytes = statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
const times = searches.map((entry) => entry.ms);
console.log(JSON.stringify({
  messages: text.n, textMb: round(text.bytes / 2 ** 20), seconds: round(seconds), run: thread.lastRun,
  longestBlockMs: round(loop.longest.wallMs), longestBlockCpuMs: round(loop.longestCpu.cpuMs), delayP99Ms: loop.delayP99Ms,
  searches: searches.length, searchP50Ms: round(percentile(times, 0.5)), searchP95Ms: round(percentile(times, 0.95)),
  searchesTruncated: searches.filter((entry) => entry.truncated).length, searchesMissingHits: searches.filter((entry) => entry.hits < first.hits).length,
  peakRssMb: round(peakRss), rssBeforeMb: round(rssBefore),
  writtenMb: round(written / 2 ** 20), writtenPerTextByte: round(written / text.bytes), filePerTextByte: round(fileBytes / text.bytes),
  load: loadavg().map(round),
}, null, 1));
closeSharedDatabase(path);
for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
