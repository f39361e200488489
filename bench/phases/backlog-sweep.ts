/**
 * One conversation whose whole history is a raw backlog, as a bootstrap of a long transcript, an import or an
 * outage leaves it (issue 15): the size's message count is ingested into ONE conversation of a new database
 * through `ingestBatch` (batches of 1,000 back to back, each call on a fresh macrotask as a host's driver makes
 * them), with the write-ahead log sampled throughout; then `compact({ force: true })` sweeps it. The dataset's
 * own backlog conversation holds 13% of the history, where a planner that re-reads the whole context per pass
 * does not show; here it would (270 s at 1M before planning was made linear).
 */
import { PerformanceObserver } from "node:perf_hooks";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { type BenchDatabase, closeShared, openBenchDatabase, targetConfig } from "../bench-database.js";
import { type BenchContext, freshSession } from "../context.js";
import { BenchHost } from "../host.js";
import { BlockMeter, Phase, type PhaseResult, round } from "../measure.js";
import { WalSampler, megabytes } from "../wal-sampler.js";

const BATCH_SIZE = 1_000;
const MAX_COMPACT_CALLS = 20;
const TOKEN_BUDGET = 128_000;

export async function runBacklogSweepPhases(context: BenchContext): Promise<PhaseResult[]> {
  const scratch = await context.scratchDatabase("backlog");
  const host = new BenchHost(targetConfig(scratch.target));
  const db = openBenchDatabase(scratch.target);
  const session = { sessionId: "bench-whole-backlog", sessionKey: "agent:coder:whole-backlog" };
  try {
    const build = await ingestWholeHistory(context, host, db, session);
    const sweep = await sweepWholeHistory(host, db, session);
    return [build, sweep];
  } finally {
    await closeShared(scratch.target);
    await scratch.drop();
  }
}

type Session = { sessionId: string; sessionKey: string };

/** The SQLite file's log sampler, or null on PostgreSQL (no log file of the database's own). */
function walSampler(db: BenchDatabase): WalSampler | null {
  return db.target.kind === "sqlite" ? new WalSampler(db.target.databasePath).start() : null;
}

async function ingestWholeHistory(context: BenchContext, host: BenchHost, db: BenchDatabase, session: Session): Promise<PhaseResult> {
  const generator = freshSession(context.manifest.seed + 5, { role: "backlog", agentId: "coder", ...session }, "turns");
  const total = context.manifest.size;
  const phase = new Phase("ingest.backlog");
  const files = walSampler(db);
  let stored = 0;
  let pending: AgentMessage[] = [];
  while (stored < total) {
    while (pending.length < BATCH_SIZE) pending.push(...generator.nextTurn());
    const batch = pending.splice(0, Math.min(BATCH_SIZE, total - stored));
    const result = await phase.time(() => host.engine().ingestBatch({ ...session, messages: batch }));
    files?.sample();
    if (result.ingestedCount !== batch.length) throw new Error(`ingestBatch stored ${result.ingestedCount} of ${batch.length}: ${host.errors.join("; ")}`);
    stored += batch.length;
  }
  const sizes = files?.stop();
  const seconds = phase.samples.reduce((sum, value) => sum + value, 0) / 1000;
  const pauses = db.sqlite?.checkpointer?.boundStats;
  const result = phase.finish({
    rate: { value: Math.round(stored / seconds), unit: "messages/s" },
    values: {
      messages: stored,
      batchSize: BATCH_SIZE,
      messagesPerCpuSecond: Math.round(stored / (phase.cpuMs / 1000)),
      ...(sizes ? { maxWalMb: megabytes(sizes.maxWalBytes), maxFileMb: megabytes(sizes.maxFileBytes) } : {}),
      ...(pauses ? { logBoundReached: pauses.boundReached, pausedWrites: pauses.pausedWrites, longestWritePauseMs: round(pauses.longestPauseMs, 1) } : {}),
    },
  });
  delete result.latency; // the figure is the rate and the log; per-batch latency is ingest.batch's
  return result;
}

async function sweepWholeHistory(host: BenchHost, db: BenchDatabase, session: Session): Promise<PhaseResult> {
  const counters = async () => (await db.get<{ raw: number; items: number; tokens: number }>(
    "SELECT context_raw_tokens AS raw, context_items AS items, context_tokens AS tokens FROM conversations WHERE session_id = ?",
    session.sessionId,
  ))!;
  const summaries = async () => Number((await db.get<{ n: number }>("SELECT count(*) AS n FROM summaries"))!.n);
  const before = await counters();
  // Counted before the phase starts: compaction never deletes messages, and a count over 1M rows (15-135 ms)
  // would be charged to the sweep's longest event-loop block.
  const messages = Number((await db.get<{ n: number }>("SELECT count(*) AS n FROM messages"))!.n);
  const llm = host.llm;
  const llmBefore = llm.millis;
  const files = walSampler(db);
  const phase = new Phase("compaction.sweep.whole-history");
  // The longest block with the main thread's CPU time inside it: near its length, work on the event loop; far
  // below, the thread waiting for a CPU on a busy machine (issue 15: blocks of 150-260 ms with 3 ms of CPU in them).
  const meter = new BlockMeter().start();
  let longestGcMs = 0;
  const gcPauses = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) longestGcMs = Math.max(longestGcMs, entry.duration);
  });
  gcPauses.observe({ entryTypes: ["gc"] });
  let calls = 0;
  let lastReason = "";
  for (; calls < MAX_COMPACT_CALLS; calls++) {
    const result = await phase.time(() =>
      host.engine().compact({ ...session, force: true, compactionTarget: "threshold", tokenBudget: TOKEN_BUDGET, runtimeContext: { llm } }),
    );
    files?.sample();
    lastReason = result.reason ?? "";
    if (!result.compacted) break;
  }
  meter.tick();
  meter.stop();
  gcPauses.disconnect();
  const sizes = files?.stop();
  const after = await counters();
  const passes = await summaries();
  const wallMs = phase.samples.reduce((sum, value) => sum + value, 0);
  const engineMs = wallMs - (llm.millis - llmBefore);
  const result = phase.finish({
    values: {
      messages,
      backlogTokens: before.raw,
      contextItemsBefore: before.items,
      contextItemsAfter: after.items,
      contextTokensAfter: after.tokens,
      passes,
      compactCalls: calls,
      wallSeconds: round(wallMs / 1000, 2),
      engineSeconds: round(engineMs / 1000, 2),
      engineMsPerPass: round(engineMs / Math.max(1, passes), 2),
      cpuMsPerPass: round(phase.cpuMs / Math.max(1, passes), 2),
      longestBlockMs: round(meter.longest.wallMs, 1),
      longestBlockCpuMs: round(meter.longest.cpuMs, 1),
      longestGcPauseMs: round(longestGcMs, 1),
      ...(sizes ? { maxWalMb: megabytes(sizes.maxWalBytes) } : {}),
      lastReason,
    },
  });
  delete result.latency; // one sweep: its figure is engineSeconds
  return result;
}
