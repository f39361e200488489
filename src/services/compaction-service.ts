/**
 * Compaction runs, host-free: the hooks (engine/compaction-hooks.ts), `/compact` and the `lcm compact` command all
 * call this with plain parameters. `maintain` (after every committed turn) runs the incremental pass, or a sweep
 * when the context passes contextThreshold x budget and keeps going into the fresh tail if it still does not fit;
 * `compact` honours force, a window stated now, a live token count, a threshold or budget target, instructions and
 * an abort signal, and answers truthfully (spec 011). Every run gets a compaction id; every run and every failure
 * is logged with the spec's fields and counted in the metrics; the outcome is recorded on the conversation.
 */
import { sharedCircuitBreaker } from "../compaction/circuit-breaker.js";
import type { TailPolicy } from "../compaction/context-units.js";
import { type CompactionRun, CompactionEngine } from "../compaction/compaction-engine.js";
import {
  budgetTarget, recordedBudgetOf, type ResolvedBudget, resolveBudget, scaledSettings, thresholdTarget,
} from "../compaction/compaction-targets.js";
import type { Clock, CompletionModel, Logger, TokenEstimator } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { describeError } from "../errors.js";
import { type LcmMetrics, processMetrics } from "../metrics/lcm-metrics.js";
import type { CompactionOutcome, ConversationKey, ConversationRecord } from "../records.js";
import { flooredPositive } from "../runtime/numbers.js";
import type { CompactionStore } from "../store/compaction-store.js";
import type { LcmStore } from "../store/store.js";
import { ExtractiveSummarizer } from "../summarize/extractive-summarizer.js";
import type { SummarizerSelector } from "../summarize/summarizer-selection.js";
import { type CompactionLogFields, newCompactionId, withLogFields } from "./log-fields.js";
import { type SpendGuard, sharedSpendGuard, spendKey, spendLimitsOf } from "./spend-guard.js";
import { type RunSummarizer, SummarizationService } from "./summarization-service.js";
import { describeRun } from "./run-description.js";
import { leaseHolder } from "../runtime/lease-holder.js";
import {
  abortedText, compactedText, elsewhereText, manualNothingOlderText, nothingHelpsText, PENDING_TURN_TOO_LARGE_TEXT, PROMPT_TOO_LARGE_TEXT,
  underTargetText,
} from "./compaction-words.js";


/** Our own bound on compact, inside the host's 180 s safety timeout so a truthful result gets back in time. */
export const COMPACT_DEADLINE_MS = 150_000;
/** Bound on the work after one turn. */
export const MAINTAIN_DEADLINE_MS = 120_000;
/**
 * A run's compaction lease outlasts its deadline by this much: a live run never loses it, and a gateway that died
 * mid-run holds its conversations' compaction at most this long past its deadline.
 */
export const LEASE_MARGIN_MS = 30_000;
/** This process's name as a lease holder. */
const LEASE_HOLDER = leaseHolder();

export interface CompactionServiceDeps {
  config: LcmConfig;
  store: LcmStore;
  compactionStore: CompactionStore;
  summarizers: SummarizerSelector;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  /** Default: the process's instruments. */
  metrics?: LcmMetrics;
  /** Default: the process's guard. */
  spendGuard?: SpendGuard;
}

/** Which conversation: the host's (agent, session) key, or a conversation id (the CLI). */
export type CompactionTarget = { key: Pick<ConversationKey, "agentId" | "sessionId"> } | { conversationId: number };

export interface MaintainRequest {
  target: CompactionTarget;
  /** The model window the host states now, if any. */
  windowTokens?: unknown;
  /** The session's model, when the caller has one. */
  model?: CompletionModel | undefined;
  signal?: AbortSignal | undefined;
}

export interface MaintainOutcome {
  changed: boolean;
  reason: string;
}

export interface CompactRequest {
  target: CompactionTarget;
  /** Compact even below the target (/compact, `lcm compact`). */
  force: boolean;
  /** "threshold": down to contextThreshold x budget; "budget": whatever it takes to fit the budget. */
  targetKind: "threshold" | "budget";
  /** The host's preflight (it measured its last request): aim at the threshold like maintain. */
  preflight?: boolean;
  /** The model window stated now. */
  windowTokens?: unknown;
  /** A live token count of the caller's context (a provider's overflow error states it). */
  currentTokenCount?: unknown;
  /** The host's measure of the current turn's prompt, when an assemble of this turn saw it. */
  promptTokens?: number | undefined;
  /**
   * How far this turn's pending part (the prompt and its tool results) went past what the first budget left history,
   * by the host's measure: above 0, OpenClaw's own part of the request alone is larger than its window allows.
   */
  pendingOverdraftTokens?: number | undefined;
  customInstructions?: string | undefined;
  model?: CompletionModel | undefined;
  signal?: AbortSignal | undefined;
  /** Names the trigger in the log, the metrics and the recorded outcome; default `compact:<target>`. */
  trigger?: string;
  /** Called after each summary is written (the CLI's progress bar). */
  onSummary?: () => void;
}

export interface CompactOutcome {
  /** False only when the run was aborted. */
  ok: boolean;
  compacted: boolean;
  reason: string;
  /** Absent when nothing was stored for the conversation. */
  tokensBefore?: number;
  tokensAfter?: number;
  compactionId?: string;
  details?: {
    passes: number; rounds: number; stopReason: string; targetTokens: number; budgetTokens: number; freshTailTokens: number;
    reachedIntoTail: boolean; levels: Partial<Record<string, number>>; summarizer: string; divertedBySpendGuard: number;
  };
}

/** The budget compaction works toward for a conversation, given the window the host states now (if any). */
export function compactionBudget(conversation: ConversationRecord, hostWindowTokens: unknown, config: LcmConfig): ResolvedBudget {
  return resolveBudget({
    recorded: recordedBudgetOf(conversation),
    hostWindowTokens: flooredPositive(hostWindowTokens),
    defaultTokenBudget: config.defaultTokenBudget,
  });
}

export class CompactionService {
  private readonly metrics: LcmMetrics;
  private readonly summarization: SummarizationService;

  constructor(private readonly deps: CompactionServiceDeps) {
    this.metrics = deps.metrics ?? processMetrics();
    this.summarization = new SummarizationService({
      select: deps.summarizers,
      deterministic: new ExtractiveSummarizer({ tokens: deps.tokens }),
      guard: deps.spendGuard ?? sharedSpendGuard(),
      limits: spendLimitsOf(deps.config),
      metrics: this.metrics,
      clock: deps.clock,
      logger: deps.logger,
    });
  }

  async maintain(request: MaintainRequest): Promise<MaintainOutcome> {
    const conversation = await this.find(request.target);
    if (!conversation) return { changed: false, reason: "no stored conversation for this session" };
    const { config } = this.deps;
    if (config.autocompactDisabled) return { changed: false, reason: "automatic compaction is disabled (autocompactDisabled)" };
    const budget = compactionBudget(conversation, request.windowTokens, config);
    const sizes = scaledSettings(budget.tokens, config);
    const threshold = thresholdTarget(budget, config.contextThreshold);
    const isOverThreshold = conversation.contextTokens > threshold;
    // Cheap exit on most turns: the raw backlog outside the fresh tail is at most all raw context tokens.
    if (!isOverThreshold && conversation.contextRawTokens <= sizes.leafChunkTokens) return { changed: false, reason: "below thresholds" };

    const trigger = isOverThreshold ? "maintain:threshold" : "maintain:incremental";
    return this.run(conversation, trigger, request.model, undefined, MAINTAIN_DEADLINE_MS, async (engine, logger) => {
      const options = {
        deadlineMs: MAINTAIN_DEADLINE_MS,
        sizes,
        ...(request.signal ? { signal: request.signal } : {}),
        ...customInstructionsOf(config.customInstructions),
      };
      if (!isOverThreshold) return engine.runIncremental(conversation.conversationId, options);
      // A full sweep batches the work (fewer, larger summaries keep the prompt cache warm longer); only if the
      // context still passes the threshold does compaction reach into the fresh tail.
      const swept = await engine.sweep(conversation.conversationId, { ...options, hard: false });
      if (swept.tokensAfter <= threshold || !isContinuable(swept)) return swept;
      logger.debug("compaction: still over the threshold after a sweep; reaching into the fresh tail");
      const more = await engine.compactUntilUnder(conversation.conversationId, threshold, { ...options, hard: true, fullFirstRound: false });
      return combineRuns(swept, more);
    }).then(({ run, reason }) => ({ changed: run.passes.length > 0, reason }));
  }

  async compact(request: CompactRequest): Promise<CompactOutcome> {
    const conversation = await this.find(request.target);
    if (!conversation) return { ok: true, compacted: false, reason: "nothing to compact: no stored conversation for this session" };
    const { config } = this.deps;
    if (!request.force && config.autocompactDisabled) {
      return { ok: true, compacted: false, reason: "automatic compaction is disabled (autocompactDisabled); use /compact" };
    }
    const hostWindow = flooredPositive(request.windowTokens);
    const budget = compactionBudget(conversation, hostWindow, config);
    // Later budgets are measured against the window stated now (a window first learned here belongs to this turn).
    if (hostWindow !== undefined && conversation.lastWindowTokens === null) {
      await this.deps.store.recordBudget(conversation.conversationId, { windowTokens: hostWindow });
    }
    // An explicit /compact (or `lcm compact`) summarizes everything but a small manual tail, as OpenClaw's own does:
    // the automatic fresh tail can hold a whole young conversation (32 messages at 128k), and then nothing happened.
    const isManual = request.force && request.targetKind === "threshold" && request.preflight !== true;
    const scaled = scaledSettings(budget.tokens, config);
    const sizes = isManual ? { ...scaled, tail: manualTail(scaled.tail) } : scaled;
    // The host's preflight measures its last request (system prompt, tools, tool loop) plus the next prompt; every
    // assemble fits the budget whatever that measure says, so preflight aims at the threshold like maintain. Only a
    // provider's refusal (overflow) says the plugin's own estimate was short: then the excess is shed.
    const isPreflight = request.preflight === true;
    const { targetTokens, excessTokens, isPromptTooLarge, isPendingTurnTooLarge } = request.targetKind === "threshold" || isPreflight
      ? { targetTokens: thresholdTarget(budget, config.contextThreshold), excessTokens: 0, isPromptTooLarge: false }
      : budgetTarget({
        budget, contextTokens: conversation.contextTokens, currentTokenCount: flooredPositive(request.currentTokenCount),
        windowTokens: hostWindow, promptTokens: request.promptTokens, pendingOverdraftTokens: request.pendingOverdraftTokens,
      });
    const trigger = request.trigger ?? `compact:${isPreflight ? "preflight" : request.targetKind}`;
    if ((!request.force || isPreflight) && excessTokens === 0 && conversation.contextTokens <= targetTokens) {
      return {
        ok: true, compacted: false,
        reason: underTargetText(conversation.contextTokens, budget.tokens, thresholdTarget(budget, config.contextThreshold)),
        tokensBefore: conversation.contextTokens, tokensAfter: conversation.contextTokens,
      };
    }
    const { run, compactionId, summarizer, diverted } = await this.run(conversation, trigger, request.model, request.onSummary, COMPACT_DEADLINE_MS, (engine) =>
      engine.compactUntilUnder(conversation.conversationId, targetTokens, {
        hard: request.force || request.targetKind === "budget",
        fullFirstRound: request.force && request.targetKind === "threshold",
        deadlineMs: COMPACT_DEADLINE_MS,
        sizes,
        ...(request.signal ? { signal: request.signal } : {}),
        ...customInstructionsOf(config.customInstructions, request.customInstructions),
      }), `target ${targetTokens} tokens${isPendingTurnTooLarge ? "; the current turn with its tool results is larger than the window allows" : ""}`);
    return {
      ...answer(run, targetTokens, budget, thresholdTarget(budget, config.contextThreshold),
        isPendingTurnTooLarge ? PENDING_TURN_TOO_LARGE_TEXT : isPromptTooLarge ? PROMPT_TOO_LARGE_TEXT : undefined,
        diverted > 0 ? spendGuardNote(diverted, config) : undefined, isManual ? sizes.tail.count : undefined),
      tokensBefore: run.tokensBefore,
      tokensAfter: run.tokensAfter,
      compactionId,
      details: {
        passes: run.passes.length, rounds: run.rounds, stopReason: run.stopReason, targetTokens, budgetTokens: budget.tokens,
        freshTailTokens: run.freshTailTokens, reachedIntoTail: run.reachedIntoTail, levels: countLevels(run), summarizer,
        divertedBySpendGuard: diverted,
      },
    };
  }

  /**
   * One run: its id and log fields, the summarizer for it, the conversation's compaction lease where the store has
   * leases (a run that cannot take it does not start: another one is compacting this conversation), the engine, the
   * outcome recorded and logged, the metrics counted. A failure is logged with the fields and counted, then rethrown
   * for the caller's guard.
   */
  private async run(
    conversation: ConversationRecord,
    trigger: string,
    model: CompletionModel | undefined,
    onSummary: (() => void) | undefined,
    deadlineMs: number,
    body: (engine: CompactionEngine, logger: Logger) => Promise<CompactionRun>,
    targetText?: string,
  ): Promise<{ run: CompactionRun; reason: string; compactionId: string; summarizer: string; diverted: number }> {
    const fields: CompactionLogFields = {
      conversation_id: conversation.conversationId,
      session_id: conversation.sessionId,
      compaction_id: newCompactionId(),
      trigger_reason: trigger,
    };
    const logger = withLogFields(this.deps.logger, fields);
    const summarizer = this.summarization.forRun({
      spendKey: spendKey(this.deps.config.databasePath, conversation.conversationId),
      sessionModel: model,
      ...(onSummary ? { onSummary } : {}),
    });
    let run: CompactionRun;
    try {
      run = await this.leased(conversation, deadlineMs + LEASE_MARGIN_MS, logger, (store) => body(this.engineFor(summarizer, logger, store), logger));
    } catch (error) {
      this.metrics.compactionRuns.inc({ trigger, outcome: "failed" });
      logger.error(`compaction (${trigger}) failed: ${describeError(error)}`, { token_before: conversation.contextTokens, error: describeError(error) });
      throw error;
    }
    const diverted = summarizer.divertedCalls();
    const reason = [describeRun(run), targetText, diverted > 0 ? spendGuardNote(diverted, this.deps.config) : undefined]
      .filter(Boolean).join("; ");
    await this.record(conversation, trigger, run, reason, diverted);
    const compacted = run.tokensAfter < run.tokensBefore;
    this.metrics.compactionRuns.inc({ trigger, outcome: compacted ? "compacted" : "unchanged" });
    for (const pass of run.passes) this.metrics.summariesCreated.inc({ kind: pass.kind, level: pass.level });
    // A run after a turn that found nothing to do is routine: logged at debug level only.
    const level = run.passes.length > 0 || !trigger.startsWith("maintain:") ? "info" : "debug";
    logger[level](`compaction (${trigger}): ${reason}`, {
      summary_id: run.passes.at(-1)?.summaryId ?? null,
      token_before: run.tokensBefore,
      token_after: run.tokensAfter,
      passes: run.passes.length,
      stop_reason: run.stopReason,
      summarizer: summarizer.key,
      ...(diverted > 0 ? { spend_guard_diverted: diverted } : {}),
    });
    return { run, reason, compactionId: fields.compaction_id, summarizer: summarizer.key, diverted };
  }

  /**
   * Runs `body` on the compaction store, fenced by the conversation's lease when the store has leases; without the
   * lease (another run holds it), a run that did nothing and says why. The lease is released however `body` ends
   * (a release that fails is logged: the lease then ends at its expiry).
   */
  private async leased(
    conversation: ConversationRecord, leaseMs: number, logger: Logger, body: (store: CompactionStore) => Promise<CompactionRun>,
  ): Promise<CompactionRun> {
    const leases = this.deps.compactionStore.leases;
    if (!leases) return body(this.deps.compactionStore);
    const lease = await leases.take(conversation.conversationId, LEASE_HOLDER, leaseMs);
    if (!lease) {
      return {
        tokensBefore: conversation.contextTokens, tokensAfter: conversation.contextTokens, passes: [], rounds: 0,
        stopReason: "elsewhere", freshTailTokens: 0, reachedIntoTail: false,
      };
    }
    try {
      return await body(leases.fencedBy(lease));
    } finally {
      await leases.release(lease).catch((error: unknown) => {
        logger.warn(`compaction: could not release the lease of conversation ${conversation.conversationId} (it ends at its expiry): ${describeError(error)}`);
      });
    }
  }

  private engineFor(summarizer: RunSummarizer, logger: Logger, compactionStore: CompactionStore): CompactionEngine {
    return new CompactionEngine({
      store: this.deps.store,
      compactionStore,
      summarizer: summarizer.summarizer,
      breaker: sharedCircuitBreaker(summarizer.key),
      tokens: this.deps.tokens,
      clock: this.deps.clock,
      config: this.deps.config,
      logger,
    });
  }

  private async record(conversation: ConversationRecord, trigger: string, run: CompactionRun, reason: string, diverted: number): Promise<void> {
    // Runs that changed nothing after a turn are not recorded (they would hide the last real compaction).
    if (trigger.startsWith("maintain:") && run.passes.length === 0) return;
    const outcome: CompactionOutcome = {
      at: this.deps.clock.now(),
      trigger,
      compacted: run.tokensAfter < run.tokensBefore,
      tokensBefore: run.tokensBefore,
      tokensAfter: run.tokensAfter,
      passes: run.passes.length,
      reason,
      ...(diverted > 0 ? { spendGuardDiverted: diverted } : {}),
    };
    await this.deps.store.setLastCompaction(conversation.conversationId, outcome);
  }

  private async find(target: CompactionTarget): Promise<ConversationRecord | null> {
    return "key" in target ? this.deps.store.findConversation(target.key) : this.deps.store.getConversation(target.conversationId);
  }
}

/**
 * What compact answers (spec 011). `compacted` is true only when the context got smaller. `ok` is false only when
 * the run was aborted: every other outcome leaves a context that assembly fits within the budget (older items it
 * cannot fit are left out of the model's view, never sent over it), so the host must not fail the turn for it.
 * Outcomes that made no change say "already under target" or "nothing to compact", the wording OpenClaw treats as a
 * benign skip, and say why.
 */
function answer(
  run: CompactionRun, targetTokens: number, budget: ResolvedBudget, thresholdTokens: number, tooLargeText: string | undefined,
  spendGuard?: string, manualTailMessages?: number,
): { ok: boolean; compacted: boolean; reason: string } {
  const compacted = run.tokensAfter < run.tokensBefore;
  // Short and plain, with /lcm status's numbers (compaction-words.ts); the run's mechanics are in the log and details.
  const figures = {
    tokensBefore: run.tokensBefore, tokensAfter: run.tokensAfter, budgetTokens: budget.tokens, thresholdTokens,
    summariesWritten: run.passes.length,
  };
  const withPrompt = (text: string) => [text, tooLargeText, spendGuard].filter(Boolean).join("; ");
  if (run.stopReason === "aborted") return { ok: false, compacted, reason: withPrompt(abortedText(figures)) };
  if (run.stopReason === "elsewhere") return { ok: true, compacted, reason: withPrompt(elsewhereText(figures)) };
  if (compacted) return { ok: true, compacted, reason: withPrompt(compactedText(figures)) };
  if (manualTailMessages !== undefined) return { ok: true, compacted, reason: withPrompt(manualNothingOlderText(figures, manualTailMessages)) };
  if (run.tokensAfter <= targetTokens) {
    return { ok: true, compacted, reason: withPrompt(underTargetText(run.tokensAfter, budget.tokens, thresholdTokens)) };
  }
  return { ok: true, compacted, reason: withPrompt(nothingHelpsText(figures)) };
}

function spendGuardNote(diverted: number, config: Pick<LcmConfig, "maxSummaryCallsPerWindow" | "summaryCallWindowMinutes">): string {
  return `spend guard: ${diverted} summar${diverted === 1 ? "y" : "ies"} written without a model (the conversation reached ` +
    `${config.maxSummaryCallsPerWindow} model calls in ${config.summaryCallWindowMinutes} min, maxSummaryCallsPerWindow)`;
}

/** Messages an explicit /compact keeps as they are: about the last exchange or tool round (OpenClaw keeps 3 turns). */
export const MANUAL_TAIL_MESSAGES = 4;

/** The small tail of an explicit /compact: at most MANUAL_TAIL_MESSAGES, within the automatic tail's token share. */
function manualTail(tail: TailPolicy): TailPolicy {
  return { count: Math.min(tail.count, MANUAL_TAIL_MESSAGES), maxTokens: tail.maxTokens };
}

/** Whether a run ended for a reason that lets more compaction follow at once (not aborted, late or unavailable). */
function isContinuable(run: CompactionRun): boolean {
  return run.stopReason === "done" || run.stopReason === "nothing-to-do" || run.stopReason === "under-target";
}

/** Two runs one after the other, as one: the first one's start, the second one's end. */
function combineRuns(first: CompactionRun, second: CompactionRun): CompactionRun {
  return { ...second, tokensBefore: first.tokensBefore, passes: [...first.passes, ...second.passes], rounds: first.rounds + second.rounds, freshTailTokens: first.freshTailTokens };
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
