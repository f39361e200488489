/**
 * The summarizer of a compaction run: counted and timed per summarizer and outcome, failures and timeouts logged,
 * and model calls past the spend guard's cap answered by the deterministic summarizer.
 */
import { describe, expect, it } from "vitest";
import type { SummaryRequest } from "../../src/contracts.js";
import { LcmMetrics } from "../../src/metrics/lcm-metrics.js";
import { SpendGuard } from "../../src/services/spend-guard.js";
import { SummarizationService } from "../../src/services/summarization-service.js";
import { FakeSummarizer, hang } from "../fakes/fake-summarizer.js";
import { RecordingLogger } from "../helpers/engine.js";

const REQUEST: SummaryRequest = { sourceText: "some turns", depth: 0, mode: "normal", targetTokens: 100 };

function service(respond: ConstructorParameters<typeof FakeSummarizer>[0], maxCalls = 10) {
  const metrics = new LcmMetrics();
  const logger = new RecordingLogger();
  const model = new FakeSummarizer(respond);
  const deterministic = new FakeSummarizer(() => "deterministic summary");
  const summarization = new SummarizationService({
    select: (sessionModel) => (sessionModel ? { key: "host-llm", summarizer: model } : { key: "extractive", summarizer: deterministic }),
    deterministic, guard: new SpendGuard(), limits: { maxCalls, windowMs: 60_000 }, metrics, clock: { now: () => 1_000 }, logger,
  });
  const hostModel = { complete: async () => ({ text: "unused" }) };
  return { metrics, logger, model, deterministic, run: summarization.forRun({ spendKey: "db#1", sessionModel: hostModel }) };
}

describe("SummarizationService", () => {
  it("counts and times successful calls", async () => {
    const { metrics, run } = service(() => "model summary");
    expect(run).toMatchObject({ key: "host-llm", usesModel: true });
    expect(await run.summarizer.summarize(REQUEST, new AbortController().signal)).toBe("model summary");
    expect(metrics.summarizerCalls.value({ summarizer: "host-llm", outcome: "ok" })).toBe(1);
    expect(metrics.summarizerLatency.count({ summarizer: "host-llm" })).toBe(1);
  });

  it("counts and logs a failed call, and rethrows it for the escalation", async () => {
    const { metrics, logger, run } = service(() => { throw new Error("provider 529 overloaded"); });
    await expect(run.summarizer.summarize(REQUEST, new AbortController().signal)).rejects.toThrow(/529/);
    expect(metrics.summarizerCalls.value({ summarizer: "host-llm", outcome: "failed" })).toBe(1);
    expect(logger.lines.filter((line) => line.level === "warn").map((line) => line.message)).toEqual(["summarizer call failed: provider 529 overloaded"]);
  });

  it("counts a call abandoned at its timeout when the signal aborts, without waiting for it", async () => {
    const { metrics, run } = service(() => hang());
    const controller = new AbortController();
    void run.summarizer.summarize(REQUEST, controller.signal);
    controller.abort(new Error("summarizer call timed out after 1000 ms"));
    expect(metrics.summarizerCalls.value({ summarizer: "host-llm", outcome: "timeout" })).toBe(1);
  });

  it("answers calls past the cap with the deterministic summarizer and counts them", async () => {
    const { metrics, model, deterministic, run } = service(() => "model summary", 2);
    const texts = [];
    for (let call = 0; call < 4; call++) texts.push(await run.summarizer.summarize(REQUEST, new AbortController().signal));
    expect(texts).toEqual(["model summary", "model summary", "deterministic summary", "deterministic summary"]);
    expect(model.requests).toHaveLength(2);
    expect(deterministic.requests).toHaveLength(2);
    expect(run.divertedCalls()).toBe(2);
    expect(metrics.spendGuardDiverted.value()).toBe(2);
  });
});
