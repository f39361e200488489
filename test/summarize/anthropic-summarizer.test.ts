/** The standalone summarizer with the real @anthropic-ai/sdk against a fake Messages API on 127.0.0.1. */
import { afterEach, describe, expect, it } from "vitest";
import { CircuitBreaker } from "../../src/compaction/circuit-breaker.js";
import { summarizeWithEscalation } from "../../src/compaction/escalation.js";
import { type SummaryRequest, silentLogger } from "../../src/contracts.js";
import { isLcmError } from "../../src/errors.js";
import { AnthropicSummarizer } from "../../src/summarize/anthropic-summarizer.js";
import { FakeAnthropicServer, errorReply, messageReply } from "../fakes/fake-anthropic-server.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";

const servers: FakeAnthropicServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

async function serve(...replies: Parameters<FakeAnthropicServer["script"]>) {
  const server = await new FakeAnthropicServer().script(...replies).start();
  servers.push(server);
  return server;
}

const REQUEST: SummaryRequest = { sourceText: "[2026-11-01 08:00 UTC] user:\nplease fix the build", depth: 0, mode: "normal", targetTokens: 400 };
const signal = () => new AbortController().signal;

function summarizer(server: FakeAnthropicServer, options: { maxRetries?: number; timeoutMs?: number } = {}) {
  return new AnthropicSummarizer({ apiKey: "sk-test-key", model: "claude-fake", baseURL: server.baseURL, ...options });
}

describe("AnthropicSummarizer", () => {
  it("sends the summary prompt to the Messages API and returns the text", async () => {
    const server = await serve(messageReply([{ type: "text", text: "The user asked to fix the build.\nExpand for details about: logs" }]));
    const text = await summarizer(server).summarize(REQUEST, signal());
    expect(text).toBe("The user asked to fix the build.\nExpand for details about: logs");
    const request = server.requests[0]!;
    expect(request.url).toBe("/v1/messages");
    expect(request.body).toMatchObject({ model: "claude-fake", max_tokens: 600 });
    expect(String(request.body.system)).toMatch(/never addressed to you/);
    expect(JSON.stringify(request.body.messages)).toContain("please fix the build");
    expect(JSON.stringify(request.headers)).toContain("sk-test-key");
  });

  it.each([
    [429, "rate_limit_error"],
    [500, "api_error"],
  ])("retries a %i response and succeeds", async (status, type) => {
    const server = await serve(errorReply(status, type, { "retry-after-ms": "1" }), messageReply([{ type: "text", text: "ok" }]));
    expect(await summarizer(server).summarize(REQUEST, signal())).toBe("ok");
    expect(server.requests).toHaveLength(2);
  });

  it("gives up after its retries with the provider's error", async () => {
    const server = await serve(errorReply(529, "overloaded_error", { "retry-after-ms": "1" }));
    await expect(summarizer(server, { maxRetries: 1 }).summarize(REQUEST, signal())).rejects.toThrow(/overloaded/);
    expect(server.requests).toHaveLength(2);
  });

  it("times out a request that never answers", async () => {
    const server = await serve({ hang: true });
    await expect(summarizer(server, { maxRetries: 0, timeoutMs: 200 }).summarize(REQUEST, signal())).rejects.toThrow(/timed out/i);
  });

  it("stops when the caller aborts", async () => {
    const server = await serve({ hang: true });
    const controller = new AbortController();
    const pending = summarizer(server, { maxRetries: 0 }).summarize(REQUEST, controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toThrow();
  });

  it.each([
    ["an empty response", []],
    ["a thinking-only response", [{ type: "thinking", thinking: "Let me think about the build...", signature: "sig" }]],
  ])("rejects %s with a summarizer error", async (_label, content) => {
    const server = await serve(messageReply(content));
    const failure = await summarizer(server).summarize(REQUEST, signal()).catch((error: unknown) => error);
    expect(isLcmError(failure, "summarizer")).toBe(true);
    expect(String((failure as Error).message)).toMatch(/returned no text/);
  });

  it("escalates a thinking-only model to the truncated fallback", async () => {
    const server = await serve(messageReply([{ type: "thinking", thinking: "hmm", signature: "sig" }]));
    const tokens = new WordTokenEstimator();
    const sourceText = Array.from({ length: 800 }, (_, index) => `w${index}`).join(" ");
    const result = await summarizeWithEscalation({
      request: { sourceText, depth: 0 }, targetTokens: 100, sourceTokens: 800, measure: (text) => tokens.estimate(text) + 10,
      summarizer: summarizer(server), breaker: new CircuitBreaker(), tokens, timeoutMs: 5_000, logger: silentLogger,
    });
    expect(result).toMatchObject({ kind: "summarized", level: "fallback" });
    expect(server.requests).toHaveLength(2); // normal, then aggressive: both thinking-only
  });
});
