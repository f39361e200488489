/**
 * The compact and maintain hooks: turn host parameters into a compaction run and its result into the truthful
 * answer the host expects. maintain (after every committed turn) runs the incremental pass, or a full sweep when
 * the context passes contextThreshold x budget; compact honours force, tokenBudget, currentTokenCount,
 * compactionTarget, customInstructions and abortSignal. Both record the outcome on the conversation.
 */
import { sharedCircuitBreaker } from "../compaction/circuit-breaker.js";
import { type CompactionRun, CompactionEngine } from "../compaction/compaction-engine.js";
import { budgetTarget, resolveBudget, thresholdTarget } from "../compaction/compaction-targets.js";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import type { CompactParams, CompactResult, HostLlm, MaintainParams, MaintenanceResult } from "../host/openclaw-types.js";
import type { CompactionOutcome, ConversationRecord } from "../records.js";
import type { CompactionStore } from "../store/compaction-store.js";
import type { LcmStore } from "../store/store.js";
import type { SummarizerSelector } from "../summarize/summarizer-selection.js";

/** Our own bound on compact, inside the host's 180 s safety timeout so a truthful result gets back in time. */
export const COMPACT_DEADLINE_MS = 150_000;
/** Bound on the work after one turn. */
export const MAINTAIN_DEADLINE_MS = 120_000;

export interface CompactionHookDeps {
  config: LcmConfig;
  store: LcmStore;
  compactionStore: CompactionStore;
  summarizers: SummarizerSelector;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
}

export async function runMaintain(params: MaintainParams, deps: CompactionHookDeps): Promise<MaintenanceResult> {
  const unchanged = (reason: string): MaintenanceResult => ({ changed: false, bytesFreed: 0, rewrittenEntries: 0, reason });
  const conversation = await deps.store.findConversationBySessionId(params.sessionId);
  if (!conversation) return unchanged("no stored conversation for this session");
  if (deps.config.autocompactDisabled) return unchanged("automatic compaction is disabled (autocompactDisabled)");
  const budget = resolveBudget({
    lastTokenBudget: conversation.lastTokenBudget,
    runtimeTokenBudget: params.runtimeContext?.tokenBudget,
    defaultTokenBudget: deps.config.defaultTokenBudget,
  });
  const threshold = thresholdTarget(budget, deps.config.contextThreshold);
  const isOverThreshold = conversation.contextTokens > threshold;
  // Cheap exit on most turns: the raw backlog outside the fresh tail is at most all raw context tokens.
  if (!isOverThreshold && conversation.contextRawTokens <= deps.config.leafChunkTokens) return unchanged("below thresholds");

  const engine = compactionEngineFor(params.runtimeContext?.llm, deps);
  const options = {
    deadlineMs: MAINTAIN_DEADLINE_MS,
    ...(params.abortSignal ? { signal: params.abortSignal } : {}),
    ...customInstructionsOf(deps.config.customInstructions),
  };
  const run = isOverThreshold
    ? await engine.sweep(conversation.conversationId, { ...options, hard: false })
    : await engine.runIncremental(conversation.conversationId, options);
  const trigger = isOverThreshold ? "maintain:threshold" : "maintain:incremental";
  if (run.passes.length > 0) await record(conversation, trigger, run, describeRun(run), deps);
  return { changed: run.passes.length > 0, bytesFreed: 0, rewrittenEntries: 0, reason: describeRun(run) };
}

export async function runCompact(params: CompactParams, deps: CompactionHookDeps): Promise<CompactResult> {
  const conversation = await deps.store.findConversationBySessionId(params.sessionId);
  if (!conversation) return { ok: true, compacted: false, reason: "no stored conversation for this session" };
  const force = params.force === true;
  const targetKind = params.compactionTarget === "threshold" ? "threshold" : "budget";
  if (!force && deps.config.autocompactDisabled) {
    return { ok: true, compacted: false, reason: "automatic compaction is disabled (autocompactDisabled); use /compact" };
  }
  const budget = resolveBudget({
    lastTokenBudget: conversation.lastTokenBudget,
    hostTokenBudget: params.tokenBudget,
    runtimeTokenBudget: params.runtimeContext?.tokenBudget,
    defaultTokenBudget: deps.config.defaultTokenBudget,
  });
  const { targetTokens, excessTokens } = targetKind === "threshold"
    ? { targetTokens: thresholdTarget(budget, deps.config.contextThreshold), excessTokens: 0 }
    : budgetTarget({
        budget,
        contextTokens: conversation.contextTokens,
        currentTokenCount: params.currentTokenCount ?? params.runtimeContext?.currentTokenCount,
        windowTokens: params.tokenBudget ?? params.runtimeContext?.tokenBudget,
      });
  if (!force && excessTokens === 0 && conversation.contextTokens <= targetTokens) {
    return {
      ok: true,
      compacted: false,
      reason: `below target: ${conversation.contextTokens} context tokens <= ${targetTokens}`,
      result: { tokensBefore: conversation.contextTokens, tokensAfter: conversation.contextTokens },
    };
  }

  const engine = compactionEngineFor(params.runtimeContext?.llm, deps);
  const run = await engine.compactUntilUnder(conversation.conversationId, targetTokens, {
    hard: force || targetKind === "budget",
    fullFirstRound: force && targetKind === "threshold",
    deadlineMs: COMPACT_DEADLINE_MS,
    ...(params.abortSignal ? { signal: params.abortSignal } : {}),
    ...customInstructionsOf(deps.config.customInstructions, params.customInstructions),
  });
  const compacted = run.tokensAfter < run.tokensBefore;
  const isUnderTarget = run.tokensAfter <= targetTokens;
  const ok = run.stopReason !== "aborted" && (compacted || isUnderTarget);
  const reason = `${describeRun(run)}; target ${targetTokens} tokens`;
  await record(conversation, `compact:${targetKind}`, run, reason, deps);
  return {
    ok,
    compacted,
    reason,
    result: {
      tokensBefore: run.tokensBefore,
      tokensAfter: run.tokensAfter,
      details: {
        passes: run.passes.length,
        rounds: run.rounds,
        stopReason: run.stopReason,
        targetTokens,
        freshTailTokens: run.freshTailTokens,
        levels: countLevels(run),
      },
    },
  };
}

function compactionEngineFor(sessionLlm: HostLlm | undefined, deps: CompactionHookDeps): CompactionEngine {
  const selected = deps.summarizers(sessionLlm);
  return new CompactionEngine({
    store: deps.store,
    compactionStore: deps.compactionStore,
    summarizer: selected.summarizer,
    breaker: sharedCircuitBreaker(selected.key),
    tokens: deps.tokens,
    clock: deps.clock,
    config: deps.config,
    logger: deps.logger,
  });
}

/** Configured instructions first, then the ones typed after /compact. */
function customInstructionsOf(...sources: (string | undefined)[]): { customInstructions?: string } {
  const text = sources.map((source) => source?.trim()).filter(Boolean).join("\n");
  return text ? { customInstructions: text } : {};
}

function countLevels(run: CompactionRun): Partial<Record<string, number>> {
  const levels: Partial<Record<string, number>> = {};
  for (const pass of run.passes) levels[pass.level] = (levels[pass.level] ?? 0) + 1;
  return levels;
}

const STOP_REASON_TEXT: Record<CompactionRun["stopReason"], string> = {
  "nothing-to-do": "nothing eligible to compact",
  done: "done",
  "under-target": "under target",
  "fresh-tail-exceeds-target": "the fresh tail alone exceeds the target; everything older is compacted",
  "no-progress": "no further reduction possible",
  "max-rounds": "stopped after the maximum number of rounds",
  "max-passes": "stopped after the maximum number of passes",
  deadline: "stopped at the deadline",
  aborted: "aborted by the host",
  "summarizer-unavailable": "summarizer circuit open; deferred",
};

export function describeRun(run: CompactionRun): string {
  const levels = Object.entries(countLevels(run)).map(([level, count]) => `${count} ${level}`).join(", ");
  const passes = run.passes.length === 0 ? "no passes" : `${run.passes.length} passes (${levels})`;
  return `${passes}, ${run.tokensBefore} -> ${run.tokensAfter} tokens: ${STOP_REASON_TEXT[run.stopReason]}` +
    (run.stopReason === "fresh-tail-exceeds-target" ? ` (fresh tail ${run.freshTailTokens} tokens)` : "");
}

async function record(
  conversation: ConversationRecord,
  trigger: string,
  run: CompactionRun,
  reason: string,
  deps: CompactionHookDeps,
): Promise<void> {
  const outcome: CompactionOutcome = {
    at: deps.clock.now(),
    trigger,
    compacted: run.tokensAfter < run.tokensBefore,
    tokensBefore: run.tokensBefore,
    tokensAfter: run.tokensAfter,
    passes: run.passes.length,
    reason,
  };
  await deps.store.setLastCompaction(conversation.conversationId, outcome);
  deps.logger.info(`compaction (${trigger}): ${reason}`);
}
