/**
 * The composition root: the only module that touches the host API, opens the database and picks the real
 * implementations of the contracts. `register` is idempotent and side-effect-free (OpenClaw calls it several
 * times per process, in several registration modes): it resolves the configuration and registers factories;
 * the database is opened lazily by the first engine or tool that needs it.
 */
import { type LcmConfig, resolveConfig } from "./config.js";
import { systemClock } from "./contracts.js";
import { openSharedDatabase } from "./db/connection-registry.js";
import { ENGINE_ID, LcmContextEngine } from "./engine/lcm-context-engine.js";
import { openClawTranscriptSource } from "./engine/transcript-source.js";
import { UnavailableEngine } from "./engine/unavailable-engine.js";
import { describeError } from "./errors.js";
import type { PluginApi } from "./host/openclaw-types.js";
import { hostLogger } from "./runtime/host-logger.js";
import { SqliteStore } from "./store/sqlite/sqlite-store.js";
import { DefaultTokenEstimator } from "./tokens/default-token-estimator.js";

export const PLUGIN_ID = "lcm";

/** Everything the plugin's components share, built on first use per database file. */
export interface PluginServices {
  config: LcmConfig;
  store: SqliteStore;
}

export function openServices(config: LcmConfig): PluginServices {
  return { config, store: new SqliteStore(openSharedDatabase(config.databasePath)) };
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
  api.registerContextEngine(ENGINE_ID, () => {
    let services: PluginServices;
    try {
      services = openServices(config);
    } catch (error) {
      return new UnavailableEngine(`cannot open ${config.databasePath}: ${describeError(error)}`, logger);
    }
    return new LcmContextEngine({ config, store: services.store, tokens, clock: systemClock, logger, transcriptSource });
  });
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
