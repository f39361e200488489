import { describe, expect, it } from "vitest";
import { AnthropicSummarizer } from "../../src/summarize/anthropic-summarizer.js";
import { ExtractiveSummarizer } from "../../src/summarize/extractive-summarizer.js";
import { HostLlmSummarizer, hostModelRef } from "../../src/summarize/host-llm-summarizer.js";
import { createSummarizerSelector } from "../../src/summarize/summarizer-selection.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";

const tokens = new WordTokenEstimator();
const config = { summaryModel: undefined, summaryProvider: undefined, summaryTimeoutMs: 60_000 };

describe("createSummarizerSelector", () => {
  it("prefers the session's host model, then api.runtime.llm", async () => {
    const sessionLlm = new RecordingLlm(() => "from the session");
    const pluginLlm = new RecordingLlm(() => "from the plugin api");
    const select = createSummarizerSelector({ config, tokens, pluginLlm, env: {} });
    const request = { sourceText: "x", depth: 0, mode: "normal" as const, targetTokens: 10 };
    expect(await select(sessionLlm).summarizer.summarize(request, new AbortController().signal)).toBe("from the session");
    expect(await select().summarizer.summarize(request, new AbortController().signal)).toBe("from the plugin api");
    expect(select().key).toBe("host-llm");
  });

  it("uses the standalone Anthropic client when ANTHROPIC_API_KEY and a summary model are set", () => {
    const select = createSummarizerSelector({
      config: { ...config, summaryModel: "claude-fake" }, tokens, env: { ANTHROPIC_API_KEY: "sk-test" },
    });
    expect(select().summarizer).toBeInstanceOf(AnthropicSummarizer);
    expect(select().key).toBe("anthropic:claude-fake");
  });

  it("falls back to the extractive summarizer when no model is reachable", () => {
    const select = createSummarizerSelector({ config, tokens, env: { ANTHROPIC_API_KEY: "sk-test" } });
    expect(select().summarizer).toBeInstanceOf(ExtractiveSummarizer);
    expect(select({} as never).summarizer).toBeInstanceOf(ExtractiveSummarizer);
  });

  it("builds the host model reference from summaryModel and summaryProvider", () => {
    expect(hostModelRef({ summaryModel: undefined, summaryProvider: "anthropic" })).toBeUndefined();
    expect(hostModelRef({ summaryModel: "openai/gpt-x", summaryProvider: "anthropic" })).toBe("openai/gpt-x");
    expect(hostModelRef({ summaryModel: "haiku", summaryProvider: "anthropic" })).toBe("anthropic/haiku");
    expect(hostModelRef({ summaryModel: "haiku", summaryProvider: undefined })).toBe("haiku");
    expect(new HostLlmSummarizer({ llm: new RecordingLlm() })).toBeDefined();
  });
});
