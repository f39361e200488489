/**
 * A standalone Summarizer for use outside OpenClaw: the Anthropic Messages API through `@anthropic-ai/sdk`,
 * configured by ANTHROPIC_API_KEY and LCM_SUMMARY_MODEL. The SDK retries 429 and 5xx responses (honouring
 * retry-after) and bounds each request with `timeoutMs`; the caller's signal cancels it. A response with no
 * text (empty, or only thinking blocks) is an error, so the caller escalates. The SDK is imported on first use:
 * loading it costs about 0.3 s, which a gateway that summarizes with its own model should never pay.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { Summarizer, SummaryRequest } from "../contracts.js";
import { describeError, LcmError } from "../errors.js";
import { buildSummaryPrompt, maxOutputTokens } from "./summary-prompts.js";

export interface AnthropicSummarizerOptions {
  apiKey: string;
  model: string;
  /** Defaults to the SDK's (ANTHROPIC_BASE_URL, else the public API); tests point it at a local server. */
  baseURL?: string;
  /** Retries of 408/409/429/5xx and connection errors. */
  maxRetries?: number;
  /** Per-request timeout in milliseconds. */
  timeoutMs?: number;
}

export class AnthropicSummarizer implements Summarizer {
  private client: Promise<Anthropic> | undefined;

  constructor(private readonly options: AnthropicSummarizerOptions) {}

  private connect(): Promise<Anthropic> {
    // Not a dependency of the plugin package (OpenClaw copies a plugin's dependencies on every load and deletes the
    // copy when it retires the plugin; inside OpenClaw the host's model writes summaries): install it to use this.
    this.client ??= (import("@anthropic-ai/sdk" as string) as Promise<typeof import("@anthropic-ai/sdk")>).then(
      ({ default: AnthropicClient }) =>
        new AnthropicClient({
          apiKey: this.options.apiKey,
          ...(this.options.baseURL ? { baseURL: this.options.baseURL } : {}),
          maxRetries: this.options.maxRetries ?? 2,
          timeout: this.options.timeoutMs ?? 60_000,
        }),
      (error: unknown) => {
        this.client = undefined;
        throw new LcmError("summarizer",
          `The Anthropic SDK is not installed (${describeError(error)}); summaries fall back to truncation. Fix: npm install @anthropic-ai/sdk.`);
      },
    );
    return this.client;
  }

  async summarize(request: SummaryRequest, signal: AbortSignal): Promise<string> {
    const prompt = buildSummaryPrompt(request);
    const client = await this.connect();
    const response = await client.messages.create(
      {
        model: this.options.model,
        max_tokens: maxOutputTokens(request.targetTokens),
        system: prompt.systemPrompt,
        messages: [{ role: "user", content: prompt.userPrompt }],
      },
      { signal },
    );
    const blocks = Array.isArray(response.content) ? response.content : [];
    const text = blocks
      .flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : []))
      .join("\n")
      .trim();
    if (text === "") {
      const kinds = blocks.map((block) => block.type).join(", ") || "none";
      throw new LcmError(
        "summarizer",
        `Anthropic model ${this.options.model} returned no text (content blocks: ${kinds}; stop_reason: ${String(response.stop_reason)}). ` +
          "Use a model that answers in text, or disable extended thinking for summaries.",
      );
    }
    return text;
  }
}
