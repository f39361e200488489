import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "../../src/compaction/circuit-breaker.js";
import { type EscalationInput, summarizeWithEscalation } from "../../src/compaction/escalation.js";
import { TRUNCATION_MARKER } from "../../src/compaction/truncation.js";
import { silentLogger } from "../../src/contracts.js";
import { FakeSummarizer, hang } from "../fakes/fake-summarizer.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";

const tokens = new WordTokenEstimator();
const SOURCE = Array.from({ length: 300 }, (_, index) => `word${index}`).join(" ");

function input(summarizer: FakeSummarizer, overrides: Partial<EscalationInput> = {}): EscalationInput {
  return {
    request: { sourceText: SOURCE, depth: 0 },
    targetTokens: 100,
    // 300 source words; the summary costs its words plus a 10-token wrapper.
    sourceTokens: 300,
    measure: (text) => tokens.estimate(text) + 10,
    summarizer,
    breaker: new CircuitBreaker(),
    tokens,
    timeoutMs: 50,
    logger: silentLogger,
    ...overrides,
  };
}

describe("summarizeWithEscalation", () => {
  it("keeps the normal summary when it is smaller than its sources", async () => {
    const summarizer = new FakeSummarizer(() => "short summary\nExpand for details about: words");
    const result = await summarizeWithEscalation(input(summarizer));
    expect(result).toMatchObject({ kind: "summarized", level: "normal" });
    expect(summarizer.requests.map((request) => request.mode)).toEqual(["normal"]);
  });

  it("escalates to the aggressive prompt with a lower target when the output is not smaller", async () => {
    const summarizer = new FakeSummarizer((request) => (request.mode === "normal" ? `${SOURCE} ${SOURCE}` : "tiny"));
    const result = await summarizeWithEscalation(input(summarizer, { targetTokens: 400 }));
    expect(result).toMatchObject({ kind: "summarized", level: "aggressive" });
    expect(summarizer.requests.map((request) => [request.mode, request.targetTokens])).toEqual([["normal", 400], ["aggressive", 200]]);
  });

  it.each([
    // Half of 200 would be 100: the aggressive level asks for a useful 128 instead (no "at most about 32 tokens").
    [200, 128],
    // A target a setting made smaller than that is not lowered further.
    [100, 100],
  ])("never asks the aggressive level for less than a useful summary (target %i: %i)", async (target, aggressive) => {
    const summarizer = new FakeSummarizer((request) => (request.mode === "normal" ? `${SOURCE} ${SOURCE}` : "tiny"));
    await summarizeWithEscalation(input(summarizer, { targetTokens: target }));
    expect(summarizer.requests.map((request) => request.targetTokens)).toEqual([target, aggressive]);
  });

  it.each([
    ["empty text", () => "   "],
    ["reasoning only", () => "<think>I should summarize this carefully</think>"],
    ["a thrown error", () => { throw new Error("model exploded"); }],
    ["longer output", () => `${SOURCE} ${SOURCE}`],
  ])("falls back to marked truncation after %s at both levels", async (_label, respond) => {
    const result = await summarizeWithEscalation(input(new FakeSummarizer(respond)));
    expect(result.kind).toBe("summarized");
    if (result.kind !== "summarized") return;
    expect(result.level).toBe("fallback");
    expect(result.text.startsWith(TRUNCATION_MARKER)).toBe(true);
    expect(tokens.estimate(result.text) + 10).toBeLessThan(300);
    expect(result.text).toMatch(/Expand for details about:/);
  });

  it("abandons a summarizer that hangs past the timeout and ignores its signal", async () => {
    const result = await summarizeWithEscalation(input(new FakeSummarizer(() => hang())));
    expect(result).toMatchObject({ kind: "summarized", level: "fallback" });
    if (result.kind === "summarized") expect(result.attempts.map((attempt) => attempt.outcome)).toEqual(["timeout", "timeout"]);
  });

  it("strips reasoning blocks and adds the expand line when the model left it out", async () => {
    const result = await summarizeWithEscalation(input(new FakeSummarizer(() => "<thinking>hmm</thinking>The gist.")));
    expect(result).toMatchObject({ kind: "summarized", level: "normal" });
    if (result.kind === "summarized") expect(result.text).toBe("The gist.\n\nExpand for details about: the source messages of this summary");
  });

  it("stops without a summary when the caller aborts", async () => {
    const controller = new AbortController();
    const summarizer = new FakeSummarizer(() => {
      controller.abort();
      return hang();
    });
    const result = await summarizeWithEscalation(input(summarizer, { signal: controller.signal }));
    expect(result.kind).toBe("aborted");
    expect(summarizer.requests).toHaveLength(1);
  });

  it("reports not-reducible when even the truncated fallback would not be smaller", async () => {
    const result = await summarizeWithEscalation(input(new FakeSummarizer(() => ""), { sourceTokens: 12 }));
    expect(result.kind).toBe("not-reducible");
  });

  it("truncates a small chunk to half its sources at most, so it is reduced once, not tried again every turn", async () => {
    // 300 source words and a 250-token fallback setting: a 250-word truncation and its wrapper would not be smaller.
    const result = await summarizeWithEscalation(input(new FakeSummarizer(() => ""), { fallbackTokens: 250 }));
    expect(result).toMatchObject({ kind: "summarized", level: "fallback" });
    if (result.kind !== "summarized") return;
    expect(tokens.estimate(result.text)).toBeLessThanOrEqual(150);
    expect(result.text).toContain(TRUNCATION_MARKER);
  });

  it("skips the model while the circuit is open and goes straight to truncation", async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 2, coolDownMs: 1_000, now: () => now });
    const failing = new FakeSummarizer(() => { throw new Error("down"); });
    await summarizeWithEscalation(input(failing, { breaker })); // two failures: opens
    expect(breaker.state()).toBe("open");
    const skipped = new FakeSummarizer(() => "fine");
    const result = await summarizeWithEscalation(input(skipped, { breaker }));
    expect(result).toMatchObject({ kind: "summarized", level: "fallback" });
    expect(skipped.requests).toHaveLength(0);
    now = 1_000; // cool-down over: half-open, one trial call goes through and closes the circuit
    const recovered = await summarizeWithEscalation(input(skipped, { breaker }));
    expect(recovered).toMatchObject({ kind: "summarized", level: "normal" });
    expect(breaker.state()).toBe("closed");
  });
});

describe("CircuitBreaker", () => {
  it("opens after the threshold of consecutive failures, and a success resets the count", () => {
    const breaker = new CircuitBreaker({ failureThreshold: 3, now: () => 0 });
    breaker.recordFailure();
    breaker.recordFailure();
    breaker.recordSuccess();
    breaker.recordFailure();
    breaker.recordFailure();
    expect(breaker.state()).toBe("closed");
    breaker.recordFailure();
    expect(breaker.state()).toBe("open");
    expect(breaker.allowsCall()).toBe(false);
  });

  it("re-opens for a new cool-down when the half-open trial fails", () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 1, coolDownMs: 100, now: () => now });
    breaker.recordFailure();
    now = 100;
    expect(breaker.state()).toBe("half-open");
    breaker.recordFailure();
    expect(breaker.state()).toBe("open");
    now = 199;
    expect(breaker.allowsCall()).toBe(false);
    now = 200;
    expect(breaker.allowsCall()).toBe(true);
  });
});
