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
import type { TailPolicy } from "./context-units.js";

/** What the last turn's first assemble recorded (conversations.last_*). */
export interface RecordedBudget {
  /** The first assemble budget of the last turn. */
  tokenBudget: number | null;
  /** The model window of that turn, when the host said. */
  windowTokens: number | null;
  /** The reply reserve the host kept out of that window, when the host said. */
  reserveTokens: number | null;
}

export interface BudgetSources {
  recorded: RecordedBudget;
  /** The model window the host states now (compact's `tokenBudget`, runtimeContext.tokenBudget). */
  hostWindowTokens?: number | undefined;
  defaultTokenBudget: number;
}

export interface ResolvedBudget {
  tokens: number;
  /** "assemble": the recorded budget; "rescaled": the recorded overhead taken from the window stated now. */
  source: "assemble" | "rescaled" | "host" | "default";
}

/** No budget below this is used for planning: below it nothing useful fits, and shares of it would round to 0. */
export const MINIMUM_BUDGET_TOKENS = 256;

/** The reply reserve OpenClaw keeps out of a window: 20,000 tokens at most, a quarter of the window at most. */
export function replyReserve(windowTokens: number): number {
  return Math.min(20_000, Math.floor(windowTokens / 4));
}

export function resolveBudget(sources: BudgetSources): ResolvedBudget {
  const recordedBudget = positive(sources.recorded.tokenBudget);
  const window = positive(sources.hostWindowTokens);
  if (recordedBudget !== undefined) {
    const recordedWindow = positive(sources.recorded.windowTokens);
    if (window === undefined || recordedWindow === undefined || window === recordedWindow) {
      return { tokens: recordedBudget, source: "assemble" };
    }
    // The window changed since the last assemble (the model was switched): keep that turn's overhead (system
    // prompt, prompt) and take the rest from the window stated now, less its reserve.
    const recordedReserve = positive(sources.recorded.reserveTokens) ?? replyReserve(recordedWindow);
    const overhead = Math.max(0, recordedWindow - recordedReserve - recordedBudget);
    const wasCappedByWindow = recordedReserve >= Math.floor(recordedWindow / 4);
    const reserve = wasCappedByWindow ? replyReserve(window) : Math.min(recordedReserve, Math.floor(window / 4));
    return { tokens: Math.max(1, window - reserve - overhead), source: "rescaled" };
  }
  if (window !== undefined) return { tokens: Math.max(1, window - replyReserve(window)), source: "host" };
  return { tokens: sources.defaultTokenBudget, source: "default" };
}

/** contextThreshold x budget: above it, a full sweep runs after the turn. */
export function thresholdTarget(budget: ResolvedBudget, contextThreshold: number): number {
  return Math.max(1, Math.floor(budget.tokens * contextThreshold));
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
 */
export function budgetTarget(input: {
  budget: ResolvedBudget;
  contextTokens: number;
  currentTokenCount?: number | undefined;
  windowTokens?: number | undefined;
  /** The host's measure of this turn's prompt (assemble saw it), when known. */
  promptTokens?: number | undefined;
}): { targetTokens: number; excessTokens: number; isPromptTooLarge: boolean } {
  const window = positive(input.windowTokens);
  const current = positive(input.currentTokenCount);
  const allowed = window === undefined ? undefined : window - replyReserve(window);
  const excessTokens = current === undefined || allowed === undefined ? 0 : Math.max(0, current - allowed);
  if (excessTokens === 0) return { targetTokens: Math.max(1, input.budget.tokens), excessTokens, isPromptTooLarge: false };
  if (excessTokens < input.contextTokens) {
    return { targetTokens: Math.max(1, Math.min(input.budget.tokens, input.contextTokens - excessTokens)), excessTokens, isPromptTooLarge: false };
  }
  const prompt = positive(input.promptTokens);
  if (prompt !== undefined && allowed !== undefined && prompt >= allowed) {
    return { targetTokens: Math.max(1, input.budget.tokens), excessTokens, isPromptTooLarge: true };
  }
  return { targetTokens: Math.max(1, Math.min(input.budget.tokens, Math.floor(input.contextTokens / 2))), excessTokens, isPromptTooLarge: false };
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
/** Floors, so that tiny budgets still give summaries that say something. */
const MINIMUM_CHUNK_TOKENS = 256;
const MINIMUM_TARGET_TOKENS = 32;
const MINIMUM_FALLBACK_TOKENS = 48;
const MINIMUM_LARGE_MESSAGE_TOKENS = 100;

export type ScalableConfig = Pick<
  LcmConfig,
  | "leafChunkTokens" | "leafTargetTokens" | "condensedTargetTokens" | "freshTailCount" | "freshTailBudgetShare"
  | "largeFileTokenThreshold" | "largeMessageBudgetShare"
>;

export function scaledSettings(budgetTokens: number, config: ScalableConfig): ScaledSettings {
  const budget = Math.max(MINIMUM_BUDGET_TOKENS, Math.floor(budgetTokens));
  const share = (ratio: number, floor: number, ceiling: number) => Math.min(ceiling, Math.max(floor, Math.floor(budget * ratio)));
  return {
    leafChunkTokens: share(LEAF_CHUNK_BUDGET_SHARE, MINIMUM_CHUNK_TOKENS, config.leafChunkTokens),
    leafTargetTokens: share(LEAF_TARGET_BUDGET_SHARE, MINIMUM_TARGET_TOKENS, config.leafTargetTokens),
    condensedTargetTokens: share(CONDENSED_TARGET_BUDGET_SHARE, MINIMUM_TARGET_TOKENS, config.condensedTargetTokens),
    fallbackTokens: share(FALLBACK_BUDGET_SHARE, MINIMUM_FALLBACK_TOKENS, FALLBACK_TOKENS),
    tail: { count: config.freshTailCount, maxTokens: Math.floor(budget * config.freshTailBudgetShare) },
    largeMessageTokens: share(config.largeMessageBudgetShare, MINIMUM_LARGE_MESSAGE_TOKENS, config.largeFileTokenThreshold),
  };
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}
