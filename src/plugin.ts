/**
 * The composition root: the only module that touches the host API, opens the database and picks the real
 * implementations of the contracts. `register` is idempotent and side-effect-free (OpenClaw calls it several
 * times per process, in several registration modes): it resolves the configuration and registers factories;
 * the database is opened lazily by the first engine or tool that needs it.
 */
import { createLcmCommand } from "./commands/lcm-command.js";
import { access } from "node:fs/promises";
import { type LcmConfig, resolveConfig } from "./config.js";
import { IntegrityChecker } from "./integrity/integrity-checker.js";
import { SqliteIntegrityStore } from "./store/sqlite/sqlite-integrity-store.js";
import { systemClock } from "./contracts.js";
import { openSharedDatabase } from "./db/connection-registry.js";
import { ENGINE_ID, LcmContextEngine } from "./engine/lcm-context-engine.js";
import { openClawTranscriptSource } from "./engine/transcript-source.js";
import { UnavailableEngine } from "./engine/unavailable-engine.js";
import { describeError } from "./errors.js";
import type { PluginApi } from "./host/openclaw-types.js";
import { hostTextCompletion } from "./large-files/host-text-completion.js";
import { createRecallServices } from "./retrieval/recall-services.js";
import { hostLogger } from "./runtime/host-logger.js";
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

export function openServices(config: LcmConfig): PluginServices {
  const database = openSharedDatabase(config.databasePath);
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

export function register(api: PluginApi): void {
  const logger = hostLogger(api.logger);
  const config = resolveConfig(api.pluginConfig ?? {}, process.env);
  if (!config.enabled) {
    logger.info("LCM is disabled (enabled: false); the context engine is not registered.");
    return;
  }
  const tokens = new DefaultTokenEstimator();
  const transcriptSource = openClawTranscriptSource();
  // The session's host model (runtimeContext.llm) wins when a hook gets one; api.runtime.llm, the standalone
  // Anthropic client and the extractive summarizer follow, in that order.
  const summarizers = createSummarizerSelector({ config, tokens, pluginLlm: api.runtime?.llm, env: process.env });
  // Exploration summaries of large text files use the plugin-wide host model; without one they are deterministic.
  const pluginLlm = api.runtime?.llm;
  const textCompletion = pluginLlm ? hostTextCompletion(pluginLlm, hostModelRef(config)) : undefined;
  api.registerContextEngine(ENGINE_ID, () => {
    let services: PluginServices;
    try {
      services = openServices(config);
    } catch (error) {
      return new UnavailableEngine(`cannot open ${config.databasePath}: ${describeError(error)}`, logger);
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
      const services = openServices(config);
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
      const services = openServices(config);
      return {
        conversations: services.store, sessions: services.retrievalStore, status: services.statusStore,
        integrity: integrityCheckerFor(services),
      };
    },
  }));
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
