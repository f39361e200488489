/**
 * Generated benchmark databases, cached under bench/.data/ and keyed by seed, size, schema and generator
 * version, so a re-run skips generation. A dataset is built through the real plugin entry (register(api), a new
 * engine per batch, ingestBatch), then its "compacted" conversation is swept once through engine.compact with
 * the instant summarizer. Phases never touch the cache: they run on a working copy, so ingest and sweep phases
 * measure real writes and every run starts from the same bytes.
 */
import { createHash } from "node:crypto";
import { constants, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { dirname, join } from "node:path";
import { closeSharedDatabase, openSharedDatabase } from "../src/sqlite/connection-registry.js";
import type { Database } from "../src/sqlite/database.js";
import { MIGRATIONS } from "../src/sqlite/migrations.js";
import { SqliteSearchIndex } from "../src/sqlite/sqlite-search-index.js";
import type { AgentMessage } from "../src/host/openclaw-types.js";
import { type BenchDatabase, openBenchDatabase, targetConfig } from "./bench-database.js";
import { type ConversationRole, GENERATOR_VERSION, RARE_TERM, createGenerators } from "./generate.js";
import { BenchHost } from "./host.js";
import { round } from "./measure.js";
import { DATA_DIR, ROOT } from "./paths.js";
import { WalSampler, megabytes } from "./wal-sampler.js";

const BATCH_SIZE = 1_000;
/** Bound on compact calls when sweeping the compacted conversation (each call makes at most a few hundred passes). */
const MAX_COMPACT_CALLS = 40;

export interface ConversationInfo {
  role: ConversationRole;
  agentId: string;
  sessionId: string;
  sessionKey: string;
  messages: number;
  /** UTF-8 bytes of the text the host sent (text, thinking, tool-call arguments, string content). */
  textBytes: number;
}

export interface DatasetManifest {
  seed: number;
  size: number;
  generatorVersion: number;
  schemaKey: string;
  messages: number;
  textBytes: number;
  /** UTF-8 bytes of the messages as host JSON (what a transcript file would hold). */
  jsonBytes: number;
  conversations: ConversationInfo[];
  needles: { rareTerm: string; rareTermMessages: number; incidents: string[] };
  build: {
    seconds: number; messagesPerSecond: number; eventLoopMaxMs: number; indexSeconds: number; indexMessagesPerSecond: number;
    termsMessagesPerSecond: number;
    /** Largest write-ahead log, and largest database + log, seen while the dataset was built (ingest to sweep). */
    maxWalBytes: number;
    maxFileBytes: number;
    /** The same, per step of the build (ingest, index, merge, compaction, index-summaries), in MB. */
    bySteps?: Record<string, { maxWalMb: number; maxFileMb: number }>;
  };
  compaction:
    | { status: "compacted"; seconds: number; summaries: number; contextItems: number; reason?: string }
    | { status: "pending"; reason: string };
}

/**
 * Source files that decide the bytes of a stored dataset (schema, connection pragmas, message encoding, the
 * insert path), and the checkpointer, which decides the largest write-ahead log the build sees. A change to any
 * of them makes the cached datasets stale; other changes reuse them. `npm run bench -- --rebuild` regenerates
 * regardless.
 */
const STORAGE_SOURCES = [
  "src/sqlite/connection-registry.ts", "src/messages/message-codec.ts", "src/sqlite/sqlite-store.ts", "src/sqlite/sqlite-search-index.ts",
  "src/text/text-analysis.ts", "src/messages/searchable-text.ts", "src/sqlite/sqlite-file-index.ts", "src/text/content-chunks.ts",
  "src/sqlite/sqlite-term-dictionary.ts", "src/large-files/large-file-interceptor.ts",
  "src/sqlite/wal-checkpointer.ts", "src/sqlite/search-scope.ts",
];

export function schemaKey(): string {
  const hash = createHash("sha256").update(JSON.stringify(MIGRATIONS));
  for (const file of STORAGE_SOURCES) {
    const path = join(ROOT, file);
    hash.update(existsSync(path) ? readFileSync(path) : file);
  }
  return hash.digest("hex").slice(0, 10);
}

/**
 * A dataset's files: the database, its manifest, and the directory its plugin stores files aside in. Each dataset
 * has its own directory: the plugin's maintain removes the files of a conversation directory that its database has
 * no row for, and every size has a conversation 1, so a directory shared across sizes lost one size's files whenever
 * another was built or measured. Paths are recorded relative to the database's folder (stored-file-path.ts), so a
 * working copy beside the dataset reads the same files.
 */
export function datasetPaths(seed: number, size: number): { database: string; manifest: string; files: string } {
  const base = join(DATA_DIR, `lcm-seed${seed}-n${size}-schema${schemaKey()}-gen${GENERATOR_VERSION}`);
  return { database: `${base}.db`, manifest: `${base}.json`, files: `${base}-files` };
}

export function readManifest(seed: number, size: number): DatasetManifest | null {
  const paths = datasetPaths(seed, size);
  if (!existsSync(paths.database) || !existsSync(paths.manifest)) return null;
  return JSON.parse(readFileSync(paths.manifest, "utf8")) as DatasetManifest;
}

/** Text bytes of one host message: the payloads a user would call "the message text". */
export function textBytesOf(message: AgentMessage): number {
  const content = message.content;
  if (typeof content === "string") return Buffer.byteLength(content);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const block of content as Record<string, unknown>[]) {
    if (typeof block.text === "string") total += Buffer.byteLength(block.text);
    else if (typeof block.thinking === "string") total += Buffer.byteLength(block.thinking);
    else if (block.type === "toolCall") total += Buffer.byteLength(JSON.stringify(block.arguments));
  }
  return total;
}

/** The plugin settings of a bench SQLite file storing files in `filesDirectory` (bench-database.ts targetConfig). */
export function benchConfig(databasePath: string, filesDirectory: string): Record<string, unknown> {
  return targetConfig({ kind: "sqlite", databasePath, filesDirectory });
}

/** Builds the dataset into the cache (atomically: a partial file is renamed only when complete). */
export async function buildDataset(seed: number, size: number, log: (line: string) => void): Promise<DatasetManifest> {
  mkdirSync(DATA_DIR, { recursive: true });
  const paths = datasetPaths(seed, size);
  const partial = `${paths.database}.partial`;
  for (const suffix of ["", "-wal", "-shm"]) rmSync(partial + suffix, { force: true });
  rmSync(paths.files, { recursive: true, force: true }); // an interrupted build's files
  const host = new BenchHost(benchConfig(partial, paths.files));
  const generators = createGenerators(seed, size);
  const infos = new Map<string, ConversationInfo>();
  const buffers = new Map<string, AgentMessage[]>();
  let messages = 0;
  let textBytes = 0;
  let jsonBytes = 0;
  let ingestMillis = 0;
  let longestBatch = 0;
  const files = new WalSampler(partial).start();
  files.mark("ingest");

  const flush = async (sessionId: string, sessionKey: string) => {
    const batch = buffers.get(sessionId) ?? [];
    if (batch.length === 0) return;
    buffers.set(sessionId, []);
    const started = performance.now();
    const result = await host.engine().ingestBatch({ sessionId, sessionKey, messages: batch });
    const elapsed = performance.now() - started;
    ingestMillis += elapsed;
    longestBatch = Math.max(longestBatch, elapsed);
    files.sample();
    if (result.ingestedCount !== batch.length) {
      throw new Error(`ingestBatch stored ${result.ingestedCount} of ${batch.length} messages: ${host.errors.join("; ")}`);
    }
  };

  // Interleave conversations in proportion to their size, as a busy gateway does.
  const random = (() => {
    let state = seed >>> 0;
    return () => ((state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0) / 4294967296);
  })();
  const totalTarget = generators.reduce((sum, generator) => sum + generator.plan.messageTarget, 0);
  let lastLog = performance.now();
  while (generators.some((generator) => !generator.isDone)) {
    let roll = random() * totalTarget;
    let generator = generators.find((candidate) => (roll -= candidate.plan.messageTarget) < 0) ?? generators[0]!;
    if (generator.isDone) generator = generators.find((candidate) => !candidate.isDone)!;
    const { plan } = generator;
    const info = infos.get(plan.sessionId) ?? { role: plan.role, agentId: plan.agentId, sessionId: plan.sessionId, sessionKey: plan.sessionKey, messages: 0, textBytes: 0 };
    infos.set(plan.sessionId, info);
    const buffer = buffers.get(plan.sessionId) ?? [];
    buffers.set(plan.sessionId, buffer);
    for (const message of generator.nextTurn()) {
      const bytes = textBytesOf(message);
      info.messages++;
      info.textBytes += bytes;
      messages++;
      textBytes += bytes;
      jsonBytes += Buffer.byteLength(JSON.stringify(message));
      buffer.push(message);
    }
    if (buffer.length >= BATCH_SIZE) await flush(plan.sessionId, plan.sessionKey);
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`  built ${messages.toLocaleString("en")} / ${totalTarget.toLocaleString("en")} messages`);
    }
  }
  for (const info of infos.values()) await flush(info.sessionId, info.sessionKey);
  // The full-text index is written in batches after the messages (maintain does it between turns): bring it up
  // to date as a gateway's maintenance would have, and time it on its own.
  const index = new SqliteSearchIndex(openSharedDatabase(partial));
  files.mark("index");
  const indexStarted = performance.now();
  await index.indexPending({ maxFileBytes: Number.POSITIVE_INFINITY });
  const indexMillis = performance.now() - indexStarted;
  files.mark("merge");
  await mergeIndexFully(openSharedDatabase(partial));
  // Since schema 8 the term dictionary is written with the index, in the same pass.
  const termsMillis = indexMillis;

  const compacted = [...infos.values()].find((info) => info.role === "compacted")!;
  files.mark("compaction");
  const compaction = await compactOnce(host, compacted, openBenchDatabase({ kind: "sqlite", databasePath: partial, filesDirectory: paths.files }));
  files.mark("index-summaries");
  await index.indexPending(); // the summaries compaction wrote, as maintain indexes them
  const sizes = files.stop();
  const bySteps = Object.fromEntries(
    Object.entries(files.bySteps).map(([step, stepSizes]) => [step, { maxWalMb: megabytes(stepSizes.maxWalBytes), maxFileMb: megabytes(stepSizes.maxFileBytes) }]),
  );
  log(`  largest log and database + log per build step: ${JSON.stringify(bySteps)}`);
  closeSharedDatabase(partial);

  const incidents = generators.flatMap((generator) => generator.needleMessages.filter((needle) => needle.kind === "pattern").map((needle) => needle.text));
  const manifest: DatasetManifest = {
    seed,
    size,
    generatorVersion: GENERATOR_VERSION,
    schemaKey: schemaKey(),
    messages,
    textBytes,
    jsonBytes,
    conversations: [...infos.values()],
    needles: {
      rareTerm: RARE_TERM,
      rareTermMessages: generators.reduce((sum, generator) => sum + generator.needleMessages.filter((needle) => needle.kind === "term").length, 0),
      incidents,
    },
    build: {
      seconds: round(ingestMillis / 1000, 2),
      messagesPerSecond: Math.round(messages / (ingestMillis / 1000)),
      eventLoopMaxMs: round(longestBatch, 1),
      indexSeconds: round(indexMillis / 1000, 2),
      indexMessagesPerSecond: Math.round(messages / (indexMillis / 1000)),
      termsMessagesPerSecond: Math.round(messages / (termsMillis / 1000)),
      maxWalBytes: sizes.maxWalBytes,
      maxFileBytes: sizes.maxFileBytes,
      bySteps,
    },
    compaction,
  };
  foldLog(partial);
  renameSync(partial, paths.database);
  for (const suffix of ["-wal", "-shm"]) rmSync(partial + suffix, { force: true });
  writeFileSync(paths.manifest, JSON.stringify(manifest, null, 2));
  return manifest;
}

/**
 * Sweeps the "compacted" conversation until it is under the target (compact stops after a bounded number of
 * passes per call, as it must in a host turn); "pending" when engine.compact cannot compact yet.
 */
export async function compactOnce(host: BenchHost, conversation: ConversationInfo, db: BenchDatabase): Promise<DatasetManifest["compaction"]> {
  const started = performance.now();
  let compactedOnce = false;
  let reason = "";
  for (let call = 0; call < MAX_COMPACT_CALLS; call++) {
    const result = await host.engine().compact({
      sessionId: conversation.sessionId,
      sessionKey: conversation.sessionKey,
      force: true,
      compactionTarget: "threshold",
      tokenBudget: 128_000,
      runtimeContext: { llm: host.llm },
    });
    reason = result.reason ?? "engine.compact did not compact";
    if (!result.compacted) break;
    compactedOnce = true;
    if (!/maximum number of passes|deadline/.test(reason)) break;
  }
  if (!compactedOnce) return { status: "pending", reason };
  const counts = (await db.get<{ summaries: number; items: number }>(
    `SELECT (SELECT count(*) FROM summaries s JOIN conversations c USING (conversation_id) WHERE c.session_id = ?) AS summaries,
            (SELECT context_items FROM conversations WHERE session_id = ?) AS items`,
    conversation.sessionId, conversation.sessionId,
  ))!;
  return {
    status: "compacted",
    seconds: round((performance.now() - started) / 1000, 2),
    summaries: Number(counts.summaries),
    contextItems: Number(counts.items),
    reason,
  };
}

/**
 * Runs FTS5 merge steps until none is left. A gateway's background worker merges in its idle moments between
 * turns; the build writes without pause, so segments would be left unmerged in the cached file and every search
 * phase would read more segments than a running gateway has (snippets of the most common word: 10 ms instead of
 * 1.4 ms at 1M, measured). Each step is a write of its own, so the log is checkpointed between steps as it is
 * for any other write.
 */
async function mergeIndexFully(db: Database): Promise<void> {
  const changes = () => db.get<{ n: number }>("SELECT total_changes() AS n")!.n;
  for (;;) {
    const merged = await db.write(() => {
      const before = changes();
      db.run("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', 500)");
      return changes() - before >= 2;
    });
    if (!merged) return;
  }
}

/**
 * Folds the write-ahead log into the database file (waiting for a checkpoint worker that is still finishing),
 * so the file alone holds the dataset and can be renamed and copied.
 */
export function foldLog(path: string): void {
  const db = new DatabaseSync(path, { timeout: 30_000 });
  try {
    // A checkpoint the closed connection's worker thread is still finishing makes this one return busy at once
    // (SQLite does not wait for another checkpointer): try again for a few seconds.
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    for (let attempt = 0; attempt < 50; attempt++) {
      const result = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number };
      if (result.busy === 0) break;
      Atomics.wait(sleeper, 0, 0, 100);
    }
  } finally {
    db.close();
  }
  if (existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0) {
    throw new Error(`The write-ahead log of ${path} could not be folded into the file; run again with --rebuild.`);
  }
}

/** A fresh working copy of the cached dataset (copy-on-write where the filesystem can). */
export function workingCopy(seed: number, size: number): string {
  const source = datasetPaths(seed, size).database;
  if (existsSync(`${source}-wal`) && statSync(`${source}-wal`).size > 0) foldLog(source);
  // One copy per process: two benchmark runs at the same size (two engineers, two terminals) never share a file.
  const target = join(DATA_DIR, `work-n${size}-${process.pid}.db`);
  removeDatabase(target);
  copyFileSync(source, target, constants.COPYFILE_FICLONE);
  return target;
}

/** The files directory of a bench copy of a dataset at `path` (its own: BenchTarget), removed with it. */
export function copyFilesDirectory(path: string): string {
  return `${path}-files`;
}

/** Removes the database at `path`, its log, and the files directory of a copy (copyFilesDirectory). */
export function removeDatabase(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  rmSync(copyFilesDirectory(path), { recursive: true, force: true });
}
