/**
 * The compact and maintain hooks: turn host parameters into a compaction run and its result into the truthful
 * answer the host expects (spec 011). Both work toward the budget the host states now: the recorded budget of the
 * last turn, re-derived from the window when the host says the window changed. maintain (after every committed
 * turn) runs the incremental pass, or a sweep when the context passes contextThreshold x budget, and keeps going
 * into the fresh tail if the context still does not fit the budget. compact honours force, tokenBudget,
 * currentTokenCount, compactionTarget, customInstructions and abortSignal. Both record the outcome.
 */
import { sharedCircuitBreaker } from "../compaction/circuit-breaker.js";
import { type CompactionRun, CompactionEngine } from "../compaction/compaction-engine.js";
import {
  budgetTarget,
  type ResolvedBudget,
  resolveBudget,
  scaledSettings,
  thresholdTarget,
} from "../compaction/compaction-targets.js";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import type { CompactParams, CompactResult, HostLlm, MaintainParams, MaintenanceResult } from "../host/openclaw-types.js";
import type { CompactionOutcome, ConversationRecord } from "../records.js";
import type { CompactionStore } from "../store/compaction-store.js";
import type { LcmStore } from "../store/store.js";
import type { SummarizerSelector } from "../summarize/summarizer-selection.js";
import { conversationKeyOf } from "./session-identity.js";

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

/** The budget compaction works toward for a conversation, given the window the host states now (if any). */
export function compactionBudget(conversation: ConversationRecord, hostWindowTokens: unknown, config: LcmConfig): ResolvedBudget {
  return resolveBudget({
    recorded: {
      tokenBudget: conversation.lastTokenBudget,
      windowTokens: conversation.lastWindowTokens,
      reserveTokens: conversation.lastReserveTokens,
    },
    hostWindowTokens: positive(hostWindowTokens),
    defaultTokenBudget: config.defaultTokenBudget,
  });
}

export async function runMaintain(params: MaintainParams, deps: CompactionHookDeps): Promise<MaintenanceResult> {
  const unchanged = (reason: string): MaintenanceResult => ({ changed: false, bytesFreed: 0, rewrittenEntries: 0, reason });
  const conversation = await deps.store.findConversation(conversationKeyOf(params));
  if (!conversation) return unchanged("no stored conversation for this session");
  if (deps.config.autocompactDisabled) return unchanged("automatic compaction is disabled (autocompactDisabled)");
  const budget = compactionBudget(conversation, params.runtimeContext?.tokenBudget, deps.config);
  const sizes = scaledSettings(budget.tokens, deps.config);
  const threshold = thresholdTarget(budget, deps.config.contextThreshold);
  const isOverThreshold = conversation.contextTokens > threshold;
  // Cheap exit on most turns: the raw backlog outside the fresh tail is at most all raw context tokens.
  if (!isOverThreshold && conversation.contextRawTokens <= sizes.leafChunkTokens) return unchanged("below thresholds");

  const engine = compactionEngineFor(params.runtimeContext?.llm, deps);
  const options = {
    deadlineMs: MAINTAIN_DEADLINE_MS,
    sizes,
    ...(params.abortSignal ? { signal: params.abortSignal } : {}),
    ...customInstructionsOf(deps.config.customInstructions),
  };
  let run: CompactionRun;
  if (isOverThreshold) {
    // A full sweep batches the work (fewer, larger summaries keep the prompt cache warm longer); only if the
    // context still passes the threshold does compaction reach into the fresh tail.
    run = await engine.sweep(conversation.conversationId, { ...options, hard: false });
    if (run.tokensAfter > threshold && isContinuable(run)) {
      const more = await engine.compactUntilUnder(conversation.conversationId, threshold, { ...options, hard: true, fullFirstRound: false });
      run = combineRuns(run, more);
    }
  } else {
    run = await engine.runIncremental(conversation.conversationId, options);
  }
  const trigger = isOverThreshold ? "maintain:threshold" : "maintain:incremental";
  if (run.passes.length > 0) await record(conversation, trigger, run, describeRun(run), deps);
  return { changed: run.passes.length > 0, bytesFreed: 0, rewrittenEntries: 0, reason: describeRun(run) };
}

export async function runCompact(params: CompactParams, deps: CompactionHookDeps): Promise<CompactResult> {
  const found = await deps.store.findConversation(conversationKeyOf(params));
  if (!found) return { ok: true, compacted: false, reason: "nothing to compact: no stored conversation for this session" };
  const force = params.force === true;
  const targetKind = params.compactionTarget === "threshold" ? "threshold" : "budget";
  if (!force && deps.config.autocompactDisabled) {
    return { ok: true, compacted: false, reason: "automatic compaction is disabled (autocompactDisabled); use /compact" };
  }
  const conversation = found;
  const hostWindow = positive(params.tokenBudget) ?? positive(params.runtimeContext?.tokenBudget);
  const budget = compactionBudget(conversation, hostWindow, deps.config);
  // Later budgets are measured against the window stated now (a window first learned here belongs to this turn).
  if (hostWindow !== undefined && conversation.lastWindowTokens === null) {
    await deps.store.recordBudget(conversation.conversationId, { windowTokens: hostWindow });
  }
  const sizes = scaledSettings(budget.tokens, deps.config);
  // The host's preflight measures its last request (system prompt, tools, tool loop) plus the next prompt; every
  // assemble fits the budget whatever that measure says, so preflight aims at the threshold like maintain. Only a
  // provider's refusal (overflow) says the plugin's own estimate was short: then the excess is shed.
  const isPreflight = params.runtimeContext?.forceReason === "preflight_required";
  const { targetTokens, excessTokens } = targetKind === "threshold" || isPreflight
    ? { targetTokens: thresholdTarget(budget, deps.config.contextThreshold), excessTokens: 0 }
    : budgetTarget({
        budget,
        contextTokens: conversation.contextTokens,
        currentTokenCount: params.currentTokenCount ?? params.runtimeContext?.currentTokenCount,
        windowTokens: hostWindow,
      });
  const trigger = isPreflight ? "preflight" : targetKind;
  if ((!force || isPreflight) && excessTokens === 0 && conversation.contextTokens <= targetTokens) {
    return {
      ok: true,
      compacted: false,
      reason: `already under target: ${conversation.contextTokens} context tokens, target ${targetTokens}`,
      result: { tokensBefore: conversation.contextTokens, tokensAfter: conversation.contextTokens },
    };
  }

  const engine = compactionEngineFor(params.runtimeContext?.llm, deps);
  const run = await engine.compactUntilUnder(conversation.conversationId, targetTokens, {
    hard: force || targetKind === "budget",
    fullFirstRound: force && targetKind === "threshold",
    deadlineMs: COMPACT_DEADLINE_MS,
    sizes,
    ...(params.abortSignal ? { signal: params.abortSignal } : {}),
    ...customInstructionsOf(deps.config.customInstructions, params.customInstructions),
  });
  await record(conversation, `compact:${trigger}`, run, `${describeRun(run)}; target ${targetTokens} tokens`, deps);
  return { ...compactAnswer(run, targetTokens, budget, excessTokens > 0 && excessTokens >= conversation.contextTokens), result: {
    tokensBefore: run.tokensBefore,
    tokensAfter: run.tokensAfter,
    details: {
      passes: run.passes.length,
      rounds: run.rounds,
      stopReason: run.stopReason,
      targetTokens,
      budgetTokens: budget.tokens,
      freshTailTokens: run.freshTailTokens,
      reachedIntoTail: run.reachedIntoTail,
      levels: countLevels(run),
    },
  } };
}

/**
 * What compact answers (spec 011). `compacted` is true only when the context got smaller. `ok` is false only when
 * the host aborted the run: every other outcome leaves a context that assembly fits within the budget (older
 * items it cannot fit are left out of the model's view, never sent over it), so the host must not fail the turn
 * for it. Outcomes that made no change say "already under target" or "nothing to compact", the wording OpenClaw
 * treats as a benign skip, and say why.
 */
function compactAnswer(
  run: CompactionRun, targetTokens: number, budget: ResolvedBudget, isPromptTooLarge: boolean,
): { ok: boolean; compacted: boolean; reason: string } {
  const compacted = run.tokensAfter < run.tokensBefore;
  const summary = `${describeRun(run)}; target ${targetTokens} tokens` + (isPromptTooLarge
    ? "; the current message alone is larger than what the model's window leaves for it, which no compaction of the " +
      "stored context can change (LCM stores the message and shows it to later turns bounded)"
    : "");
  if (run.stopReason === "aborted") return { ok: false, compacted, reason: `compaction aborted by the host: ${summary}` };
  if (compacted) return { ok: true, compacted, reason: summary };
  if (run.tokensAfter <= targetTokens) return { ok: true, compacted, reason: `already under target: ${summary}` };
  return {
    ok: true,
    compacted,
    reason: `nothing to compact that would help: ${summary}. Each turn's context is still fitted to its budget ` +
      `(${budget.tokens} tokens): the oldest parts that do not fit are left out of the model's view (all stay searchable with lcm_grep)`,
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

/** Whether a run ended for a reason that lets more compaction follow at once (not aborted, late or unavailable). */
function isContinuable(run: CompactionRun): boolean {
  return run.stopReason === "done" || run.stopReason === "nothing-to-do" || run.stopReason === "under-target";
}

/** Two runs one after the other, as one: the first one's start, the second one's end. */
function combineRuns(first: CompactionRun, second: CompactionRun): CompactionRun {
  return {
    ...second,
    tokensBefore: first.tokensBefore,
    passes: [...first.passes, ...second.passes],
    rounds: first.rounds + second.rounds,
    freshTailTokens: first.freshTailTokens,
  };
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
  "cannot-fit": "no further reduction possible",
  "max-rounds": "stopped after the maximum number of rounds",
  "max-passes": "stopped after the maximum number of passes",
  deadline: "stopped at the deadline",
  aborted: "aborted by the host",
  "summarizer-unavailable": "summarizer circuit open; deferred",
};

export function describeRun(run: CompactionRun): string {
  const levels = Object.entries(countLevels(run)).map(([level, count]) => `${count} ${level}`).join(", ");
  const passes = run.passes.length === 0 ? "no passes" : `${run.passes.length} passes (${levels})`;
  const tail = run.reachedIntoTail ? "; reached into the fresh tail" : "";
  return `${passes}, ${run.tokensBefore} -> ${run.tokensAfter} tokens: ${STOP_REASON_TEXT[run.stopReason]}${tail}`;
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

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}
