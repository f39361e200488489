/**
 * A whole history indexed as a backlog (issue 30): a copy of the dataset with every full-text index and the term
 * dictionary emptied (as a bulk import with `--no-index` leaves it), indexed by the backlog worker
 * (src/sqlite/backlog-index-thread.ts) while lcm_grep (a rare word, the most common word by recency and by relevance,
 * a rare regex, in turn; all conversations) runs every SEARCH_EVERY_MS on this thread. Figures: the run's seconds, the longest event-loop block of this (the calling) thread, the searches'
 * p95 and how many of them said they had not covered the whole history, the process's bytes written (the kernel's
 * /proc/self/io write_bytes, worker threads included) and the file, each per byte of message text.
 */
import { constants, copyFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { AgentTool } from "../../src/host/openclaw-types.js";
import { openPostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import type { PgSearchIndex } from "../../src/postgres/pg-search-index.js";
import type { BacklogIndexThread } from "../../src/sqlite/backlog-index-thread.js";
import { closeSharedDatabase, openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import type { BenchContext } from "../context.js";
import { benchConfig, copyFilesDirectory, datasetPaths, foldLog, removeDatabase } from "../dataset.js";
import { COMMON_TERM, RARE_PATTERN, RARE_TERM } from "../generate.js";
import { BenchHost } from "../host.js";
import { startLoopProbe } from "../loop-probe.js";
import { latencyOf, Phase, type PhaseResult, pending, round } from "../measure.js";
import { DATA_DIR } from "../paths.js";
import { WalSampler } from "../wal-sampler.js";

const SEARCH_EVERY_MS = 1_000;

export async function runBacklogIndexPhase(context: BenchContext): Promise<PhaseResult[]> {
  // PostgreSQL's is measured as the run's database is loaded (run-size.ts): its copy is exactly such a backlog.
  if (context.target.kind === "postgres") return [context.backlogIndexing ?? pending("backlog.index", "measured while the run's database is loaded")];
  const path = join(DATA_DIR, `backlog-index-n${context.manifest.size}.db`);
  removeDatabase(path);
  copyFileSync(datasetPaths(context.manifest.seed, context.manifest.size).database, path, constants.COPYFILE_FICLONE);
  try {
    return [await measureBacklogIndexing(path, copyFilesDirectory(path))];
  } finally {
    closeSharedDatabase(path);
    removeDatabase(path);
  }
}

/**
 * Empties the indexes of the database at `path` and measures the worker indexing it all again; what it stores aside
 * goes to `filesDirectory` (its stored files are read where their recorded paths say).
 */
export async function measureBacklogIndexing(path: string, filesDirectory: string, log: (line: string) => void = () => {}): Promise<PhaseResult> {
  const db = openSharedDatabase(path);
  const index = new SqliteSearchIndex(db);
  await index.rebuild("messages_fts"); // messages, summaries, stored content and the term dictionary start over
  // The emptying is one transaction (its log: 6.9 MB at 10M), folded into the file here, before the clock starts, so
  // that its checkpoint never counts in the measured run's bytes written, log or file.
  foldLog(path);
  const text = db.get<{ bytes: number; n: number }>("SELECT sum(length(CAST(content AS BLOB))) AS bytes, count(*) AS n FROM messages")!;
  const session = db.get<{ agent_id: string; session_key: string; session_id: string }>(
    "SELECT agent_id, session_key, session_id FROM conversations ORDER BY message_count DESC LIMIT 1",
  )!;
  const host = new BenchHost(benchConfig(path, filesDirectory));
  const tool = host.tool("lcm_grep", { agentId: session.agent_id, sessionKey: session.session_key, sessionId: session.session_id })!;
  const phase = new Phase("backlog.index");
  const writtenBefore = writtenBytes();
  const probe = startLoopProbe();
  // The largest log during the run (the worker's commits, the main connection's checkpoints).
  const files = new WalSampler(path).start(50);
  const started = performance.now();
  if (!(await index.indexBacklogInBackground(host.logger as never, 1))) {
    files.stop();
    return phase.abandon("pending", "the backlog worker did not start");
  }
  const thread = db.backlogIndexer as BacklogIndexThread;
  const { byCase, truncated, hits } = await searchWhile(phase, tool, () => thread.isRunning, (name, ms, truncatedNow, cpuMs) =>
    log(`backlog.index: ${index.pending("messages_fts")} waiting, ${name} ${round(ms)} ms (${round(cpuMs)} ms of this thread's CPU), truncated ${truncatedNow}`));
  await thread.exited;
  const seconds = (performance.now() - started) / 1000;
  const loop = probe.stop();
  const sizes = files.stop();
  const written = writtenBytes() - writtenBefore;
  const fileBytes = statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
  return phase.finish({
    values: {
      messages: text.n, textBytes: text.bytes, seconds: round(seconds), messagesPerSecond: Math.round(text.n / seconds),
      ending: thread.lastRun?.ending ?? "unknown", longestBlockMs: round(loop.longest.wallMs), longestBlockCpuMs: round(loop.longestCpu.cpuMs),
      searches: phase.samples.length, searchesTruncated: truncated, hits,
      ...Object.fromEntries([...byCase].map(([name, samples]) => [`${name}P95Ms`, latencyOf(samples).p95])),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      writtenBytes: written, writtenPerTextByte: round(written / text.bytes, 2), filePerTextByte: round(fileBytes / text.bytes, 3),
      maxWalMb: round(sizes.maxWalBytes / 2 ** 20, 1),
    },
  });
}

/**
 * PostgreSQL: the database at `url` right after its tables were copied (every message waiting for the index) indexed
 * by the background indexer (PgSearchIndex.indexBacklogInBackground: chunks on this thread's event loop) while
 * lcm_grep runs every SEARCH_EVERY_MS, as on SQLite. No bytes-written or log figures: the server writes them.
 */
export async function measurePostgresBacklogIndexing(host: BenchHost, url: string, log: (line: string) => void = () => {}): Promise<PhaseResult> {
  const backend = openPostgresBackend(url, "shared");
  const index = backend.searchIndex as PgSearchIndex;
  const text = (await backend.database.row<{ bytes: number; n: number }>("SELECT sum(octet_length(content))::bigint AS bytes, count(*)::bigint AS n FROM messages"))!;
  const session = (await backend.database.row<{ agent_id: string; session_key: string; session_id: string }>(
    "SELECT agent_id, session_key, session_id FROM conversations ORDER BY message_count DESC LIMIT 1",
  ))!;
  const tool = host.tool("lcm_grep", { agentId: session.agent_id, sessionKey: session.session_key, sessionId: session.session_id })!;
  const phase = new Phase("backlog.index");
  const probe = startLoopProbe();
  const started = performance.now();
  if (!(await index.indexBacklogInBackground(host.logger as never, 1))) return phase.abandon("pending", "the background indexing did not start");
  let running = true;
  const run = index.backgroundRun()!.finally(() => { running = false; });
  const { byCase, truncated, hits } = await searchWhile(phase, tool, () => running, async (name, ms, truncatedNow) =>
    log(`backlog.index: ${await index.pendingMessages()} waiting, ${name} ${round(ms)} ms, truncated ${truncatedNow}`));
  await run;
  const seconds = (performance.now() - started) / 1000;
  const loop = probe.stop();
  return phase.finish({
    values: {
      messages: text.n, textBytes: text.bytes, seconds: round(seconds), messagesPerSecond: Math.round(text.n / seconds),
      ending: (await index.pendingMessages()) === 0 ? "caught-up" : "stopped", longestBlockMs: round(loop.longest.wallMs),
      longestBlockCpuMs: round(loop.longestCpu.cpuMs), searches: phase.samples.length, searchesTruncated: truncated, hits,
      ...Object.fromEntries([...byCase].map(([name, samples]) => [`${name}P95Ms`, latencyOf(samples).p95])),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    },
  });
}

/**
 * The search phase's kinds of query in turn (bench/phases/search.ts: a rare word, the most common word by recency and
 * by relevance, a rare regex; all conversations), one every SEARCH_EVERY_MS while `going()`; each timed in `phase`.
 */
async function searchWhile(
  phase: Phase, tool: AgentTool, going: () => boolean, report: (name: string, ms: number, truncated: boolean, cpuMs: number) => unknown,
): Promise<{ byCase: Map<string, number[]>; truncated: number; hits: number }> {
  const cases: [string, Record<string, unknown>][] = [
    ["rare", { pattern: RARE_TERM, mode: "full_text" }],
    ["common", { pattern: COMMON_TERM, mode: "full_text", sort: "recency" }],
    ["commonRelevance", { pattern: COMMON_TERM, mode: "full_text", sort: "relevance" }],
    ["regex", { pattern: RARE_PATTERN, mode: "regex" }],
  ];
  const byCase = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  let truncated = 0;
  let hits = 0;
  for (let turn = 0; going(); turn++) {
    const [name, params] = cases[turn % cases.length]!;
    const cpuBefore = threadCpuMs();
    const result = await phase.time(() => tool.execute("backlog", { ...params, allConversations: true }));
    const cpuMs = threadCpuMs() - cpuBefore;
    byCase.get(name)!.push(phase.samples.at(-1)!);
    const details = result.details as { matches?: unknown[]; truncated?: boolean };
    if (details.truncated === true) truncated++;
    if (name === "rare") hits = details.matches?.length ?? 0;
    await report(name, phase.samples.at(-1)!, details.truncated === true, cpuMs);
    await new Promise((resolve) => setTimeout(resolve, SEARCH_EVERY_MS));
  }
  return { byCase, truncated, hits };
}

/** CPU time of this thread (a search's own, whatever the load; the worker's is not in it), where Node can tell. */
function threadCpuMs(): number {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.();
  return usage ? (usage.user + usage.system) / 1000 : Number.NaN;
}

/** Bytes this process (every thread) has caused to be written to storage, from the kernel's counters. */
function writtenBytes(): number {
  return Number(/write_bytes:\s*(\d+)/.exec(readFileSync("/proc/self/io", "utf8"))?.[1] ?? 0);
}
