/**
 * The spend guard: a cap on summarizer model calls per conversation per window. Past it, compaction goes on with the
 * deterministic summarizer (it never stalls), says so in its answer, its record and the log, and shows it in status
 * and the metrics; calls are allowed again once they leave the window.
 */
import { describe, expect, it } from "vitest";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import type { Logger } from "../../src/contracts.js";
import { LcmMetrics } from "../../src/metrics/lcm-metrics.js";
import { CompactionService } from "../../src/services/compaction-service.js";
import { SpendGuard, spendKey } from "../../src/services/spend-guard.js";
import { StatusService } from "../../src/services/status-service.js";
import { SqliteRetrievalStore } from "../../src/sqlite/sqlite-retrieval-store.js";
import { SqliteStatusStore } from "../../src/sqlite/sqlite-status-store.js";
import { createSummarizerSelector } from "../../src/summarize/summarizer-selection.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { createTestEngine } from "../helpers/engine.js";
import { conversation } from "../helpers/messages.js";

interface FieldLine { level: string; message: string; fields?: Record<string, unknown> }

function fieldLogger(lines: FieldLine[]): Logger {
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => lines.push({ level, message, ...(fields ? { fields } : {}) });
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

describe("SpendGuard", () => {
  it("counts calls per conversation within the window and frees them as they leave it", () => {
    const guard = new SpendGuard();
    const limits = { maxCalls: 2, windowMs: 60_000 };
    // 2 calls at t=0 and t=10 s fill the cap; a third at t=20 s is refused; at t=61 s the first has left the window.
    expect(guard.tryAcquire("a", limits, 0)).toBe(true);
    expect(guard.tryAcquire("a", limits, 10_000)).toBe(true);
    expect(guard.tryAcquire("a", limits, 20_000)).toBe(false);
    expect(guard.tryAcquire("b", limits, 20_000)).toBe(true);
    expect(guard.usage("a", limits, 20_000)).toMatchObject({ calls: 2, capped: true, diverted: 1, freesAt: 60_000 });
    expect(guard.overview(limits, 20_000)).toEqual({ conversations: 2, capped: 1, maxCallsInWindow: 2 });
    expect(guard.tryAcquire("a", limits, 61_000)).toBe(true);
    expect(guard.usage("a", limits, 200_000)).toMatchObject({ calls: 0, capped: false, freesAt: null });
  });
});

describe("compaction at the spend guard's cap", () => {
  async function setup(maxCalls: number) {
    resetSharedCircuitBreakers();
    const harness = createTestEngine({ config: { leafChunkTokens: 300, leafTargetTokens: 40, maxSummaryCallsPerWindow: maxCalls } });
    await harness.newEngine().ingestBatch({ sessionId: "s1", sessionKey: "agent:main:main", messages: conversation(60) });
    const llm = new RecordingLlm(() => "Short model summary of the turns.");
    const lines: FieldLine[] = [];
    const metrics = new LcmMetrics();
    const guard = new SpendGuard();
    const service = new CompactionService({
      ...harness, logger: fieldLogger(lines), metrics, spendGuard: guard,
      summarizers: createSummarizerSelector({ config: harness.config, tokens: harness.tokens, env: {} }),
    });
    return { harness, llm, lines, metrics, guard, service };
  }

  it("writes the rest with the deterministic summarizer, finishes, and says so", async () => {
    // 60 exchanges, leaf chunks of 300 tokens: many more than 3 leaf passes are needed.
    const { harness, llm, lines, metrics, guard, service } = await setup(3);
    const outcome = await service.compact({ target: { conversationId: 1 }, force: true, targetKind: "threshold", model: llm });
    expect(llm.calls).toHaveLength(3);
    expect(outcome.compacted).toBe(true);
    expect(outcome.details!.divertedBySpendGuard).toBeGreaterThan(0);
    expect(outcome.details!.passes).toBeGreaterThan(3);
    expect(outcome.reason).toMatch(/spend guard: \d+ summar(y|ies) written without a model/);
    expect((await harness.store.getConversation(1))!.lastCompaction).toMatchObject({ spendGuardDiverted: outcome.details!.divertedBySpendGuard });
    expect(lines.filter((line) => line.level === "warn" && /^spend guard:/.test(line.message))).toHaveLength(1);
    expect(metrics.spendGuardDiverted.value()).toBe(outcome.details!.divertedBySpendGuard);
    expect(metrics.summarizerCalls.value({ summarizer: "host-llm", outcome: "ok" })).toBe(3);
    // Status shows it for the conversation.
    const status = new StatusService({
      location: harness.db.path, conversations: harness.store, sessions: new SqliteRetrievalStore(harness.db), status: new SqliteStatusStore(harness.db),
      config: harness.config, clock: harness.clock, spendGuard: guard,
    });
    const snapshot = await status.snapshot({ conversationId: 1 });
    expect(snapshot.conversation!.spendGuard).toMatchObject({ calls: 3, maxCalls: 3, capped: true });
    expect(snapshot.spendGuard).toMatchObject({ capped: 1, maxCallsPerWindow: 3 });
    expect(guard.usage(spendKey(harness.config.databasePath, 1), { maxCalls: 3, windowMs: 3_600_000 }, harness.clock.now()).capped).toBe(true);
  });

  it("never calls the model again while at the cap, and compaction still converges", async () => {
    const { llm, service } = await setup(1);
    await service.compact({ target: { conversationId: 1 }, force: true, targetKind: "threshold", model: llm });
    const second = await service.compact({ target: { conversationId: 1 }, force: true, targetKind: "budget", model: llm });
    expect(llm.calls).toHaveLength(1);
    expect(second.ok).toBe(true);
  });
});

describe("structured compaction logs", () => {
  it("log every run with the spec's fields", async () => {
    const { lines, llm, service } = await (async () => {
      resetSharedCircuitBreakers();
      const harness = createTestEngine({ config: { leafChunkTokens: 300 } });
      await harness.newEngine().ingestBatch({ sessionId: "s1", sessionKey: "agent:main:main", messages: conversation(60) });
      const lines: FieldLine[] = [];
      const llm = new RecordingLlm(() => "Model summary.");
      const service = new CompactionService({
        ...harness, logger: fieldLogger(lines), metrics: new LcmMetrics(), spendGuard: new SpendGuard(),
        summarizers: createSummarizerSelector({ config: harness.config, tokens: harness.tokens, env: {} }),
      });
      return { lines, llm, service };
    })();
    const outcome = await service.compact({ target: { conversationId: 1 }, force: true, targetKind: "threshold", model: llm });
    const run = lines.find((line) => /^compaction \(compact:threshold\)/.test(line.message))!;
    expect(run.fields).toMatchObject({
      conversation_id: 1, session_id: "s1", compaction_id: outcome.compactionId, trigger_reason: "compact:threshold",
      token_before: outcome.tokensBefore, token_after: outcome.tokensAfter, summary_id: expect.stringMatching(/^sum_[0-9a-f]{16}$/),
    });
    // The engine's per-pass lines carry the run's fields and their own summary_id.
    const passes = lines.filter((line) => /^compaction pass/.test(line.message));
    expect(passes.length).toBeGreaterThan(0);
    for (const pass of passes) expect(pass.fields).toMatchObject({ compaction_id: outcome.compactionId, conversation_id: 1, summary_id: expect.stringMatching(/^sum_/) });
  });

  it("log a failed run as an error with the fields, count it, and rethrow", async () => {
    const harness = createTestEngine({ config: { leafChunkTokens: 300 } });
    await harness.newEngine().ingestBatch({ sessionId: "s1", sessionKey: "agent:main:main", messages: conversation(20) });
    const lines: FieldLine[] = [];
    const metrics = new LcmMetrics();
    // The real store, with one read failing as a disk would.
    const broken: typeof harness.compactionStore = Object.assign(Object.create(harness.compactionStore) as typeof harness.compactionStore, {
      listCompactionItems: async () => { throw new Error("disk I/O error"); },
    });
    const service = new CompactionService({
      ...harness, compactionStore: broken, logger: fieldLogger(lines), metrics, spendGuard: new SpendGuard(),
      summarizers: createSummarizerSelector({ config: harness.config, tokens: harness.tokens, env: {} }),
    });
    await expect(service.compact({ target: { conversationId: 1 }, force: true, targetKind: "threshold" })).rejects.toThrow(/disk I\/O/);
    const failure = lines.find((line) => line.level === "error")!;
    expect(failure.message).toMatch(/^compaction \(compact:threshold\) failed: disk I\/O error/);
    expect(failure.fields).toMatchObject({ conversation_id: 1, session_id: "s1", compaction_id: expect.stringMatching(/^cmp_/), trigger_reason: "compact:threshold", token_before: expect.any(Number) });
    expect(metrics.compactionRuns.value({ trigger: "compact:threshold", outcome: "failed" })).toBe(1);
  });
});
