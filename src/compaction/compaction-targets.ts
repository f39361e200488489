/**
 * Budget and target arithmetic for deciding when and how far to compact, and how large compaction's pieces may be
 * for a given budget. Pure (spec 011).
 *
 * The budget that matters is what the model may see of the conversation: the host's window less its reply reserve
 * and the system prompt and prompt, which is what the first assemble of a turn is given. It is recorded with the
 * window and reserve of that turn, so that when the host states a different window later (the model was switched),
 * the same overhead is taken from the new window: compaction never aims at a budget larger than what the host
 * states now, nor at an older, smaller one.
 */
import type { LcmConfig } from "../config.js";
import type { ConversationRecord } from "../records.js";
import { flooredPositive } from "../runtime/numbers.js";
import type { TailPolicy } from "./context-units.js";

/** What the last turn's first assemble recorded (conversations.last_*). */
export interface RecordedBudget {
  /** The first assemble budget of the last turn. */
  tokenBudget: number | null;
  /** The model window of that turn, when the host said. */
  windowTokens: number | null;
  /** The reply reserve the host kept out of that window, when the host said. */
  reserveTokens: number | null;
  /**
   * What the last turn's first assemble would have left history without the turn's message (LCM's budget and the
   * message, by the host's measure): below MINIMUM_PLANNING_BUDGET_TOKENS, OpenClaw's own prompt and tools take the
   * window, whatever the message (spec 023). Absent before the first assemble.
   */
  historyRoomTokens?: number | null;
}

export interface BudgetSources {
  recorded: RecordedBudget;
  /** The model window the host states now (compact's `tokenBudget`, runtimeContext.tokenBudget). */
  hostWindowTokens?: number | undefined;
  defaultTokenBudget: number;
}

export interface ResolvedBudget {
  tokens: number;
  /**
   * "assemble": the recorded budget; "rescaled": the recorded overhead taken from the window stated now; "small-window":
   * OpenClaw's own prompt and tools leave less than compaction plans for, so it plans for MINIMUM_PLANNING_BUDGET_TOKENS.
   */
  source: "assemble" | "rescaled" | "host" | "default" | "small-window";
}

/**
 * No budget below this is used for planning (spec 023). Below it the model sees little more than the memory floor
 * (the newest summary, shortened), whatever compaction does; planning for the tiny budget itself made 32-token
 * summaries and re-condensed the whole history after every turn (34 summarizer calls in 10 turns when OpenClaw's
 * coding tool profile left 876 tokens of a 16k window). At this floor a leaf summary is 256 tokens, a condensed one
 * 384, a leaf chunk 1,600, and the context is kept near 2,400 tokens: summaries worth reading, one or two summarizer
 * calls per turn.
 */
export const MINIMUM_PLANNING_BUDGET_TOKENS = 3_200;
/** The smallest summary any prompt asks for: shorter ones say nothing useful (the aggressive level halves, down to this). */
export const USEFUL_SUMMARY_TOKENS = 128;

/** The reply reserve OpenClaw keeps out of a window: 20,000 tokens at most, a quarter of the window at most. */
export function replyReserve(windowTokens: number): number {
  return Math.min(20_000, Math.floor(windowTokens / 4));
}

/**
 * The budget compaction works toward: the recorded one (rescaled to a window stated now), else the window less its
 * reserve, else the default; never below MINIMUM_PLANNING_BUDGET_TOKENS ("small-window": OpenClaw's own prompt and
 * tools, or the budget itself, leave history less than that).
 */
export function resolveBudget(sources: BudgetSources): ResolvedBudget {
  const room = sources.recorded.historyRoomTokens;
  if (typeof room === "number" && room < MINIMUM_PLANNING_BUDGET_TOKENS) {
    return { tokens: MINIMUM_PLANNING_BUDGET_TOKENS, source: "small-window" };
  }
  const resolved = resolveRecordedBudget(sources);
  return resolved.tokens < MINIMUM_PLANNING_BUDGET_TOKENS ? { tokens: MINIMUM_PLANNING_BUDGET_TOKENS, source: "small-window" } : resolved;
}

function resolveRecordedBudget(sources: BudgetSources): ResolvedBudget {
  const recordedBudget = flooredPositive(sources.recorded.tokenBudget);
  const window = flooredPositive(sources.hostWindowTokens);
  if (recordedBudget !== undefined) {
    const recordedWindow = flooredPositive(sources.recorded.windowTokens);
    if (window === undefined || recordedWindow === undefined || window === recordedWindow) {
      return { tokens: recordedBudget, source: "assemble" };
    }
    // The window changed since the last assemble (the model was switched): keep that turn's overhead (system
    // prompt, prompt) and take the rest from the window stated now, less its reserve.
    const recordedReserve = flooredPositive(sources.recorded.reserveTokens) ?? replyReserve(recordedWindow);
    const overhead = Math.max(0, recordedWindow - recordedReserve - recordedBudget);
    const wasCappedByWindow = recordedReserve >= Math.floor(recordedWindow / 4);
    const reserve = wasCappedByWindow ? replyReserve(window) : Math.min(recordedReserve, Math.floor(window / 4));
    return { tokens: Math.max(1, window - reserve - overhead), source: "rescaled" };
  }
  if (window !== undefined) return { tokens: Math.max(1, window - replyReserve(window)), source: "host" };
  return { tokens: sources.defaultTokenBudget, source: "default" };
}

/** What a conversation recorded about its budget (conversations.last_*), as resolveBudget reads it. */
export function recordedBudgetOf(
  conversation: Pick<ConversationRecord, "lastTokenBudget" | "lastWindowTokens" | "lastReserveTokens" | "lastAssembly">,
): RecordedBudget {
  const assembly = conversation.lastAssembly;
  return {
    tokenBudget: conversation.lastTokenBudget,
    windowTokens: conversation.lastWindowTokens,
    reserveTokens: conversation.lastReserveTokens,
    historyRoomTokens: assembly ? assembly.budgetTokens + assembly.promptTokens : null,
  };
}

/** The budget compaction plans for: the budget, and never less than MINIMUM_PLANNING_BUDGET_TOKENS. */
export function planningTokens(budget: Pick<ResolvedBudget, "tokens">): number {
  return Math.max(MINIMUM_PLANNING_BUDGET_TOKENS, Math.floor(budget.tokens));
}

/** contextThreshold x the planning budget: above it, a full sweep runs after the turn. */
export function thresholdTarget(budget: ResolvedBudget, contextThreshold: number): number {
  return Math.max(1, Math.floor(planningTokens(budget) * contextThreshold));
}

/**
 * The target of overflow recovery (the provider refused a prompt): the budget, and at least the excess the host
 * measured (`currentTokenCount` above what its window allows) below the current context.
 *
 * An excess as large as the whole context cannot be shed from the context. When the turn's prompt alone takes
 * the window (a paste larger than the window), compacting would not make it fit: the target is the budget alone
 * and the answer says the prompt is too large. Otherwise the provider counts the same context far larger than the
 * plugin's estimate (another tokenizer, tool schemas, images): half the context is shed, so that the host's retry
 * (it retries up to three times while compaction makes progress) has a real chance; nothing is lost, the shed
 * messages stay recoverable through summaries.
 *
 * When this turn's tool loop took the pending turn past what the first budget left history (spec 023: at 8k, the
 * second tool result of a turn), OpenClaw's own part of the request is larger than its window allows whatever LCM
 * sends (LCM already sends no more than its memory floor's line): the target is the budget alone, and the answer says
 * the current turn is too large, instead of summarizing the history on every retry.
 */
export function budgetTarget(input: {
  budget: ResolvedBudget;
  contextTokens: number;
  currentTokenCount?: number | undefined;
  windowTokens?: number | undefined;
  /** The host's measure of this turn's prompt (assemble saw it), when known. */
  promptTokens?: number | undefined;
  /** How far the pending turn went past what the first budget left history (TurnBudgets.pendingOf). */
  pendingOverdraftTokens?: number | undefined;
}): { targetTokens: number; excessTokens: number; isPromptTooLarge: boolean; isPendingTurnTooLarge?: boolean } {
  const window = flooredPositive(input.windowTokens);
  const current = flooredPositive(input.currentTokenCount);
  const allowed = window === undefined ? undefined : window - replyReserve(window);
  const excessTokens = current === undefined || allowed === undefined ? 0 : Math.max(0, current - allowed);
  const planned = planningTokens(input.budget);
  if (excessTokens === 0) return { targetTokens: planned, excessTokens, isPromptTooLarge: false };
  if ((flooredPositive(input.pendingOverdraftTokens) ?? 0) > 0) {
    return { targetTokens: planned, excessTokens, isPromptTooLarge: true, isPendingTurnTooLarge: true };
  }
  if (excessTokens < input.contextTokens) {
    return { targetTokens: Math.max(1, Math.min(planned, input.contextTokens - excessTokens)), excessTokens, isPromptTooLarge: false };
  }
  const prompt = flooredPositive(input.promptTokens);
  if (prompt !== undefined && allowed !== undefined && prompt >= allowed) {
    return { targetTokens: planned, excessTokens, isPromptTooLarge: true };
  }
  return { targetTokens: Math.max(1, Math.min(planned, Math.floor(input.contextTokens / 2))), excessTokens, isPromptTooLarge: false };
}

/** The sizes compaction works with at a given budget: the configured ones, scaled down for small budgets. */
export interface ScaledSettings {
  /** Largest source of one leaf pass, and the raw backlog that triggers the per-turn pass. */
  leafChunkTokens: number;
  leafTargetTokens: number;
  condensedTargetTokens: number;
  /** Size of the deterministic fallback summary. */
  fallbackTokens: number;
  tail: TailPolicy;
  /** Messages at or above this many tokens are stored aside at ingest (spec 005, spec 011). */
  largeMessageTokens: number;
}

/** A leaf chunk may take this share of the budget: its summary must fit the summarizer's window beside it. */
export const LEAF_CHUNK_BUDGET_SHARE = 0.5;
/** Summary targets as shares of the budget, so that a few summaries never crowd out the conversation. */
export const LEAF_TARGET_BUDGET_SHARE = 0.08;
export const CONDENSED_TARGET_BUDGET_SHARE = 0.12;
/** The fallback summary is the configured 512 tokens at most, and this share of the budget at most. */
export const FALLBACK_BUDGET_SHARE = 0.06;
const FALLBACK_TOKENS = 512;
/** Nothing smaller is stored aside, whatever share of the budget is set. */
const MINIMUM_LARGE_MESSAGE_TOKENS = 100;

export type ScalableConfig = Pick<
  LcmConfig,
  | "leafChunkTokens" | "leafTargetTokens" | "condensedTargetTokens" | "freshTailCount" | "freshTailBudgetShare"
  | "largeFileTokenThreshold" | "largeMessageBudgetShare"
>;

/** The sizes at a budget: shares of the planning budget (never below MINIMUM_PLANNING_BUDGET_TOKENS), the configured ones at most. */
export function scaledSettings(budgetTokens: number, config: ScalableConfig): ScaledSettings {
  const budget = planningTokens({ tokens: budgetTokens });
  const share = (ratio: number, ceiling: number) => Math.min(ceiling, Math.floor(budget * ratio));
  return {
    leafChunkTokens: share(LEAF_CHUNK_BUDGET_SHARE, config.leafChunkTokens),
    leafTargetTokens: share(LEAF_TARGET_BUDGET_SHARE, config.leafTargetTokens),
    condensedTargetTokens: share(CONDENSED_TARGET_BUDGET_SHARE, config.condensedTargetTokens),
    fallbackTokens: share(FALLBACK_BUDGET_SHARE, FALLBACK_TOKENS),
    tail: { count: config.freshTailCount, maxTokens: Math.floor(budget * config.freshTailBudgetShare) },
    largeMessageTokens: Math.max(MINIMUM_LARGE_MESSAGE_TOKENS, share(config.largeMessageBudgetShare, config.largeFileTokenThreshold)),
  };
}
