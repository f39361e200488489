/**
 * Child process of `npm run bench`: every phase for one history size, on a fresh working copy of the cached
 * dataset, in one process of its own (so peak RSS and caches belong to this size alone). Phases that write run
 * last: ingest appends turns, compaction rewrites context, recall quality adds its sessions. Writes a SizeResult as JSON to <out>.
 * With LCM_BENCH_POSTGRES_URL set (a server's maintenance database, `npm run bench -- --backend postgres`), the
 * working database is a new PostgreSQL database on that server loaded from the same cached dataset (postgres-target.ts).
 * Usage: run-size.ts <seed> <size> <repetitions> <out> [phase-group,...]
 */
import { rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { openSharedDatabase } from "../src/sqlite/connection-registry.js";
import { type SizeResult, sizeLabel } from "./bars.js";
import { type BenchTarget, closeShared, openBenchDatabase, targetConfig } from "./bench-database.js";
import { type BenchContext, conversationOf, type ScratchDatabase } from "./context.js";
import { datasetPaths, readManifest, removeDatabase, workingCopy } from "./dataset.js";
import { BenchHost } from "./host.js";
import { type PhaseResult, round } from "./measure.js";
import { DATA_DIR } from "./paths.js";
import { copyDataset, createDatabase, dropDatabase, indexAndAnalyze, type LoadFigures } from "./postgres-target.js";
import { runAssemblePhases } from "./phases/assemble.js";
import { measurePostgresBacklogIndexing, runBacklogIndexPhase } from "./phases/backlog-index.js";
import { runBacklogSweepPhases } from "./phases/backlog-sweep.js";
import { runCompactionPhases } from "./phases/compaction.js";
import { runIngestPhases } from "./phases/ingest.js";
import { runMcpPhases } from "./phases/mcp.js";
import { runOpenPhases } from "./phases/open.js";
import { runQuestionAnsweringPhase } from "./phases/question-answering.js";
import { runRecallPhases } from "./phases/recall.js";
import { runRecallQualityPhase } from "./phases/recall-quality.js";
import { measureFirstSearches, runSearchPhases } from "./phases/search.js";
import { runStoragePhase } from "./phases/storage.js";

const [seedText, sizeText, repetitionsText, out, groupsText] = process.argv.slice(2);
const seed = Number(seedText);
const size = Number(sizeText);
const repetitions = Number(repetitionsText);
if (!out || !Number.isInteger(seed) || !Number.isInteger(size) || !Number.isInteger(repetitions)) {
  throw new Error("usage: run-size.ts <seed> <size> <repetitions> <out> [groups]");
}
const manifest = readManifest(seed, size);
if (!manifest) throw new Error(`No cached dataset for seed ${seed}, size ${size}: run build-dataset.ts first.`);

const GROUPS: Record<string, (context: BenchContext) => Promise<PhaseResult[]> | PhaseResult[]> = {
  storage: async (context) => [await runStoragePhase(context)],
  open: runOpenPhases,
  assemble: runAssemblePhases,
  search: runSearchPhases,
  recall: runRecallPhases,
  // Before the phases that write: the MCP server reads the dataset as the search phases do.
  mcp: runMcpPhases,
  ingest: runIngestPhases,
  compaction: async (context) => [...(await runCompactionPhases(context)), ...(await runBacklogSweepPhases(context))],
  // A copy of its own: the whole history's indexes emptied and indexed again by the backlog worker (issue 30).
  backlog: runBacklogIndexPhase,
  // Last: recall quality adds its sessions to the size's database, so its searches run against that history. The
  // question answering builds a database of its own, whatever the size: measured once, at 10k (or when asked).
  quality: async (context) => [
    ...(await runRecallQualityPhase(context)),
    ...(size <= 10_000 || groupsText?.split(",").includes("quality") ? await runQuestionAnsweringPhase(context) : []),
  ],
};
const groups = groupsText ? groupsText.split(",") : Object.keys(GROUPS);
for (const group of groups) if (!GROUPS[group]) throw new Error(`Unknown phase group "${group}". Known: ${Object.keys(GROUPS).join(", ")}.`);

const log = (line: string) => process.stderr.write(`${line}\n`);
const serverUrl = process.env.LCM_BENCH_POSTGRES_URL;
const loadBefore = loadavg()[0]!;
const scratchName = (label: string) => `lcm_bench_${label}_n${size}_${process.pid}`;
// What this run stores aside goes to a directory of its own, removed with its working database: the dataset's files
// (recorded relative to its folder, or absolute in a PostgreSQL copy) are read where the build wrote them, and no
// run's maintain sweeps them or leaves its own files among them.
const runFiles = ownFilesDirectory(`work-n${size}-${process.pid}-files`);
let target: BenchTarget;
let load: LoadFigures | null = null;
let firstSearches: PhaseResult[] | undefined;
let backlogIndexing: PhaseResult | undefined;
if (serverUrl) {
  target = { kind: "postgres", url: await createDatabase(serverUrl, scratchName("history")), filesDirectory: runFiles.path };
  const copied = await copyDataset(datasetPaths(seed, size).database, target.url, log);
  log(`  ${sizeLabel(size)}: copied ${copied.copiedRows.toLocaleString("en")} rows into PostgreSQL in ${copied.copySeconds} s`);
  // The first searches after a bulk ingest meet exactly this: every message copied, none indexed yet.
  if (groups.includes("search")) {
    firstSearches = await measureFirstSearches(new BenchHost(targetConfig(target)), conversationOf({ manifest } as BenchContext, "main"), manifest.messages);
  }
  // A backlog of the whole history: the background indexer indexes it while searches run (backlog.index); the load's
  // own indexing then finds nothing left but what the indexer leaves (stored content), and analyzes.
  if (groups.includes("backlog")) backlogIndexing = await measurePostgresBacklogIndexing(new BenchHost(targetConfig(target)), target.url, log);
  const indexed = await indexAndAnalyze(target.url);
  log(`  ${sizeLabel(size)}: indexed ${indexed.indexedMessages.toLocaleString("en")} messages in ${indexed.indexSeconds} s, VACUUM ANALYZE ${indexed.vacuumSeconds} s`);
  // The load's indexing figure is the background indexer's when it did the work (searches ran meanwhile).
  const background = backlogIndexing?.values;
  load = { ...copied, ...indexed, ...(typeof background?.seconds === "number" ? { indexSeconds: background.seconds, indexedMessages: Number(background.messages) } : {}) };
} else {
  target = { kind: "sqlite", databasePath: workingCopy(seed, size), filesDirectory: runFiles.path };
}
const host = new BenchHost(targetConfig(target));
const scratchDatabase = async (label: string): Promise<ScratchDatabase> => {
  // Its own files directory: a scratch database's conversations are not the dataset's (BenchTarget).
  const files = ownFilesDirectory(`${label}-n${size}-${process.pid}-files`);
  if (serverUrl) {
    const name = scratchName(label);
    return {
      target: { kind: "postgres", url: await createDatabase(serverUrl, name), filesDirectory: files.path },
      drop: async () => { await dropDatabase(serverUrl, name); files.remove(); },
    };
  }
  const databasePath = join(DATA_DIR, `${label}-n${size}-${process.pid}.db`);
  removeDatabase(databasePath);
  return { target: { kind: "sqlite", databasePath, filesDirectory: files.path }, drop: async () => { removeDatabase(databasePath); files.remove(); } };
};
const context: BenchContext = { host, target, db: openBenchDatabase(target), manifest, repetitions, log, scratchDatabase, firstSearches, backlogIndexing };
const phases: PhaseResult[] = [];
for (const group of groups) {
  const started = performance.now();
  const results = await runGroup(group);
  phases.push(...results);
  log(`  ${sizeLabel(size)} ${group}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (const phase of results) log(`    ${describePhase(phase)}`);
}
if (host.errors.length > 0) log(`  engine errors logged: ${host.errors.slice(0, 5).join(" | ")}`);

const sqliteVersion = target.kind === "sqlite"
  ? openSharedDatabase(target.databasePath).get<{ version: string }>("SELECT sqlite_version() AS version")!.version
  : (await context.db.get<{ version: string }>("SELECT current_setting('server_version') AS version"))!.version;
await closeShared(target);
// LCM_BENCH_KEEP=1 keeps the working copy or database (its path or URL is logged) to look into a result afterwards.
if (process.env.LCM_BENCH_KEEP === "1") log(`kept the working database: ${target.kind === "sqlite" ? target.databasePath : target.url} (files: ${runFiles.path})`);
else {
  if (target.kind === "sqlite") removeDatabase(target.databasePath);
  else await dropDatabase(serverUrl!, scratchName("history"));
  runFiles.remove();
}
const result: SizeResult = {
  size,
  label: sizeLabel(size),
  measuredAt: new Date().toISOString(),
  loadAverage: { before: round(loadBefore, 2), after: round(loadavg()[0]!, 2) },
  nodeVersion: process.version,
  sqliteVersion,
  ...(target.kind === "postgres" ? { backend: "postgres" as const, postgresVersion: sqliteVersion, postgresLoad: load! } : {}),
  messages: manifest.messages,
  textBytes: manifest.textBytes,
  build: {
    seconds: manifest.build.seconds, messagesPerSecond: manifest.build.messagesPerSecond, cached: true,
    indexMessagesPerSecond: manifest.build.indexMessagesPerSecond,
    termsMessagesPerSecond: manifest.build.termsMessagesPerSecond,
    maxWalBytes: manifest.build.maxWalBytes,
    maxFileBytes: manifest.build.maxFileBytes,
  },
  maxRssMb: round(process.resourceUsage().maxRSS / 1024, 1),
  phases,
};
writeFileSync(out, JSON.stringify(result));

function describePhase(phase: PhaseResult): string {
  if (phase.status !== "measured") return `${phase.name}: ${phase.status} (${phase.reason})`;
  const parts = [phase.name];
  if (phase.latency) parts.push(`p50 ${phase.latency.p50} / p95 ${phase.latency.p95} / max ${phase.latency.max} ms`);
  if (phase.rate) parts.push(`${phase.rate.value.toLocaleString("en")} ${phase.rate.unit}`);
  if (phase.eventLoopMaxMs !== undefined) parts.push(`loop max ${phase.eventLoopMaxMs} ms`);
  const keys = ["bytesPerTextByte", "p50Ratio", "p95Ratio", "engineSeconds", "engineSecondsPer10MTokens", "assembledMessages", "hits", "passes", "maxWalMb", "buildMaxWalMb", "longestGcPauseMs"];
  for (const key of keys) if (phase.values?.[key] !== undefined) parts.push(`${key} ${phase.values[key]}`);
  // Per-hook longest blocks (turn.hooks), so the hook that blocks is named in the log.
  const blocks = Object.entries(phase.values ?? {}).filter(([key]) => key.endsWith(".eventLoopMaxMs"));
  const cpuOf = (key: string) => phase.values?.[key.replace(/Ms$/, "CpuMs")];
  if (blocks.length > 0) parts.push(`longest block per hook (its CPU): ${blocks.map(([key, value]) => `${key.replace(/\.eventLoopMaxMs$/, "")} ${value} (${cpuOf(key)})`).join(", ")} ms`);
  return parts.join(" · ");
}

/**
 * One phase group; a group that throws is recorded as failed (its error in the table) and the size goes on with the
 * next group, so one store missing on a backend does not hide the figures of the others.
 */
async function runGroup(group: string): Promise<PhaseResult[]> {
  try {
    return await GROUPS[group]!(context);
  } catch (error) {
    const reason = `the ${group} phases failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300);
    log(`  ${sizeLabel(size)} ${group} FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    return [{ name: group, status: "pending", reason }];
  }
}

/** A files directory of this process's own under the bench's data directory, emptied now; `remove` deletes it. */
function ownFilesDirectory(name: string): { path: string; remove: () => void } {
  const path = join(DATA_DIR, name);
  const remove = () => rmSync(path, { recursive: true, force: true });
  remove();
  return { path, remove };
}
