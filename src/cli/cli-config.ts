/**
 * Which database and settings the CLI uses, in order: `--db`, the LCM_DATABASE_PATH environment variable, the
 * OpenClaw config's `plugins.entries.lcm.config.databasePath`, then the plugin's default (which keeps an LCM
 * database at the old default path, as the plugin does). The other settings (compaction sizes, summary model,
 * spend guard) come from the same plugin config and LCM_* variables, resolved by the plugin's own resolveConfig.
 * Under `openclaw lcm` the host hands the config it loaded; the standalone `lcm` reads openclaw.json (JSON5) from
 * OPENCLAW_CONFIG_PATH, else $OPENCLAW_STATE_DIR/openclaw.json, else ~/.openclaw/openclaw.json.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import JSON5 from "json5";
import { type LcmConfig, resolveConfig } from "../config.js";
import { silentLogger } from "../contracts.js";
import { chooseDefaultDatabasePath } from "../db/default-database-path.js";
import { describeError } from "../errors.js";
import { CliError, EXIT } from "./exit-codes.js";

export type DatabasePathSource = "--db" | "LCM_DATABASE_PATH" | "openclaw-config" | "default";

export interface CliConfig {
  config: LcmConfig;
  /** Where the database path came from (shown by `lcm status`). */
  databasePathSource: DatabasePathSource;
  /** The OpenClaw config file read, when the standalone CLI read one. */
  openClawConfigPath: string | null;
}

export interface CliConfigInput {
  db?: string | undefined;
  /** An explicit openclaw.json path (`--config`). */
  configPath?: string | undefined;
  env: NodeJS.ProcessEnv;
  /** The OpenClaw config the host loaded (`openclaw lcm …`); absent for the standalone bin. */
  hostConfig?: unknown;
}

export function resolveCliConfig(input: CliConfigInput): CliConfig {
  const { pluginConfig, path } = input.hostConfig !== undefined
    ? { pluginConfig: lcmEntryOf(input.hostConfig), path: null }
    : readOpenClawConfig(input.configPath, input.env);
  const env = { ...input.env };
  let source: DatabasePathSource = "default";
  if (input.db !== undefined) {
    delete env.LCM_DATABASE_PATH;
    source = "--db";
  } else if (env.LCM_DATABASE_PATH?.trim()) {
    source = "LCM_DATABASE_PATH";
  } else if (typeof pluginConfig.databasePath === "string") {
    source = "openclaw-config";
  }
  const settings = input.db !== undefined ? { ...pluginConfig, databasePath: resolve(input.db) } : pluginConfig;
  try {
    const config = resolveConfig(settings, env, { defaultDatabasePath: (environment) => chooseDefaultDatabasePath(environment, silentLogger) });
    return { config, databasePathSource: source, openClawConfigPath: path };
  } catch (error) {
    throw new CliError(EXIT.config, `${describeError(error).replace(/^LcmError: /, "")} (settings from ${path ?? "the OpenClaw config"} and LCM_* variables)`);
  }
}

/** The standalone CLI's view of openclaw.json: the plugin entry's config, or {} when there is no file. */
function readOpenClawConfig(explicit: string | undefined, env: NodeJS.ProcessEnv): { pluginConfig: Record<string, unknown>; path: string | null } {
  const path = explicit ?? openClawConfigPath(env);
  if (!existsSync(path)) {
    if (explicit !== undefined) throw new CliError(EXIT.config, `The OpenClaw config ${path} (--config) does not exist.`);
    return { pluginConfig: {}, path: null };
  }
  let parsed: unknown;
  try {
    parsed = JSON5.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new CliError(EXIT.config, `The OpenClaw config ${path} could not be read: ${describeError(error)}. Fix the file, or pass --db <path>.`);
  }
  return { pluginConfig: lcmEntryOf(parsed), path };
}

/** Where OpenClaw keeps its config (its own rule: OPENCLAW_CONFIG_PATH, else the state folder's openclaw.json). */
export function openClawConfigPath(env: NodeJS.ProcessEnv): string {
  const override = env.OPENCLAW_CONFIG_PATH?.trim();
  if (override) return expandHome(override);
  const stateDir = env.OPENCLAW_STATE_DIR?.trim();
  return join(stateDir ? expandHome(stateDir) : join(homedir(), ".openclaw"), "openclaw.json");
}

function lcmEntryOf(config: unknown): Record<string, unknown> {
  const entry = (config as { plugins?: { entries?: { lcm?: { config?: unknown } } } } | null)?.plugins?.entries?.lcm?.config;
  return entry !== null && typeof entry === "object" && !Array.isArray(entry) ? { ...(entry as Record<string, unknown>) } : {};
}

function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}
