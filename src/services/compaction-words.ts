/**
 * What a user reads about a compaction (specs/016-session-lifecycle.md, "Words"): compact's answer, which OpenClaw
 * shows after /compact, and `/lcm compact`. Short and plain, with the same numbers `/lcm status` shows: the context
 * the model sees, the budget the conversation may use (the budget compaction works toward), and where automatic
 * compaction starts. The run's mechanics (passes, levels, rounds) go to the log and to the result's details.
 *
 * The first words of a no-change answer are the ones OpenClaw recognises as a benign skip ("already under target",
 * "nothing to compact"); it shows its own sentence for those, so they stay, except for /compact (spec 023): OpenClaw
 * would put its own figures (its whole request against the window) after its generic sentence, so the answer to an
 * explicit /compact that found nothing older to summarize says so in LCM's words and figures, which OpenClaw shows.
 */

export interface CompactionFigures {
  tokensBefore: number;
  tokensAfter: number;
  /** The budget the conversation's context may use (what compaction works toward; /lcm status shows it). */
  budgetTokens: number;
  /** Where automatic compaction starts: contextThreshold x budget. */
  thresholdTokens: number;
  summariesWritten: number;
}

export function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/**
 * "LCM's context uses 6,020 tokens of its 12,163-token budget": the context LCM keeps (summaries and recent messages)
 * against the budget /lcm status shows; never OpenClaw's whole request against the window.
 */
export function contextAgainstBudget(contextTokens: number, budgetTokens: number): string {
  return `LCM's context uses ${count(contextTokens)} tokens of its ${count(budgetTokens)}-token budget`;
}

export function compactedText(figures: CompactionFigures): string {
  const summaries = figures.summariesWritten === 1 ? "1 summary" : `${count(figures.summariesWritten)} summaries`;
  return `${summaries} written; ${contextAgainstBudget(figures.tokensAfter, figures.budgetTokens)}`;
}

export function underTargetText(contextTokens: number, budgetTokens: number, thresholdTokens: number): string {
  return `already under target: ${contextAgainstBudget(contextTokens, budgetTokens)}; LCM compacts above ${count(thresholdTokens)}`;
}

/** Over the target and nothing left to summarize: what remains is the newest messages, kept as they are. */
export function nothingHelpsText(figures: CompactionFigures): string {
  return `nothing to compact that would help: ${contextAgainstBudget(figures.tokensAfter, figures.budgetTokens)}, all of it ` +
    "recent messages kept as they are; each turn still gets the newest that fit, and everything stays searchable with lcm_grep";
}

/** Another run (this gateway's or another's) holds the conversation's compaction lease: this one did not start. */
export function elsewhereText(figures: CompactionFigures): string {
  return `another compaction of this conversation is running now (on this gateway or another), so this one did not start; ` +
    contextAgainstBudget(figures.tokensAfter, figures.budgetTokens);
}

export function abortedText(figures: CompactionFigures): string {
  const done = figures.summariesWritten > 0 ? ` after ${count(figures.summariesWritten)} of its summaries` : "";
  return `compaction aborted by OpenClaw${done}; ${contextAgainstBudget(figures.tokensAfter, figures.budgetTokens)}`;
}

/**
 * /compact found nothing older than its small tail to summarize. Not OpenClaw's benign words on purpose: OpenClaw then
 * shows this text (with LCM's figures) instead of its generic sentence.
 */
export function manualNothingOlderText(figures: CompactionFigures, tailMessages: number): string {
  return `only the newest ${count(tailMessages)} messages and summaries that cannot be merged further are left, and /compact ` +
    `keeps those as they are: ${contextAgainstBudget(figures.tokensAfter, figures.budgetTokens)}`;
}

export const PENDING_TURN_TOO_LARGE_TEXT =
  "the current turn (its message and this turn's tool results) is larger than the model's window allows beside OpenClaw's " +
  "own prompt and tools, whatever LCM sends (only its memory floor); compacting the history cannot make it fit: ask for " +
  "smaller tool output, or use a model with a larger window";

export const PROMPT_TOO_LARGE_TEXT =
  "the current message alone is larger than the model's window allows; LCM stores it and shows later turns a shortened form";

/** `/lcm compact`'s reply, from what the host's compaction answered. */
export function compactCommandReply(result: {
  compacted: boolean; reason?: string | undefined; tokensBefore?: number | undefined; tokensAfter?: number | undefined;
}): string {
  const reason = result.reason?.trim();
  const tokens = result.tokensBefore !== undefined && result.tokensAfter !== undefined
    ? `${count(result.tokensBefore)} → ${count(result.tokensAfter)} tokens`
    : undefined;
  if (result.compacted) return `Compacted${reason ? `: ${reason}` : tokens ? `: ${tokens}` : ""}.`;
  if (!reason) return "Nothing compacted.";
  const benign = /^(already under target|nothing to compact(?: that would help)?):\s*/i.exec(reason);
  if (benign) return `Nothing compacted: ${reason.slice(benign[0].length)}.`;
  if (/^only the newest /.test(reason)) return `Nothing compacted: ${reason}.`;
  return `Not compacted: ${reason}.`;
}
