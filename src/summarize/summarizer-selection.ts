/**
 * Picks the summarizer for one compaction, in order: the session's host model (`runtimeContext.llm`, passed to
 * compact and maintain), the plugin-wide host model (`api.runtime.llm`), the standalone Anthropic client
 * (ANTHROPIC_API_KEY + summaryModel, for use outside OpenClaw), and finally the deterministic extractive
 * summarizer, so compaction works even with no model at all. Each choice has a key naming its circuit breaker.
 */
import type { LcmConfig } from "../config.js";
import type { CompletionModel, Summarizer, TokenEstimator } from "../contracts.js";
import { AnthropicSummarizer } from "./anthropic-summarizer.js";
import { ExtractiveSummarizer } from "./extractive-summarizer.js";
import { HostLlmSummarizer, hostModelRef } from "./host-llm-summarizer.js";

export interface SelectedSummarizer {
  /** Names the process-wide circuit breaker of this summarizer. */
  key: string;
  summarizer: Summarizer;
}

/** Returns the summarizer to use, given the session's model when the caller has one (a hook's runtimeContext.llm). */
export type SummarizerSelector = (sessionLlm?: CompletionModel) => SelectedSummarizer;

export interface SummarizerSelectionDeps {
  config: Pick<LcmConfig, "summaryModel" | "summaryProvider" | "summaryTimeoutMs">;
  tokens: TokenEstimator;
  /** The plugin-wide model (`api.runtime.llm` in OpenClaw), when there is one. */
  pluginLlm?: CompletionModel | undefined;
  env?: NodeJS.ProcessEnv;
}

export function createSummarizerSelector(deps: SummarizerSelectionDeps): SummarizerSelector {
  const model = hostModelRef(deps.config);
  const hostSummarizer = (llm: CompletionModel): SelectedSummarizer => ({
    key: "host-llm",
    summarizer: new HostLlmSummarizer({ llm, ...(model ? { model } : {}) }),
  });
  const apiKey = deps.env?.ANTHROPIC_API_KEY?.trim();
  const anthropicModel = deps.config.summaryModel?.trim();
  let standalone: SelectedSummarizer | undefined;
  const fallback = (): SelectedSummarizer => {
    standalone ??= apiKey && anthropicModel
      ? {
          key: `anthropic:${anthropicModel}`,
          summarizer: new AnthropicSummarizer({ apiKey, model: anthropicModel, timeoutMs: deps.config.summaryTimeoutMs }),
        }
      : { key: "extractive", summarizer: new ExtractiveSummarizer({ tokens: deps.tokens }) };
    return standalone;
  };
  return (sessionLlm) => {
    if (isHostLlm(sessionLlm)) return hostSummarizer(sessionLlm);
    if (isHostLlm(deps.pluginLlm)) return hostSummarizer(deps.pluginLlm);
    return fallback();
  };
}

function isHostLlm(value: unknown): value is CompletionModel {
  return typeof (value as { complete?: unknown } | null | undefined)?.complete === "function";
}
