/**
 * Compaction phases with the instant summarizer, reported as engine time (wall time minus time inside the
 * model): the overhead of one incremental pass (`maintain` after a turn, in steady state), and a full forced sweep (`compact`) of the backlog conversation, about 10M
 * tokens at 1M messages. "pending feature" while the engine does not compact.
 */
import { performance } from "node:perf_hooks";
import { INDEX_BATCH_MESSAGES } from "../../src/engine/lcm-context-engine.js";
import { type BenchContext, conversationOf, freshTurns, summaryCount } from "../context.js";
import { Phase, type PhaseResult, latencyOf, round, yieldToEventLoop } from "../measure.js";

/** Incremental passes to time, and the most turns committed to get them. */
const PASSES = 30;
const MAX_TURNS = 3_000;
/** Safety bound on one sweep phase (the bar is 30 s of engine time for 10M tokens). */
const SWEEP_WALL_LIMIT_MS = 180_000;
const SWEEP_MAX_CALLS = 50;

export async function runCompactionPhases(context: BenchContext): Promise<PhaseResult[]> {
  return [await passOverhead(context), await sweep(context)];
}

/**
 * Steady state: turns are committed to the compacted conversation, and after each one `maintain` runs as the
 * host calls it; whenever the raw backlog passes leafChunkTokens it makes one incremental pass. The figure is
 * the engine time of those maintain calls (wall minus time inside the model) per pass; the full-text batch
 * that maintain would index on some of those turns is indexed just before, so it is not counted as compaction.
 */
async function passOverhead(context: BenchContext): Promise<PhaseResult> {
  const conversation = conversationOf(context, "compacted");
  const session = { sessionId: conversation.sessionId, sessionKey: conversation.sessionKey };
  const llm = context.host.llm;
  const turns = freshTurns(context.manifest.seed + 3, conversation, MAX_TURNS, "passes");
  const summariesBefore = await summaryCount(context, conversation.sessionId);
  const callsBefore = llm.calls;
  const phase = new Phase("compaction.pass");
  const engineSamples: number[] = [];
  let maintainCalls = 0;
  let lastReason = "";
  for (const [index, turn] of turns.entries()) {
    if (engineSamples.length >= PASSES) break;
    await yieldToEventLoop();
    await context.host.engine().commitTurn({ ...session, advancementKey: `bench-passes-${index}`, messages: turn });
    const llmBefore = llm.millis;
    const summariesAtStart = await summaryCount(context, conversation.sessionId);
    // maintain also indexes new messages once a batch waits, with their terms in the term dictionary (both timed
    // by the ingest phases): do it first, so the sample is the compaction pass.
    await context.db.indexPending({ whenAtLeast: INDEX_BATCH_MESSAGES });
    await yieldToEventLoop();
    const started = performance.now();
    const result = await context.host.engine().maintain({ ...session, runtimeContext: { llm } });
    const elapsed = performance.now() - started;
    maintainCalls++;
    lastReason = result.reason ?? "";
    const passes = (await summaryCount(context, conversation.sessionId)) - summariesAtStart;
    if (passes > 0) engineSamples.push((elapsed - (llm.millis - llmBefore)) / passes);
  }
  const passes = (await summaryCount(context, conversation.sessionId)) - summariesBefore;
  if (passes === 0) {
    return phase.abandon("pending", `maintain did not compact after ${maintainCalls} turns (${lastReason || "no reason given"})`);
  }
  return {
    ...phase.finish({ values: { maintainCalls, passes, summarizerCalls: llm.calls - callsBefore } }),
    latency: latencyOf(engineSamples),
  };
}

async function sweep(context: BenchContext): Promise<PhaseResult> {
  const backlog = conversationOf(context, "backlog");
  const llm = context.host.llm;
  const before = (await context.db.get<{ raw: number; items: number }>(
    "SELECT context_raw_tokens AS raw, context_items AS items FROM conversations WHERE session_id = ?", backlog.sessionId,
  ))!;
  const summariesBefore = await summaryCount(context, backlog.sessionId);
  const llmBefore = llm.millis;
  const phase = new Phase("compaction.sweep");
  let calls = 0;
  let lastReason = "";
  for (; calls < SWEEP_MAX_CALLS && phase.elapsedMs < SWEEP_WALL_LIMIT_MS; calls++) {
    const result = await phase.time(() =>
      context.host.engine().compact({
        sessionId: backlog.sessionId,
        sessionKey: backlog.sessionKey,
        force: true,
        compactionTarget: "threshold",
        tokenBudget: 128_000,
        runtimeContext: { llm },
      }),
    );
    lastReason = result.reason ?? "";
    if (!result.compacted) break;
  }
  const passes = (await summaryCount(context, backlog.sessionId)) - summariesBefore;
  if (passes === 0) return phase.abandon("pending", `compact did not compact (${lastReason || "no reason given"}); compaction is issue 3`);
  const after = (await context.db.get<{ raw: number; items: number; tokens: number }>(
    "SELECT context_raw_tokens AS raw, context_items AS items, context_tokens AS tokens FROM conversations WHERE session_id = ?",
    backlog.sessionId,
  ))!;
  const wallMs = phase.samples.reduce((sum, value) => sum + value, 0);
  const engineMs = wallMs - (llm.millis - llmBefore);
  const sweptTokens = before.raw - after.raw;
  const result = phase.finish({
    values: {
      backlogTokens: before.raw,
      sweptTokens,
      contextItemsBefore: before.items,
      contextItemsAfter: after.items,
      contextTokensAfter: after.tokens,
      passes,
      compactCalls: calls,
      wallSeconds: round(wallMs / 1000, 2),
      engineSeconds: round(engineMs / 1000, 2),
      engineSecondsPer10MTokens: round((engineMs / 1000) * (10_000_000 / Math.max(1, sweptTokens)), 2),
      engineMsPerPass: round(engineMs / passes, 2),
      lastReason,
    },
  });
  delete result.latency; // one sweep: its figure is engineSeconds, not a latency distribution
  return result;
}
