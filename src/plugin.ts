/**
 * The composition root: the only module that touches the host API, opens the database and picks the real
 * implementations of the contracts. `register` is idempotent and side-effect-free (OpenClaw calls it several
 * times per process, in several registration modes): it resolves the configuration and registers factories;
 * the database is opened lazily by the first engine or tool that needs it. When it cannot be used, the engine
 * steps aside for OpenClaw's own (unavailable-engine.ts), status and recall read it read-only where they can, and
 * the cause is logged once per process.
 */
import { createLcmCommand } from "./commands/lcm-command.js";
import { access } from "node:fs/promises";
import { type LcmConfig, resolveConfig } from "./config.js";
import type { Logger } from "./contracts.js";
import { IntegrityChecker } from "./integrity/integrity-checker.js";
import { SqliteIntegrityStore } from "./store/sqlite/sqlite-integrity-store.js";
import { systemClock } from "./contracts.js";
import { openSharedDatabase, openSharedReadableDatabase } from "./db/connection-registry.js";
import type { Database } from "./db/database.js";
import { databaseProblemOf, describeDatabaseProblem } from "./db/database-problem.js";
import { chooseDefaultDatabasePath } from "./db/default-database-path.js";
import { ENGINE_ID, LcmContextEngine } from "./engine/lcm-context-engine.js";
import { openClawTranscriptSource, type TranscriptSource } from "./engine/transcript-source.js";
import { type CompactionDelegateLoad, RuntimeCompaction } from "./engine/runtime-compaction.js";
import { UnavailableEngine } from "./engine/unavailable-engine.js";
import { describeError } from "./errors.js";
import type { ContextEngine, HostPathContextEngine, PluginApi } from "./host/openclaw-types.js";
import { hostTextCompletion } from "./large-files/host-text-completion.js";
import { createRecallServices } from "./retrieval/recall-services.js";
import { hostLogger } from "./runtime/host-logger.js";
import { forgetLogged, logOnce } from "./runtime/log-once.js";
import { SqliteCompactionStore } from "./store/sqlite/sqlite-compaction-store.js";
import { SqliteGrantStore } from "./store/sqlite/sqlite-grant-store.js";
import { SqliteRetrievalStore } from "./store/sqlite/sqlite-retrieval-store.js";
import { SqliteSearchIndex } from "./store/sqlite/sqlite-search-index.js";
import { SqliteStatusStore } from "./store/sqlite/sqlite-status-store.js";
import { SqliteStore } from "./store/sqlite/sqlite-store.js";
import { hostModelRef } from "./summarize/host-llm-summarizer.js";
import { createSummarizerSelector } from "./summarize/summarizer-selection.js";
import { DefaultTokenEstimator } from "./tokens/default-token-estimator.js";
import type { RecallToolDeps } from "./tools/recall-tool-deps.js";
import { RECALL_TOOLS } from "./tools/recall-tools.js";

export const PLUGIN_ID = "lcm";

/** Everything the plugin's components share, built on first use per database file. */
export interface PluginServices {
  config: LcmConfig;
  store: SqliteStore;
  compactionStore: SqliteCompactionStore;
  retrievalStore: SqliteRetrievalStore;
  grantStore: SqliteGrantStore;
  statusStore: SqliteStatusStore;
  integrityStore: SqliteIntegrityStore;
  searchIndex: SqliteSearchIndex;
}

/** The services on the shared read-write connection; throws LcmError("unavailable") when the database cannot be written. */
export function openServices(config: LcmConfig): PluginServices {
  return servicesOn(config, openSharedDatabase(config.databasePath));
}

/**
 * The services for status and recall: on the read-write connection, or read-only when the file is LCM's but may
 * only be read (`readOnly` then says why and the fix; writes fail with that message). Throws like openServices.
 */
export function openReadableServices(config: LcmConfig): { services: PluginServices; readOnly: string | null } {
  const { database, problem } = openSharedReadableDatabase(config.databasePath);
  return { services: servicesOn(config, database), readOnly: problem ? describeDatabaseProblem(config.databasePath, problem) : null };
}

function servicesOn(config: LcmConfig, database: Database): PluginServices {
  return {
    config,
    store: new SqliteStore(database),
    compactionStore: new SqliteCompactionStore(database),
    retrievalStore: new SqliteRetrievalStore(database),
    grantStore: new SqliteGrantStore(database),
    statusStore: new SqliteStatusStore(database),
    integrityStore: new SqliteIntegrityStore(database),
    searchIndex: new SqliteSearchIndex(database),
  };
}

export function integrityCheckerFor(services: PluginServices): IntegrityChecker {
  return new IntegrityChecker({
    store: services.integrityStore,
    clock: systemClock,
    fileExists: (path) => access(path).then(() => true, () => false),
  });
}

/** Seams for tests; OpenClaw calls `register(api)`. */
export interface RegisterOptions {
  /** Loads OpenClaw's own compaction for the engine served when the database cannot be used. Default: the SDK's. */
  loadCompactionDelegate?: () => Promise<CompactionDelegateLoad>;
  /** Where bootstrap reads the host's transcript. Default: OpenClaw's SDK reader. */
  transcriptSource?: TranscriptSource;
}

export function register(api: PluginApi, options: RegisterOptions = {}): void {
  const logger = hostLogger(api.logger);
  const pluginConfig = api.pluginConfig ?? {};
  if (!resolveConfig(pluginConfig, process.env).enabled) {
    logger.info("LCM is disabled (enabled: false); the context engine is not registered.");
    return;
  }
  // Without a configured path, an LCM database at the old default `lcm.db` is kept; another plugin's file there is not.
  const config = resolveConfig(pluginConfig, process.env, { defaultDatabasePath: (env) => chooseDefaultDatabasePath(env, logger) });
  const databaseAccess = new DatabaseAccess(config, logger);
  // Imported now, not at module load: the engine served when the database cannot be used hands compaction to it.
  const runtimeCompaction = new RuntimeCompaction(options.loadCompactionDelegate);
  const tokens = new DefaultTokenEstimator();
  const transcriptSource = options.transcriptSource ?? openClawTranscriptSource();
  // The session's host model (runtimeContext.llm) wins when a hook gets one; api.runtime.llm, the standalone
  // Anthropic client and the extractive summarizer follow, in that order.
  const summarizers = createSummarizerSelector({ config, tokens, pluginLlm: api.runtime?.llm, env: process.env });
  // Exploration summaries of large text files use the plugin-wide host model; without one they are deterministic.
  const pluginLlm = api.runtime?.llm;
  const textCompletion = pluginLlm ? hostTextCompletion(pluginLlm, hostModelRef(config)) : undefined;
  api.registerContextEngine(ENGINE_ID, () => {
    let services: PluginServices;
    try {
      services = databaseAccess.forWriting();
    } catch (error) {
      // No commitTurn, no transcriptSemantics, ownsCompaction false. The cast: our ContextEngine type lists commitTurn
      // as required because LcmContextEngine always has it (tests call it); in OpenClaw's contract it is optional.
      const degraded: HostPathContextEngine = new UnavailableEngine(databaseAccess.problemText(error), runtimeCompaction);
      return degraded as ContextEngine;
    }
    return new LcmContextEngine({
      config, store: services.store, compactionStore: services.compactionStore, summarizers, tokens, clock: systemClock,
      logger, transcriptSource, textCompletion, grants: services.grantStore, integrity: integrityCheckerFor(services),
      searchIndex: services.searchIndex,
    });
  });
  // Recall tools and /lcm open the database only when they run (tool listing stays side-effect-free).
  const recallDeps: RecallToolDeps = {
    config, logger, clock: systemClock,
    services: () => {
      const { services } = databaseAccess.forReading();
      return createRecallServices({
        store: services.store, retrievalStore: services.retrievalStore, grants: services.grantStore, config, tokens,
        clock: systemClock, logger, subagent: api.runtime?.subagent, llm: api.runtime?.llm,
      });
    },
  };
  for (const tool of RECALL_TOOLS) api.registerTool?.((context) => tool.create(recallDeps, context), { name: tool.name });
  api.registerCommand?.(createLcmCommand({
    config, clock: systemClock, logger,
    services: () => {
      const { services, readOnly } = databaseAccess.forReading();
      return {
        conversations: services.store, sessions: services.retrievalStore, status: services.statusStore,
        integrity: integrityCheckerFor(services), ...(readOnly ? { notice: readOnly } : {}),
      };
    },
  }));
}

/**
 * Opens the database for the engine (writing) and for status and recall (reading), and logs why it cannot, once
 * per process per cause: the factory runs every turn and every tool call opens, and a lasting cause would
 * otherwise fill the log. Once the database opens for writing again, a later recurrence is logged again.
 */
class DatabaseAccess {
  private readonly cause: string;

  constructor(private readonly config: LcmConfig, private readonly logger: Logger) {
    this.cause = `database-unavailable:${config.databasePath}:`;
  }

  forWriting(): PluginServices {
    try {
      const services = openServices(this.config);
      forgetLogged(this.cause);
      return services;
    } catch (error) {
      this.warn(this.problemText(error));
      throw error;
    }
  }

  forReading(): { services: PluginServices; readOnly: string | null } {
    try {
      const { services, readOnly } = openReadableServices(this.config);
      if (readOnly) this.warn(readOnly);
      return { services, readOnly };
    } catch (error) {
      this.warn(this.problemText(error));
      throw error;
    }
  }

  /** What is wrong with the database, where, and the fix, for any error opening it threw. */
  problemText(error: unknown): string {
    if (databaseProblemOf(error)) return (error as Error).message;
    return describeDatabaseProblem(this.config.databasePath, { kind: "cannot-open", reason: describeError(error) });
  }

  private warn(problem: string): void {
    logOnce(this.logger, "warn", this.cause + problem, `LCM cannot use its database. ${problem}`);
  }
}

const plugin = {
  id: PLUGIN_ID,
  name: "Lossless Context Management",
  description:
    "Stores every message in SQLite, summarizes older turns into a DAG, assembles summaries plus a fresh tail within " +
    "the token budget, and gives the agent tools to recall any detail.",
  register,
};

export default plugin;
