/**
 * Which database and settings the CLI uses, in order: `--db`, the LCM_DATABASE_PATH environment variable, the
 * OpenClaw config's `plugins.entries.lcm.config.databasePath`, then the plugin's default (which keeps an LCM
 * database at the old default path, as the plugin does). The other settings (compaction sizes, summary model,
 * spend guard) come from the same plugin config and LCM_* variables, resolved by the plugin's own resolveConfig.
 * Under `openclaw lcm` the host hands the config it loaded; the standalone `lcm` reads openclaw.json (JSON5) from
 * OPENCLAW_CONFIG_PATH, else $OPENCLAW_STATE_DIR/openclaw.json, else ~/.openclaw/openclaw.json. As the README
 * promises, an invalid LCM_* variable is a warning and ignored; and when the database is named without the config
 * (--db, LCM_DATABASE_PATH), an openclaw.json that cannot be read or holds invalid LCM settings is a warning too
 * (the settings take their defaults), so a broken config never stands between an operator and the database.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import JSON5 from "json5";
import { type LcmConfig, resolveConfig } from "../config.js";
import { silentLogger } from "../contracts.js";
import { chooseDefaultDatabasePath } from "../sqlite/default-database-path.js";
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
  /** `--database-url`: PostgreSQL, whatever LCM_DATABASE_URL and the config say. */
  databaseUrl?: string | undefined;
  /** An explicit openclaw.json path (`--config`). */
  configPath?: string | undefined;
  env: NodeJS.ProcessEnv;
  /** The OpenClaw config the host loaded (`openclaw lcm …`); absent for the standalone bin. */
  hostConfig?: unknown;
  /** Receives what was ignored (an invalid LCM_* variable; a config not needed to find the database). */
  warn?: (message: string) => void;
}

export function resolveCliConfig(input: CliConfigInput): CliConfig {
  const warn = input.warn ?? (() => {});
  const env = { ...input.env };
  if (input.db !== undefined) delete env.LCM_DATABASE_PATH;
  // --db names a SQLite file: it wins over a PostgreSQL URL from the environment or the config; --database-url over both.
  if (input.db !== undefined || input.databaseUrl !== undefined) delete env.LCM_DATABASE_URL;
  const source: DatabasePathSource = input.db !== undefined ? "--db" : env.LCM_DATABASE_PATH?.trim() ? "LCM_DATABASE_PATH" : "default";
  // With the database named elsewhere, the config only adds settings: a broken one is reported and skipped.
  const pathGiven = source !== "default";
  const opened = input.hostConfig !== undefined
    ? { pluginConfig: lcmEntryOf(input.hostConfig), path: null }
    : readOpenClawConfig(input.configPath, input.env, pathGiven ? warn : undefined);
  let pluginConfig = opened.pluginConfig;
  const fromConfig = source === "default" && typeof pluginConfig.databasePath === "string";
  const chosen = (settings: Record<string, unknown>): Record<string, unknown> => {
    if (input.databaseUrl !== undefined) return { ...settings, databaseUrl: input.databaseUrl };
    if (input.db !== undefined) return { ...withoutKey(settings, "databaseUrl"), databasePath: resolve(input.db) };
    return settings;
  };
  const resolveWith = (settings: Record<string, unknown>) => resolveConfig(
    chosen(settings), env,
    { defaultDatabasePath: (environment) => chooseDefaultDatabasePath(environment, silentLogger), reportProblem: (problem) => warn(problem) },
  );
  const where = opened.path ?? "the OpenClaw config";
  try {
    return { config: resolveWith(pluginConfig), databasePathSource: fromConfig ? "openclaw-config" : source, openClawConfigPath: opened.path };
  } catch (error) {
    const problem = describeError(error).replace(/^LcmError: /, "");
    if (!pathGiven || input.configPath !== undefined) {
      throw new CliError(EXIT.config, `${problem} (in plugins.entries.lcm.config of ${where}). Fix the setting, or pass --db <path> to use the defaults.`);
    }
    warn(`The LCM settings in ${where} are ignored (${problem}); the defaults apply. Fix the setting there.`);
    pluginConfig = {};
    return { config: resolveWith(pluginConfig), databasePathSource: source, openClawConfigPath: opened.path };
  }
}

/**
 * The standalone CLI's view of openclaw.json: the plugin entry's config, or {} when there is no file. A file that
 * cannot be read is an error, or, with `warn` (the database is named elsewhere), a warning and {}.
 */
function readOpenClawConfig(
  explicit: string | undefined, env: NodeJS.ProcessEnv, warn: ((message: string) => void) | undefined,
): { pluginConfig: Record<string, unknown>; path: string | null } {
  const path = explicit ?? openClawConfigPath(env);
  if (!existsSync(path)) {
    if (explicit !== undefined) throw new CliError(EXIT.config, `The OpenClaw config ${path} (--config) does not exist.`);
    return { pluginConfig: {}, path: null };
  }
  let parsed: unknown;
  try {
    parsed = JSON5.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const problem = `The OpenClaw config ${path} could not be read: ${describeError(error)}`;
    if (explicit !== undefined || !warn) {
      throw new CliError(EXIT.config, `${problem}. Fix the file, or pass --db <path> (the other LCM settings then take their defaults).`);
    }
    warn(`${problem}; its LCM settings are not used (the defaults apply). Fix the file for the gateway's sake.`);
    return { pluginConfig: {}, path };
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

function withoutKey(settings: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = settings;
  return rest;
}
