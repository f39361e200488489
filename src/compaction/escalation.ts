/**
 * Three-level escalation, with a guarantee: the normal prompt, then the aggressive prompt with a lower target,
 * then deterministic truncation. The first level whose output costs fewer context tokens than the items it
 * replaces wins, so every pass makes progress whatever the model does. Errors, timeouts (summaryTimeoutMs),
 * empty and reasoning-only output escalate and count against the circuit breaker; an abort from the caller
 * stops the pass and writes nothing.
 */
import type { Logger, Summarizer, SummaryMode, SummaryRequest, TokenEstimator } from "../contracts.js";
import { describeError } from "../errors.js";
import type { SummaryLevel } from "../records.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import { cleanSummaryOutput } from "./summary-output.js";
import { USEFUL_SUMMARY_TOKENS } from "./compaction-targets.js";
import { FALLBACK_TARGET_TOKENS, truncateForFallback } from "./truncation.js";

/** The aggressive level aims at this fraction of the normal target, never below USEFUL_SUMMARY_TOKENS (or the target). */
export const AGGRESSIVE_TARGET_RATIO = 0.5;

export interface EscalationInput {
  request: Omit<SummaryRequest, "mode" | "targetTokens">;
  targetTokens: number;
  /** Size of the deterministic fallback summary (the last level). */
  fallbackTokens?: number;
  /** Context tokens of the items the summary replaces: the output must cost less. */
  sourceTokens: number;
  /** Context tokens the summary would cost with this text (content plus its wrapper). */
  measure: (text: string) => number;
  summarizer: Summarizer;
  breaker: CircuitBreaker;
  tokens: TokenEstimator;
  /** Longest wait for one summarizer call, in milliseconds. */
  timeoutMs: number;
  signal?: AbortSignal;
  logger: Logger;
}

export type AttemptOutcome = "accepted" | "too-long" | "empty" | "failed" | "timeout" | "skipped";

export interface Attempt {
  mode: SummaryMode;
  outcome: AttemptOutcome;
  detail?: string;
}

export type EscalationResult =
  | { kind: "summarized"; text: string; level: SummaryLevel; attempts: Attempt[] }
  | { kind: "aborted"; attempts: Attempt[] }
  /** Even the truncated fallback would not be smaller than the sources: nothing worth replacing. */
  | { kind: "not-reducible"; attempts: Attempt[] };

export async function summarizeWithEscalation(input: EscalationInput): Promise<EscalationResult> {
  const attempts: Attempt[] = [];
  const modes: [SummaryMode, number][] = [
    ["normal", input.targetTokens],
    ["aggressive", aggressiveTarget(input.targetTokens)],
  ];
  for (const [mode, targetTokens] of modes) {
    if (input.signal?.aborted) return { kind: "aborted", attempts };
    if (!input.breaker.allowsCall()) {
      attempts.push({ mode, outcome: "skipped", detail: "summarizer circuit is open" });
      continue;
    }
    const call = await callWithTimeout(input, { ...input.request, mode, targetTokens });
    if (call.kind === "aborted") return { kind: "aborted", attempts };
    if (call.kind !== "text") {
      input.breaker.recordFailure();
      attempts.push({ mode, outcome: call.kind, detail: call.detail });
      continue;
    }
    const cleaned = cleanSummaryOutput(call.text);
    if (cleaned.kind === "empty") {
      input.breaker.recordFailure();
      attempts.push({ mode, outcome: "empty", detail: cleaned.reason });
      continue;
    }
    input.breaker.recordSuccess();
    const cost = input.measure(cleaned.text);
    if (cost >= input.sourceTokens) {
      attempts.push({ mode, outcome: "too-long", detail: `${cost} tokens for ${input.sourceTokens} tokens of sources` });
      continue;
    }
    attempts.push({ mode, outcome: "accepted" });
    return { kind: "summarized", text: cleaned.text, level: mode, attempts };
  }
  if (input.signal?.aborted) return { kind: "aborted", attempts };
  // At most half the sources: a fallback as large as a small chunk would not be smaller than it, and the chunk would be
  // tried again, with the model, every turn (the spend guard then stops it).
  const truncated = truncateForFallback(
    input.request.sourceText,
    Math.min(input.fallbackTokens ?? FALLBACK_TARGET_TOKENS, Math.max(1, Math.floor(input.sourceTokens / 2))),
    input.tokens,
    (text) => input.measure(text) < input.sourceTokens,
  );
  if (truncated === null) return { kind: "not-reducible", attempts };
  input.logger.warn("summarizer output unusable; stored a truncated fallback summary", {
    attempts: attempts.map((attempt) => `${attempt.mode}:${attempt.outcome}${attempt.detail ? ` (${attempt.detail})` : ""}`),
  });
  return { kind: "summarized", text: truncated, level: "fallback", attempts };
}

/** Half the normal target, but no less than a useful summary (or the normal target itself, when a setting made it smaller). */
export function aggressiveTarget(targetTokens: number): number {
  return Math.max(Math.min(targetTokens, USEFUL_SUMMARY_TOKENS), Math.floor(targetTokens * AGGRESSIVE_TARGET_RATIO));
}

type CallResult =
  | { kind: "text"; text: unknown }
  | { kind: "failed" | "timeout"; detail: string }
  | { kind: "aborted" };

/**
 * One summarizer call bounded by `timeoutMs` and the caller's signal. The race does not trust the summarizer to
 * honour its signal: a call that ignores it is abandoned, and its late result is dropped.
 */
async function callWithTimeout(input: EscalationInput, request: SummaryRequest): Promise<CallResult> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<CallResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`summarizer call timed out after ${input.timeoutMs} ms`));
      resolve({ kind: "timeout", detail: `no answer within ${input.timeoutMs} ms` });
    }, input.timeoutMs);
    onAbort = () => {
      controller.abort(input.signal?.reason);
      resolve({ kind: "aborted" });
    };
    if (input.signal?.aborted) onAbort();
    else input.signal?.addEventListener("abort", onAbort, { once: true });
  });
  const called = (async (): Promise<CallResult> => {
    try {
      return { kind: "text", text: await input.summarizer.summarize(request, controller.signal) };
    } catch (error) {
      return { kind: "failed", detail: describeError(error) };
    }
  })();
  try {
    return await Promise.race([called, stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort) input.signal?.removeEventListener("abort", onAbort);
  }
}
