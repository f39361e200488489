/**
 * The metrics in Prometheus text format: instruments render as the exposition format says, the scrape reads the
 * database's gauges, the route answers GET with the text, and hooks are timed with the longest event-loop block.
 */
import { createServer, type Server } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { LcmMetrics } from "../../src/metrics/lcm-metrics.js";
import { instrumentHooks, timeHook } from "../../src/metrics/hook-timing.js";
import { Counter, Histogram } from "../../src/metrics/metric-registry.js";
import { createMetricsRoute } from "../../src/metrics/metrics-route.js";
import { renderPrometheusText } from "../../src/metrics/prometheus-text.js";
import { MetricsService } from "../../src/services/metrics-service.js";
import { SpendGuard } from "../../src/services/spend-guard.js";
import { SqliteOperatorStore } from "../../src/sqlite/sqlite-operator-store.js";
import { SqliteStatusStore } from "../../src/sqlite/sqlite-status-store.js";
import { createTestEngine } from "../helpers/engine.js";
import { conversation } from "../helpers/messages.js";

describe("Prometheus text", () => {
  it("renders counters with escaped labels and histograms with cumulative buckets, sum and count", () => {
    const counter = new Counter("lcm_things_total", "Things.\nCounted.");
    counter.inc({ kind: 'a"b' }, 2);
    counter.inc({ kind: 'a"b' });
    const histogram = new Histogram("lcm_wait_ms", "Waits.", [10, 100]);
    // 5 → both buckets; 50 → the 100 bucket; 500 → only +Inf.
    for (const value of [5, 50, 500]) histogram.observe({}, value);
    expect(renderPrometheusText([counter.collect(), histogram.collect()])).toBe([
      "# HELP lcm_things_total Things.\\nCounted.",
      "# TYPE lcm_things_total counter",
      'lcm_things_total{kind="a\\"b"} 3',
      "# HELP lcm_wait_ms Waits.",
      "# TYPE lcm_wait_ms histogram",
      'lcm_wait_ms_bucket{le="10"} 1',
      'lcm_wait_ms_bucket{le="100"} 2',
      'lcm_wait_ms_bucket{le="+Inf"} 3',
      "lcm_wait_ms_sum 555",
      "lcm_wait_ms_count 3",
      "",
    ].join("\n"));
  });
});

describe("a scrape", () => {
  it("has the spec's metric set and the stall signals, with the database's gauges", async () => {
    const harness = createTestEngine();
    await harness.newEngine().ingestBatch({ sessionId: "s1", sessionKey: "agent:main:main", messages: conversation(10) });
    const metrics = new LcmMetrics();
    metrics.compactionRuns.inc({ trigger: "cli", outcome: "compacted" });
    metrics.summariesCreated.inc({ kind: "leaf", level: "normal" }, 2);
    const text = await new MetricsService({
      metrics, spendGuard: new SpendGuard(), clock: harness.clock, config: harness.config,
      stores: () => ({ status: new SqliteStatusStore(harness.db), operator: new SqliteOperatorStore(harness.db) }),
    }).scrape();
    for (const name of [
      "lcm_context_tokens_total", "lcm_compaction_runs_total", "lcm_summaries_created_total", "lcm_expand_latency_ms",
      "lcm_search_latency_ms", "lcm_integrity_failures_total", "lcm_summarizer_calls_total", "lcm_summarizer_latency_ms",
      "lcm_summarizer_circuit_state", "lcm_index_backlog_messages", "lcm_database_size_bytes", "lcm_hook_event_loop_block_max_ms",
      "lcm_spend_guard_capped_conversations",
    ]) expect(text).toContain(`# TYPE ${name} `);
    expect(text).toContain('lcm_compaction_runs_total{trigger="cli",outcome="compacted"} 1');
    expect(text).toContain('lcm_summaries_created_total{kind="leaf",level="normal"} 2');
    expect(text).toMatch(/^lcm_context_tokens_total [1-9]\d*$/m);
    expect(text).toContain("lcm_index_backlog_messages 20");
    expect(text).toContain("lcm_database_up 1");
    expect(text).toMatch(/^lcm_database_size_bytes\{file="db"\} [1-9]\d*$/m);
  });

  it("reports the database down instead of failing", async () => {
    const harness = createTestEngine();
    const text = await new MetricsService({
      metrics: new LcmMetrics(), spendGuard: new SpendGuard(), clock: harness.clock, config: harness.config,
      stores: () => { throw new Error("LCM cannot use its database"); },
    }).scrape();
    expect(text).toContain("lcm_database_up 0");
  });
});

describe("the metrics route", () => {
  let server: Server;
  afterAll(() => server?.close());

  it("answers GET with the text and its content type, and refuses other methods", async () => {
    const handler = createMetricsRoute({ enabled: () => true, scrape: async () => "lcm_up 1\n" });
    server = createServer((request, response) => void handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const got = await fetch(`http://127.0.0.1:${port}/lcm/metrics`);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await got.text()).toBe("lcm_up 1\n");
    expect((await fetch(`http://127.0.0.1:${port}/lcm/metrics`, { method: "POST" })).status).toBe(405);
  });
});

describe("hook timing", () => {
  it("records a hook's duration and the longest event-loop block while it ran", async () => {
    const metrics = new LcmMetrics();
    await timeHook("assemble", metrics, async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      const until = performance.now() + 120; // a 120 ms synchronous stretch
      while (performance.now() < until) { /* block */ }
    });
    expect(metrics.hookDuration.count({ hook: "assemble" })).toBe(1);
    expect(metrics.hookBlockMax.value({ hook: "assemble" })).toBeGreaterThanOrEqual(80);
  });

  it("wraps an engine's hooks and keeps everything else as it was", async () => {
    const metrics = new LcmMetrics();
    const engine = { info: { id: "lcm", ownsCompaction: true }, async assemble() { return { messages: [], estimatedTokens: 0 }; }, async dispose() {} };
    const timed = instrumentHooks(engine, metrics);
    expect(timed.info).toBe(engine.info);
    expect(await timed.assemble()).toEqual({ messages: [], estimatedTokens: 0 });
    await timed.dispose();
    expect(metrics.hookDuration.count({ hook: "assemble" })).toBe(1);
    expect(metrics.hookDuration.count({ hook: "dispose" })).toBe(0);
  });
});
