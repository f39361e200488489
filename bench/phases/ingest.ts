/**
 * Ingest phases, on top of the full history: commitTurn one turn at a time (the durable host path, a new engine
 * per turn), ingestBatch in batches of 1,000 (non-durable hosts, imports), single messages back to back with the
 * write-ahead log sampled throughout, and a whole host turn (bootstrap, assemble twice, commitTurn, maintain)
 * whose longest event-loop block is the "during a turn's hooks" figure.
 */
import { PerformanceObserver, performance } from "node:perf_hooks";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { type BenchContext, conversationOf, freshTurns } from "../context.js";
import { BlockMeter, Phase, type PhaseResult, latencyOf, round, yieldToEventLoop } from "../measure.js";
import { WalSampler, megabytes } from "../wal-sampler.js";

const BATCH_SIZE = 1_000;
/** Single-message ingests of the sustained-write phase (the independent benchmark's probe: 20k, a macrotask apart). */
const SUSTAINED_MESSAGES = 20_000;
/** The budget the compacted conversation was swept for (the plugin's default), so turns find it in steady state. */
const TURN_BUDGET = 128_000;

export async function runIngestPhases(context: BenchContext): Promise<PhaseResult[]> {
  return [await ingestTurns(context), await ingestBatches(context), await ingestSustained(context), await hostTurns(context)];
}

async function ingestTurns(context: BenchContext): Promise<PhaseResult> {
  const main = conversationOf(context, "main");
  const turns = freshTurns(context.manifest.seed, main, Math.min(2_000, Math.max(200, context.manifest.size / 50)), "turns");
  const phase = new Phase("ingest.turn");
  let messages = 0;
  let duplicates = 0;
  for (const [index, turn] of turns.entries()) {
    const result = await phase.time(() =>
      context.host.engine().commitTurn({
        sessionId: main.sessionId,
        sessionKey: main.sessionKey,
        advancementKey: `bench-turn-${index}`,
        messages: turn,
      }),
    );
    if (result.status === "duplicate") duplicates++;
    messages += turn.length;
  }
  const { rate, values } = await ingestRates(context, phase, messages);
  return phase.finish({ rate, values: { turns: turns.length, messages, duplicates, errors: context.host.errors.length, ...values } });
}

async function ingestBatches(context: BenchContext): Promise<PhaseResult> {
  const target = { ...conversationOf(context, "other"), sessionId: "bench-ingest-batch", sessionKey: "agent:ops:ingest-batch" };
  const total = Math.min(50_000, Math.max(5_000, context.manifest.size / 20));
  const messages: AgentMessage[] = [];
  for (const turn of freshTurns(context.manifest.seed + 1, target, Math.ceil(total / 4), "batch")) {
    messages.push(...turn);
    if (messages.length >= total) break;
  }
  const phase = new Phase("ingest.batch");
  let stored = 0;
  for (let start = 0; start < messages.length; start += BATCH_SIZE) {
    const batch = messages.slice(start, start + BATCH_SIZE);
    const result = await phase.time(() =>
      context.host.engine().ingestBatch({ sessionId: target.sessionId, sessionKey: target.sessionKey, messages: batch }),
    );
    stored += result.ingestedCount;
  }
  const { rate, values } = await ingestRates(context, phase, stored);
  return phase.finish({ rate, values: { messages: messages.length, stored, batchSize: BATCH_SIZE, ...values } });
}

/**
 * Sustained writes: one message per `ingest` call, each on a fresh macrotask, back to back, into a conversation of
 * the full history. The write-ahead log is sampled after every call: SQLite never rewinds a log whose checkpoint
 * never catches up with the writer, and its file keeps its largest size; this phase is where that would show
 * (101 MB and growing after 20k such calls, measured by an independent benchmark).
 */
async function ingestSustained(context: BenchContext): Promise<PhaseResult> {
  const target = { ...conversationOf(context, "other"), sessionId: "bench-ingest-sustained", sessionKey: "agent:ops:ingest-sustained" };
  const messages: AgentMessage[] = [];
  for (const turn of freshTurns(context.manifest.seed + 4, target, Math.ceil(SUSTAINED_MESSAGES / 3), "sustained")) {
    messages.push(...turn);
    if (messages.length >= SUSTAINED_MESSAGES) break;
  }
  messages.length = Math.min(messages.length, SUSTAINED_MESSAGES);
  // SQLite: its write-ahead log on disk, sampled. PostgreSQL: the WAL the server wrote meanwhile (server-wide, and the
  // bench is its only writer), recycled by its checkpoints, so there is no file that grows to compare.
  const sqlite = context.db.sqlite;
  const boundBefore = sqlite?.checkpointer?.boundStats;
  const files = context.target.kind === "sqlite" ? new WalSampler(context.target.databasePath).start() : null;
  const walBefore = await walPosition(context);
  const phase = new Phase("ingest.sustained");
  let stored = 0;
  for (const message of messages) {
    const result = await phase.time(() => context.host.engine().ingest({ sessionId: target.sessionId, sessionKey: target.sessionKey, message }));
    files?.sample();
    if (result.ingested) stored++;
  }
  const sizes = files?.stop();
  const walWrittenMb = walBefore === null ? null : await walWrittenSince(context, walBefore);
  const bound = sqlite?.checkpointer?.boundStats;
  const { rate, values } = await ingestRates(context, phase, stored);
  return phase.finish({
    rate,
    values: {
      messages: messages.length,
      stored,
      ...(sizes ? { maxWalMb: megabytes(sizes.maxWalBytes) } : {}),
      ...(walWrittenMb === null ? {} : { walWrittenMb }),
      ...(bound && boundBefore ? {
        logBoundReached: bound.boundReached - boundBefore.boundReached,
        pausedWrites: bound.pausedWrites - boundBefore.pausedWrites,
        pausedMs: round(bound.totalPauseMs - boundBefore.totalPauseMs, 1),
      } : {}),
      ...values,
    },
  });
}

/**
 * Rates of an ingest phase: messages per second inside the hooks and per CPU-second, then with the full-text
 * indexing and term dictionary the ingest left for later (maintain or the next search does it in batches), timed here on its own,
 * so the figures show both what a hook costs and what the whole write costs.
 */
async function ingestRates(context: BenchContext, phase: Phase, messages: number) {
  const seconds = phase.samples.reduce((sum, value) => sum + value, 0) / 1000;
  // Read before the indexing below, so the per-CPU-second rate is the hooks' own.
  const cpuSeconds = phase.cpuMs / 1000;
  const started = performance.now();
  await context.db.indexPending();
  const indexSeconds = round((performance.now() - started) / 1000, 3);
  return {
    rate: { value: Math.round(messages / seconds), unit: "messages/s" },
    values: {
      messagesPerCpuSecond: Math.round(messages / cpuSeconds),
      indexSeconds,
      messagesPerSecondIndexed: Math.round(messages / (seconds + indexSeconds)),
    },
  };
}

/**
 * Whole host turns, hook by hook as OpenClaw 2026.9.6 calls them, on the compacted conversation: steady state,
 * where maintain makes an incremental pass whenever the raw backlog passes leafChunkTokens. (On the raw main
 * conversation the first maintain would sweep the whole history: a one-time event, measured by compaction.sweep.)
 */
async function hostTurns(context: BenchContext): Promise<PhaseResult> {
  const main = conversationOf(context, "compacted");
  const turns = freshTurns(context.manifest.seed + 2, main, Math.min(200, context.repetitions), "hooks");
  const hooks: Record<string, number[]> = { bootstrap: [], maintainBootstrap: [], assemble: [], assembleToolLoop: [], commitTurn: [], maintainTurn: [] };
  const llm = context.host.llm;
  const llmBefore = llm.millis;
  const callsBefore = llm.calls;
  const blocks: Record<string, { wallMs: number; cpuMs: number }> = {};
  const phase = new Phase("turn.hooks");
  const session = { sessionId: main.sessionId, sessionKey: main.sessionKey };
  // Each hook's longest block, with the CPU time inside it (work on the thread, or waiting / not scheduled); what
  // blocks between hooks (engine construction, dispose, timers) is counted apart.
  const meter = new BlockMeter().start();
  let longestGcMs = 0;
  const gcPauses = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) longestGcMs = Math.max(longestGcMs, entry.duration);
  });
  gcPauses.observe({ entryTypes: ["gc"] });
  const keep = (name: string) => {
    if (meter.longest.wallMs > (blocks[name]?.wallMs ?? 0)) blocks[name] = meter.longest;
    meter.reset();
  };
  // The host awaits I/O between hooks (the model call, the transcript), so each hook starts on a fresh macrotask.
  const timed = async <T>(hook: string, call: () => Promise<T>): Promise<T> => {
    await yieldToEventLoop();
    meter.tick();
    keep("betweenHooks");
    const started = performance.now();
    const result = await call();
    hooks[hook]!.push(performance.now() - started);
    meter.tick();
    keep(hook);
    return result;
  };
  let history: AgentMessage[] = [];
  for (const [index, turn] of turns.entries()) {
    await phase.time(async () => {
      const engine = context.host.engine();
      await timed("bootstrap", () => engine.bootstrap({ ...session, sessionFile: main.sessionKey }));
      await timed("maintainBootstrap", () => engine.maintain({ ...session, runtimeContext: { llm } }));
      const prompt = { ...session, messages: history, tokenBudget: TURN_BUDGET };
      await timed("assemble", () => engine.assemble(prompt));
      if (turn.some((message) => message.role === "toolResult")) {
        await timed("assembleToolLoop", () => engine.assemble({ ...prompt, tokenBudget: TURN_BUDGET + 20_000 }));
      }
      await timed("commitTurn", () => engine.commitTurn({ ...session, advancementKey: `bench-hooks-${index}`, messages: turn }));
      await timed("maintainTurn", () => engine.maintain({ ...session, runtimeContext: { llm } }));
      await engine.dispose();
    });
    history = [...history, ...turn].slice(-40);
  }
  meter.stop();
  gcPauses.disconnect();
  const perHook = Object.fromEntries(
    Object.entries(hooks).flatMap(([hook, samples]) => {
      if (samples.length === 0) return [];
      const stats = latencyOf(samples);
      return [
        [`${hook}.p95`, stats.p95], [`${hook}.max`, stats.max],
        [`${hook}.eventLoopMaxMs`, round(blocks[hook]?.wallMs ?? 0, 1)], [`${hook}.eventLoopMaxCpuMs`, round(blocks[hook]?.cpuMs ?? 0, 1)],
      ];
    }),
  );
  return phase.finish({
    values: {
      turns: turns.length, summarizerMs: round(llm.millis - llmBefore, 1), summarizerCalls: llm.calls - callsBefore, ...perHook,
      "betweenHooks.eventLoopMaxMs": round(blocks.betweenHooks?.wallMs ?? 0, 1), "betweenHooks.eventLoopMaxCpuMs": round(blocks.betweenHooks?.cpuMs ?? 0, 1),
      longestGcPauseMs: round(longestGcMs, 1),
    },
  });
}

/** PostgreSQL's current WAL position, or null on SQLite. */
async function walPosition(context: BenchContext): Promise<string | null> {
  if (context.target.kind !== "postgres") return null;
  return (await context.db.get<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn"))!.lsn;
}

/** MB of WAL the PostgreSQL server wrote since `position`. */
async function walWrittenSince(context: BenchContext, position: string): Promise<number> {
  const row = await context.db.get<{ bytes: string }>("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ?::pg_lsn)::text AS bytes", position);
  return megabytes(Number(row!.bytes));
}
