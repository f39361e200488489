/**
 * The summarizer of one compaction run, host-free: chosen by the selector (the session's model, the plugin-wide
 * model, the standalone client, else the deterministic extractive summarizer), then wrapped so every call is
 * counted and timed (metrics) and failures are logged with the run's fields, and, for a model, guarded by the
 * spend guard: past the conversation's cap a call is answered by the deterministic summarizer instead, so
 * compaction always finishes and the run says how many summaries were written that way.
 */
import type { Clock, CompletionModel, Logger, Summarizer, SummaryRequest } from "../contracts.js";
import { describeError } from "../errors.js";
import type { LcmMetrics } from "../metrics/lcm-metrics.js";
import type { SummarizerSelector } from "../summarize/summarizer-selection.js";
import type { SpendGuard, SpendLimits } from "./spend-guard.js";

/** The selector's key of the deterministic summarizer (no model, no cost). */
export const DETERMINISTIC_SUMMARIZER = "extractive";

export interface SummarizationDeps {
  select: SummarizerSelector;
  /** Answers calls the spend guard refuses: the deterministic summarizer. */
  deterministic: Summarizer;
  guard: SpendGuard;
  limits: SpendLimits;
  metrics: LcmMetrics;
  clock: Clock;
  logger: Logger;
}

export interface RunSummarizerRequest {
  /** The spend guard's key of the conversation (spend-guard.ts spendKey). */
  spendKey: string;
  /** The session's model, when the caller has one (a hook's runtimeContext.llm). */
  sessionModel?: CompletionModel | undefined;
  /** Called after each call that returned a summary (progress of a long run). */
  onSummary?: () => void;
}

/** The summarizer of one run and what it did. */
export interface RunSummarizer {
  /** The selector's key: names the circuit breaker and the metrics series. */
  key: string;
  summarizer: Summarizer;
  /** Whether the chosen summarizer calls a model (and so counts against the spend guard). */
  usesModel: boolean;
  /** Calls answered by the deterministic summarizer because the conversation was at the spend guard's cap. */
  divertedCalls(): number;
}

export class SummarizationService {
  constructor(private readonly deps: SummarizationDeps) {}

  forRun(request: RunSummarizerRequest): RunSummarizer {
    const selected = this.deps.select(request.sessionModel);
    const usesModel = selected.key !== DETERMINISTIC_SUMMARIZER;
    let diverted = 0;
    const deps = this.deps;
    const timed = (key: string, inner: Summarizer): Summarizer => ({
      summarize: (summaryRequest, signal) => timeCall(key, inner, summaryRequest, signal, deps, request.onSummary),
    });
    const measured = timed(selected.key, selected.summarizer);
    const deterministic = timed(DETERMINISTIC_SUMMARIZER, deps.deterministic);
    const summarizer: Summarizer = !usesModel ? measured : {
      summarize: (summaryRequest, signal) => {
        if (deps.guard.tryAcquire(request.spendKey, deps.limits, deps.clock.now())) return measured.summarize(summaryRequest, signal);
        diverted++;
        deps.metrics.spendGuardDiverted.inc();
        if (diverted === 1) {
          deps.logger.warn(
            `spend guard: this conversation made ${deps.limits.maxCalls} summarizer model calls within ` +
              `${Math.round(deps.limits.windowMs / 60_000)} min (maxSummaryCallsPerWindow); compaction writes deterministic summaries until calls leave the window`,
            { summarizer: selected.key, max_calls: deps.limits.maxCalls, window_minutes: Math.round(deps.limits.windowMs / 60_000) },
          );
        }
        return deterministic.summarize(summaryRequest, signal);
      },
    };
    return { key: selected.key, summarizer, usesModel, divertedCalls: () => diverted };
  }
}

/**
 * One call, counted and timed. The outcome is settled once: when the call resolves or rejects, or when its signal
 * aborts (the escalation abandons a call at its timeout and does not wait for a summarizer that ignores the signal).
 */
async function timeCall(
  key: string, inner: Summarizer, request: SummaryRequest, signal: AbortSignal, deps: SummarizationDeps, onSummary?: () => void,
): Promise<string> {
  const started = performance.now();
  let settled = false;
  const settle = (outcome: "ok" | "failed" | "timeout" | "aborted", detail?: string) => {
    if (settled) return;
    settled = true;
    deps.metrics.summarizerCalls.inc({ summarizer: key, outcome });
    deps.metrics.summarizerLatency.observe({ summarizer: key }, performance.now() - started);
    if (outcome === "failed" || outcome === "timeout") {
      deps.logger.warn(`summarizer call ${outcome === "timeout" ? "timed out" : "failed"}: ${detail ?? "no detail"}`, {
        summarizer: key, outcome, depth: request.depth, mode: request.mode,
      });
    }
  };
  const onAbort = () => settle(/timed out/i.test(describeError(signal.reason)) ? "timeout" : "aborted", describeError(signal.reason));
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const text = await inner.summarize(request, signal);
    settle("ok");
    onSummary?.();
    return text;
  } catch (error) {
    settle(signal.aborted ? "aborted" : "failed", describeError(error));
    throw error;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
