/**
 * One Prometheus scrape: the process's instruments (metrics/lcm-metrics.ts) plus what is read at scrape time: from
 * the database (context tokens of all conversations, stored messages, the full-text index and term dictionary
 * backlogs, the file's size), and from the process (the summarizers' circuit breakers, the spend guard). Values
 * read from the database survive restarts and are the same whichever copy of the plugin module serves the scrape.
 */
import { statSync } from "node:fs";
import { sharedCircuitStates } from "../compaction/circuit-breaker.js";
import type { Clock } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { describeError } from "../errors.js";
import type { LcmMetrics } from "../metrics/lcm-metrics.js";
import type { MetricFamily } from "../metrics/metric-registry.js";
import { renderPrometheusText } from "../metrics/prometheus-text.js";
import type { OperatorStore } from "../store/operator-store.js";
import type { StatusStore } from "../store/status-store.js";
import { type SpendGuard, spendLimitsOf } from "./spend-guard.js";

const CIRCUIT_VALUES = { closed: 0, "half-open": 1, open: 2 } as const;

export interface MetricsServiceDeps {
  metrics: LcmMetrics;
  /** Opens (or reuses) the database; throws when it cannot be used (the scrape then says lcm_database_up 0). */
  stores: () => { status: StatusStore; operator: OperatorStore };
  config: Pick<LcmConfig, "databasePath" | "maxSummaryCallsPerWindow" | "summaryCallWindowMinutes">;
  spendGuard: SpendGuard;
  clock: Clock;
}

export class MetricsService {
  constructor(private readonly deps: MetricsServiceDeps) {}

  /** The scrape as Prometheus text. Contract: never throws; a database that cannot be read is reported as down. */
  async scrape(): Promise<string> {
    return renderPrometheusText([...this.deps.metrics.collect(), ...this.processFamilies(), ...await this.databaseFamilies()]);
  }

  private processFamilies(): MetricFamily[] {
    const limits = spendLimitsOf(this.deps.config);
    const overview = this.deps.spendGuard.overview(limits, this.deps.clock.now());
    return [
      gauge("lcm_summarizer_circuit_state", "State of each summarizer's circuit breaker: 0 closed, 1 half-open (probing), 2 open (model calls skipped).",
        sharedCircuitStates().map(({ key, state }) => [{ summarizer: key }, CIRCUIT_VALUES[state]])),
      gauge("lcm_spend_guard_max_calls", "The spend guard's cap: summarizer model calls one conversation may make per window (maxSummaryCallsPerWindow).", [[{}, limits.maxCalls]]),
      gauge("lcm_spend_guard_calls_in_window_max", "The most summarizer model calls any one conversation made within the current window.", [[{}, overview.maxCallsInWindow]]),
      gauge("lcm_spend_guard_capped_conversations", "Conversations at the spend guard's cap now (their summaries are written without a model).", [[{}, overview.capped]]),
    ];
  }

  private async databaseFamilies(): Promise<MetricFamily[]> {
    try {
      const { status, operator } = this.deps.stores();
      const totals = await status.databaseTotals();
      const contextTokens = await operator.contextTokensTotal();
      return [
        gauge("lcm_database_up", "1 when the database could be read for this scrape, else 0 (see the gateway log).", [[{}, 1]]),
        gauge("lcm_context_tokens_total", "Context tokens of all conversations: what the models would be shown before each turn's budget is applied.", [[{}, contextTokens]]),
        gauge("lcm_conversations", "Conversations stored.", [[{}, totals.conversations]]),
        gauge("lcm_messages_stored", "Messages stored (never deleted by compaction).", [[{}, totals.messages]]),
        gauge("lcm_index_backlog_messages", "Messages stored but not yet in the full-text index (maintenance indexes them in batches; a search first).", [[{}, totals.awaitingIndex]]),
        gauge("lcm_database_size_bytes", "Size of the database file and its write-ahead log, in bytes.", [
          [{ file: "db" }, fileSize(this.deps.config.databasePath)], [{ file: "wal" }, fileSize(`${this.deps.config.databasePath}-wal`)],
        ]),
      ];
    } catch (error) {
      return [
        gauge("lcm_database_up", `1 when the database could be read for this scrape, else 0. Last problem: ${describeError(error).slice(0, 300)}`, [[{}, 0]]),
      ];
    }
  }
}

function gauge(name: string, help: string, values: [Record<string, string>, number][]): MetricFamily {
  return { name, help, type: "gauge", samples: values.map(([labels, value]) => ({ suffix: "", labels, value })) };
}

function fileSize(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}
