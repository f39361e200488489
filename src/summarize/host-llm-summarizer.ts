/**
 * A Summarizer backed by the host's model: `runtimeContext.llm.complete` (session-bound, passed to compact and
 * maintain) or `api.runtime.llm.complete` (plugin-wide). The configured summaryModel/summaryProvider are passed
 * through as `model`; without them the host picks its default model.
 */
import type { LcmConfig } from "../config.js";
import type { CompletionModel, Summarizer, SummaryRequest } from "../contracts.js";
import { LcmError } from "../errors.js";
import { buildSummaryPrompt, maxOutputTokens, temperatureFor } from "./summary-prompts.js";

export const SUMMARY_PURPOSE = "lcm-summary";

export interface HostLlmSummarizerDeps {
  llm: CompletionModel;
  /** "provider/model", or a bare model id; undefined lets the host choose. */
  model?: string;
}

export class HostLlmSummarizer implements Summarizer {
  constructor(private readonly deps: HostLlmSummarizerDeps) {}

  async summarize(request: SummaryRequest, signal: AbortSignal): Promise<string> {
    const prompt = buildSummaryPrompt(request);
    const result: unknown = await this.deps.llm.complete({
      messages: [{ role: "user", content: prompt.userPrompt }],
      systemPrompt: prompt.systemPrompt,
      maxTokens: maxOutputTokens(request.targetTokens),
      temperature: temperatureFor(request),
      ...(this.deps.model ? { model: this.deps.model } : {}),
      signal,
      purpose: SUMMARY_PURPOSE,
    });
    const text = (result as { text?: unknown } | null)?.text;
    if (typeof text !== "string") {
      throw new LcmError("summarizer", "The host model returned a result without a `text` string; expected { text }.");
    }
    return text;
  }
}

/** The `model` to pass to the host: summaryModel as "provider/model", joined with summaryProvider when needed. */
export function hostModelRef(config: Pick<LcmConfig, "summaryModel" | "summaryProvider">): string | undefined {
  const model = config.summaryModel?.trim();
  if (!model) return undefined;
  if (model.includes("/")) return model;
  const provider = config.summaryProvider?.trim();
  return provider ? `${provider}/${model}` : model;
}
