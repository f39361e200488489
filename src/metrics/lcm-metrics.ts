/**
 * The instruments the plugin records into: the seed spec's metric set (compaction runs, summaries created, expand
 * and search latency, integrity failures) and what shows a stall coming (summarizer calls, failures and latency,
 * spend-guard diversions, hook durations and the longest event-loop block inside a hook). One set per process,
 * on globalThis: OpenClaw loads the plugin module several times per gateway process and every copy must count
 * into the same instruments. Values read from the database at scrape time live in services/metrics-service.ts.
 */
import { processShared } from "../runtime/process-shared.js";
import { BLOCK_BUCKETS_MS, Counter, Gauge, Histogram, LATENCY_BUCKETS_MS, type MetricFamily } from "./metric-registry.js";

export class LcmMetrics {
  readonly compactionRuns = new Counter(
    "lcm_compaction_runs_total",
    "Compaction runs by trigger (maintain:incremental, maintain:threshold, compact:threshold, compact:budget, compact:preflight, cli) and outcome (compacted, unchanged, failed).",
  );
  readonly summariesCreated = new Counter("lcm_summaries_created_total", "Summaries written by compaction, by kind (leaf, condensed) and level (normal, aggressive, fallback).");
  readonly expandLatency = new Histogram("lcm_expand_latency_ms", "Latency of expansions in milliseconds, by kind (walk: lcm_expand or `lcm expand`; query: lcm_expand_query).", LATENCY_BUCKETS_MS);
  readonly searchLatency = new Histogram("lcm_search_latency_ms", "Latency of lcm_grep and `lcm grep` searches in milliseconds, by mode (regex, full_text).", LATENCY_BUCKETS_MS);
  readonly integrityFailures = new Counter("lcm_integrity_failures_total", "Integrity problems found, by where the check ran (maintain: the per-turn check of the newest context; doctor).");
  readonly summarizerCalls = new Counter("lcm_summarizer_calls_total", "Summarizer calls by summarizer (host-llm, anthropic:<model>, extractive) and outcome (ok, failed, timeout, aborted).");
  readonly summarizerLatency = new Histogram("lcm_summarizer_latency_ms", "Latency of summarizer calls in milliseconds, by summarizer.", LATENCY_BUCKETS_MS);
  readonly spendGuardDiverted = new Counter(
    "lcm_spend_guard_diverted_calls_total",
    "Summaries written without a model because the conversation reached maxSummaryCallsPerWindow (the spend guard).",
  );
  readonly hookDuration = new Histogram("lcm_hook_duration_ms", "Duration of the context-engine hooks in milliseconds, by hook.", LATENCY_BUCKETS_MS);
  readonly hookBlock = new Histogram("lcm_hook_event_loop_block_ms", "Longest event-loop block seen while a hook ran, one observation per hook call, in milliseconds.", BLOCK_BUCKETS_MS);
  readonly hookBlockMax = new Gauge("lcm_hook_event_loop_block_max_ms", "Longest event-loop block seen while a hook ran since the process started, in milliseconds, by hook.");

  /** Every family recorded in this process, in a fixed order. */
  collect(): MetricFamily[] {
    return [
      this.compactionRuns, this.summariesCreated, this.expandLatency, this.searchLatency, this.integrityFailures,
      this.summarizerCalls, this.summarizerLatency, this.spendGuardDiverted, this.hookDuration, this.hookBlock, this.hookBlockMax,
    ].map((instrument) => instrument.collect());
  }
}

/** The process's instruments, shared by every copy of the plugin module. */
export function processMetrics(): LcmMetrics {
  return processShared("metrics.v1", () => new LcmMetrics());
}
