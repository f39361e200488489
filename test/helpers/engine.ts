/**
 * Builds engines the way the plugin does, on a fresh SQLite file, with injectable contracts (a word-count
 * estimator makes budget arithmetic readable). `newEngine()` returns a new instance per call, as the host builds
 * one per turn; all instances share one connection.
 */
import { type ScaledSettings, scaledSettings } from "../../src/compaction/compaction-targets.js";
import { type LcmConfig, resolveConfig } from "../../src/config.js";
import type { Clock, Logger, TokenEstimator } from "../../src/contracts.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { type EngineDeps, LcmContextEngine } from "../../src/engine/lcm-context-engine.js";
import type { TranscriptSource } from "../../src/ingest/transcript-source.js";
import type { HostLlm } from "../../src/host/openclaw-types.js";
import { SqliteCompactionStore } from "../../src/sqlite/sqlite-compaction-store.js";
import { sqliteStorageControl } from "../../src/sqlite/open-sqlite-backend.js";
import { SqliteStore } from "../../src/sqlite/sqlite-store.js";
import type { LcmBackend } from "../../src/store/backend.js";
import type { LcmStore } from "../../src/store/store.js";
import { createSummarizerSelector } from "../../src/summarize/summarizer-selection.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { SteppingClock } from "../fakes/clocks.js";
import type { LogLine } from "../fakes/fake-plugin-api.js";
import { tempDatabasePath } from "./temp-dir.js";

export class RecordingLogger implements Logger {
  readonly lines: LogLine[] = [];
  debug(message: string): void { this.lines.push({ level: "debug", message }); }
  info(message: string): void { this.lines.push({ level: "info", message }); }
  warn(message: string): void { this.lines.push({ level: "warn", message }); }
  error(message: string): void { this.lines.push({ level: "error", message }); }
  errors(): string[] { return this.lines.filter((line) => line.level === "error").map((line) => line.message); }
}

export interface TestEngineOptions {
  config?: Partial<Record<keyof LcmConfig, unknown>>;
  tokens?: TokenEstimator;
  clock?: Clock;
  databasePath?: string;
  transcriptSource?: TranscriptSource;
  /** The plugin-wide host model (api.runtime.llm); without one, compaction uses the extractive summarizer. */
  pluginLlm?: HostLlm;
  /** The stores to run on (a contract test's backend, test/helpers/backends.ts); default a new SQLite file. */
  backend?: LcmBackend;
}

export function createTestEngine(options: TestEngineOptions = {}) {
  const databasePath = options.databasePath ?? tempDatabasePath();
  const config = resolveConfig({ databasePath, ...options.config }, {});
  const sqliteStore = options.backend ? null : new SqliteStore(openSharedDatabase(config.databasePath));
  const store: LcmStore = options.backend?.store ?? sqliteStore!;
  const tokens = options.tokens ?? new DefaultTokenEstimator();
  const clock = options.clock ?? new SteppingClock();
  const logger = new RecordingLogger();
  const transcriptSource = options.transcriptSource;
  const compactionStore = options.backend?.compaction ?? new SqliteCompactionStore(sqliteStore!.db);
  const storage = options.backend?.storage ?? sqliteStorageControl;
  const summarizers = createSummarizerSelector({ config, tokens, pluginLlm: options.pluginLlm, env: {} });
  /** `extra`: dependencies the plugin wires and tests need only sometimes (retention, the search index, …). */
  const newEngine = (extra: Partial<EngineDeps> = {}) =>
    new LcmContextEngine({
      config, store, compactionStore, storage, summarizers, tokens, clock, logger, ...(transcriptSource ? { transcriptSource } : {}), ...extra,
    });
  /** `db`: the SQLite connection of the default backend (tests of SQLite details); undefined on a given backend. */
  return { config, store, compactionStore, tokens, clock, logger, newEngine, db: sqliteStore?.db as SqliteStore["db"] };
}

/** Compaction sizes exactly as configured (a budget so large that no share of it caps a setting). */
export function configuredSizes(config: LcmConfig): ScaledSettings {
  return scaledSettings(1e12, config);
}
