/**
 * Budget and target arithmetic for deciding when and how far to compact. Pure. The budget that matters is
 * the one the host gave the first assemble of the last turn (window minus reserve minus system prompt); the
 * host's window (`tokenBudget` at compact and maintain) is only a fallback, less the reply reserve the host
 * keeps. On overflow the host reports how many tokens the prompt really had: at least that excess is shed.
 */

export interface BudgetSources {
  /** conversations.last_token_budget: the first assemble budget of the last turn. */
  lastTokenBudget: number | null;
  /** compact's `tokenBudget` (the model window). */
  hostTokenBudget?: number | undefined;
  /** runtimeContext.tokenBudget (the model window). */
  runtimeTokenBudget?: number | undefined;
  defaultTokenBudget: number;
}

export interface ResolvedBudget {
  tokens: number;
  /** "assemble" when it already excludes the reply reserve and the system prompt. */
  source: "assemble" | "host" | "default";
}

export function resolveBudget(sources: BudgetSources): ResolvedBudget {
  const fromAssemble = positive(sources.lastTokenBudget);
  if (fromAssemble !== undefined) return { tokens: fromAssemble, source: "assemble" };
  const fromHost = positive(sources.hostTokenBudget) ?? positive(sources.runtimeTokenBudget);
  if (fromHost !== undefined) return { tokens: fromHost, source: "host" };
  return { tokens: sources.defaultTokenBudget, source: "default" };
}

/** The reply reserve OpenClaw keeps out of a window: 20,000 tokens, at most a quarter of the window. */
export function replyReserve(windowTokens: number): number {
  return Math.min(20_000, Math.floor(windowTokens / 4));
}

/** contextThreshold x budget: above it, a full sweep runs after the turn. */
export function thresholdTarget(budget: ResolvedBudget, contextThreshold: number): number {
  return Math.max(1, Math.floor(budget.tokens * contextThreshold));
}

/**
 * The target of budget-mode compaction (overflow recovery): the prompt budget, leaving room for the reply; when
 * the host measured the real prompt (`currentTokenCount`) above its limit, also at least that excess below the
 * current context.
 */
export function budgetTarget(input: {
  budget: ResolvedBudget;
  contextTokens: number;
  currentTokenCount?: number | undefined;
  windowTokens?: number | undefined;
}): { targetTokens: number; excessTokens: number } {
  const base = input.budget.source === "assemble" ? input.budget.tokens : input.budget.tokens - replyReserve(input.budget.tokens);
  const window = positive(input.windowTokens) ?? input.budget.tokens;
  const current = positive(input.currentTokenCount);
  const excessTokens = current === undefined ? 0 : Math.max(0, current - (window - replyReserve(window)));
  const targetTokens = excessTokens > 0 ? Math.min(base, input.contextTokens - excessTokens) : base;
  return { targetTokens: Math.max(1, targetTokens), excessTokens };
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}
