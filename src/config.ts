/**
 * Plugin configuration: one table of settings drives parsing, validation, defaults, the `LCM_*` environment
 * overrides and the manifest's configSchema/uiHints (test/config.test.ts keeps the manifest in step).
 * Resolution is all-or-nothing: an invalid value throws an LcmError naming the key, the value and the range.
 */
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { LcmError } from "./errors.js";

export interface LcmConfig {
  enabled: boolean;
  databasePath: string;
  /** A PostgreSQL URL (postgres://…): the database is PostgreSQL, and databasePath is not used. Unset: SQLite. */
  databaseUrl: string | undefined;
  filesDirectory: string;
  contextThreshold: number;
  freshTailCount: number;
  freshTailBudgetShare: number;
  leafMinFanout: number;
  condensedMinFanout: number;
  condensedMinFanoutHard: number;
  incrementalMaxDepth: number;
  leafChunkTokens: number;
  leafTargetTokens: number;
  condensedTargetTokens: number;
  maxExpandTokens: number;
  largeFileTokenThreshold: number;
  largeMessageBudgetShare: number;
  summaryModel: string | undefined;
  summaryProvider: string | undefined;
  autocompactDisabled: boolean;
  defaultTokenBudget: number;
  summaryTimeoutMs: number;
  expansionTimeoutMs: number;
  allowCrossAgentRecall: boolean;
  customInstructions: string | undefined;
  maxSummaryCallsPerWindow: number;
  summaryCallWindowMinutes: number;
  metricsEnabled: boolean;
  ignoreSessionPatterns: readonly string[];
  statelessSessionPatterns: readonly string[];
  newSessionCarryOverTokens: number;
  retentionMaxDatabaseMb: number;
  retentionMaxAgeDays: number;
  retentionPruneEndedSessions: boolean;
  retentionArchiveDirectory: string;
}

type SettingType = "boolean" | "integer" | "number" | "string" | "string-list";

/** Patterns per session-filter setting at most, and characters per pattern. */
const MAX_LIST_ENTRIES = 100;
const MAX_LIST_ENTRY_LENGTH = 200;

export interface SettingSpec {
  key: keyof LcmConfig;
  env: string;
  type: SettingType;
  /** Undefined means "no default": optional string settings, or paths derived at resolve time. */
  defaultValue?: boolean | number | string | readonly string[];
  min?: number;
  max?: number;
  /** For numbers: whether `min` itself is excluded (contextThreshold must be > 0). */
  exclusiveMin?: boolean;
  label: string;
  help: string;
}

export const SETTINGS: readonly SettingSpec[] = [
  { key: "enabled", env: "LCM_ENABLED", type: "boolean", defaultValue: true, label: "Enabled",
    help: "When false the context engine is not registered (OpenClaw keeps its built-in engine); stored history stays untouched." },
  { key: "databasePath", env: "LCM_DATABASE_PATH", type: "string", label: "Database path",
    help: "SQLite file holding every message and summary. Default: lcm-context.db in $OPENCLAW_STATE_DIR, else in ~/.openclaw; an LCM database already at lcm.db there keeps being used. A file that is not LCM's is never modified." },
  { key: "databaseUrl", env: "LCM_DATABASE_URL", type: "string", label: "PostgreSQL URL",
    help: "postgres://user:password@host:port/database: store everything in PostgreSQL instead of the SQLite file, so that several gateways share one history (docs/operations.md, \"PostgreSQL\"). Unset (the default): SQLite at databasePath." },
  { key: "filesDirectory", env: "LCM_FILES_DIRECTORY", type: "string", label: "Large-file directory",
    help: "Where intercepted large files are stored. Default: <database name>-files/ beside the database (lcm-context-files/ for lcm-context.db), so two databases never share one." },
  { key: "contextThreshold", env: "LCM_CONTEXT_THRESHOLD", type: "number", defaultValue: 0.75, min: 0, max: 1,
    exclusiveMin: true, label: "Context threshold",
    help: "Fraction of the token budget at which a full compaction sweep runs after a turn." },
  { key: "freshTailCount", env: "LCM_FRESH_TAIL_COUNT", type: "integer", defaultValue: 32, min: 0, max: 10_000,
    label: "Fresh tail",
    help: "Most recent raw messages kept raw (not summarized) while they fit freshTailBudgetShare of the budget." },
  { key: "freshTailBudgetShare", env: "LCM_FRESH_TAIL_BUDGET_SHARE", type: "number", defaultValue: 0.4, min: 0, max: 1,
    exclusiveMin: true, label: "Fresh tail budget share",
    help: "Most of the token budget the fresh tail may take; older tail messages beyond it are summarized like any other." },
  { key: "leafMinFanout", env: "LCM_LEAF_MIN_FANOUT", type: "integer", defaultValue: 8, min: 2, max: 1_000,
    label: "Leaf minimum fan-out", help: "Fewest raw messages one leaf summary may cover." },
  { key: "condensedMinFanout", env: "LCM_CONDENSED_MIN_FANOUT", type: "integer", defaultValue: 4, min: 2, max: 1_000,
    label: "Condensed minimum fan-out", help: "Fewest same-depth summaries merged into one condensed summary." },
  { key: "condensedMinFanoutHard", env: "LCM_CONDENSED_MIN_FANOUT_HARD", type: "integer", defaultValue: 2, min: 2,
    max: 1_000, label: "Condensed fan-out under pressure",
    help: "Relaxed fan-out used by forced and budget-targeted sweeps. Must not exceed condensedMinFanout." },
  { key: "incrementalMaxDepth", env: "LCM_INCREMENTAL_MAX_DEPTH", type: "integer", defaultValue: 0, min: 0, max: 32,
    label: "Incremental depth", help: "Depth up to which condensation follows the per-turn leaf pass (0 = leaf only)." },
  { key: "leafChunkTokens", env: "LCM_LEAF_CHUNK_TOKENS", type: "integer", defaultValue: 20_000, min: 256,
    max: 1_000_000, label: "Leaf chunk tokens",
    help: "Largest source size of one leaf pass; also the raw backlog that triggers the per-turn leaf pass." },
  { key: "leafTargetTokens", env: "LCM_LEAF_TARGET_TOKENS", type: "integer", defaultValue: 1_200, min: 32,
    max: 100_000, label: "Leaf target tokens", help: "Target size of a leaf summary." },
  { key: "condensedTargetTokens", env: "LCM_CONDENSED_TARGET_TOKENS", type: "integer", defaultValue: 2_000, min: 32,
    max: 100_000, label: "Condensed target tokens", help: "Target size of a condensed summary." },
  { key: "maxExpandTokens", env: "LCM_MAX_EXPAND_TOKENS", type: "integer", defaultValue: 4_000, min: 100,
    max: 1_000_000, label: "Expansion token cap", help: "Most source tokens one delegated expansion may read." },
  { key: "largeFileTokenThreshold", env: "LCM_LARGE_FILE_TOKEN_THRESHOLD", type: "integer", defaultValue: 25_000,
    min: 100, max: 10_000_000, label: "Large-file threshold",
    help: "File blocks, pastes and tool outputs at or above this many tokens are stored aside and replaced by a reference." },
  { key: "largeMessageBudgetShare", env: "LCM_LARGE_MESSAGE_BUDGET_SHARE", type: "number", defaultValue: 0.5, min: 0,
    max: 1, exclusiveMin: true, label: "Large message budget share",
    help: "A pasted text, file block or tool output above this share of the token budget is also stored aside (small windows)." },
  { key: "summaryModel", env: "LCM_SUMMARY_MODEL", type: "string", label: "Summary model",
    help: "Model for summaries (\"provider/model\" for the host, a model id for the standalone Anthropic client)." },
  { key: "summaryProvider", env: "LCM_SUMMARY_PROVIDER", type: "string", label: "Summary provider",
    help: "Provider for summaries when summaryModel names only the model." },
  { key: "autocompactDisabled", env: "LCM_AUTOCOMPACT_DISABLED", type: "boolean", defaultValue: false,
    label: "Disable automatic compaction",
    help: "When true, compaction runs only on /compact, /lcm compact or a provider overflow." },
  { key: "defaultTokenBudget", env: "LCM_DEFAULT_TOKEN_BUDGET", type: "integer", defaultValue: 128_000, min: 1_000,
    max: 10_000_000, label: "Default token budget",
    help: "Budget used when the host gives neither tokenBudget nor a prompt token budget." },
  { key: "summaryTimeoutMs", env: "LCM_SUMMARY_TIMEOUT_MS", type: "integer", defaultValue: 60_000, min: 1_000,
    max: 3_600_000, label: "Summary timeout (ms)", help: "One summarizer call is abandoned (and escalated) after this." },
  { key: "expansionTimeoutMs", env: "LCM_EXPANSION_TIMEOUT_MS", type: "integer", defaultValue: 120_000, min: 1_000,
    max: 3_600_000, label: "Expansion deadline (ms)", help: "Deadline of one lcm_expand_query call, sub-agent included." },
  { key: "allowCrossAgentRecall", env: "LCM_ALLOW_CROSS_AGENT_RECALL", type: "boolean", defaultValue: false,
    label: "Cross-agent recall", help: "When true, recall tools may read conversations of other agents." },
  { key: "customInstructions", env: "LCM_CUSTOM_INSTRUCTIONS", type: "string", label: "Summary instructions",
    help: "Extra instructions appended to every summarization prompt." },
  { key: "maxSummaryCallsPerWindow", env: "LCM_MAX_SUMMARY_CALLS_PER_WINDOW", type: "integer", defaultValue: 100, min: 1,
    max: 1_000_000, label: "Summary model calls per window",
    help: "Spend guard: most summarizer model calls one conversation may make within summaryCallWindowMinutes; past it compaction writes deterministic summaries (no model call) until the window frees calls." },
  { key: "summaryCallWindowMinutes", env: "LCM_SUMMARY_CALL_WINDOW_MINUTES", type: "integer", defaultValue: 60, min: 1,
    max: 10_080, label: "Spend guard window (minutes)", help: "The sliding window of the spend guard (maxSummaryCallsPerWindow)." },
  { key: "metricsEnabled", env: "LCM_METRICS_ENABLED", type: "boolean", defaultValue: false, label: "Prometheus metrics",
    help: "When true, the gateway serves Prometheus metrics at /lcm/metrics (gateway auth: the gateway token as a bearer token); while false that path answers 404. A change applies from the next request." },
  { key: "ignoreSessionPatterns", env: "LCM_IGNORE_SESSION_PATTERNS", type: "string-list",
    defaultValue: ["*:heartbeat", "agent:*:internal-session-effects:*", "agent:*:dreaming-narrative-*"],
    label: "Sessions LCM ignores",
    help: "Session keys LCM stays out of entirely (* matches any characters): nothing stored, OpenClaw's own context and compaction, no recall tools. Default: heartbeat and memory-helper sessions." },
  { key: "statelessSessionPatterns", env: "LCM_STATELESS_SESSION_PATTERNS", type: "string-list",
    defaultValue: ["agent:*:cron:*", "agent:*:subagent:*"],
    label: "Sessions LCM does not store",
    help: "Session keys whose messages LCM never stores (* matches any characters): OpenClaw's own context and compaction, but the recall tools can read the agent's stored conversations. Default: cron jobs and sub-agents." },
  { key: "newSessionCarryOverTokens", env: "LCM_NEW_SESSION_CARRY_OVER_TOKENS", type: "integer", defaultValue: 2_000, min: 0,
    max: 100_000, label: "Carried into a new session",
    help: "After /new (or an idle or daily reset), the newest top-level summaries of the earlier session the model still sees, in tokens (at most a quarter of the budget); 0 starts empty. /reset carries nothing. Earlier messages stay searchable." },
  { key: "retentionMaxDatabaseMb", env: "LCM_RETENTION_MAX_DATABASE_MB", type: "integer", defaultValue: 0, min: 0,
    max: 10_000_000, label: "Retention: database size cap (MB)",
    help: "Retention (off at 0): above this size, the oldest raw messages that summaries already cover (and, with retentionPruneEndedSessions, conversations whose session is gone) are written to a gzip archive, then removed from the database. Summaries stay." },
  { key: "retentionMaxAgeDays", env: "LCM_RETENTION_MAX_AGE_DAYS", type: "integer", defaultValue: 0, min: 0,
    max: 36_500, label: "Retention: message age cap (days)",
    help: "Retention (off at 0): raw messages older than this that summaries already cover are written to a gzip archive, then removed from the database (never the context's raw messages). Summaries stay." },
  { key: "retentionPruneEndedSessions", env: "LCM_RETENTION_PRUNE_ENDED_SESSIONS", type: "boolean", defaultValue: false,
    label: "Retention: archive ended sessions",
    help: "When true, conversations whose host session was deleted are archived whole and removed: after retentionMaxAgeDays of inactivity (at once when no age cap is set), and first under the size cap." },
  { key: "retentionArchiveDirectory", env: "LCM_RETENTION_ARCHIVE_DIRECTORY", type: "string", label: "Retention archive directory",
    help: "Where retention writes its gzip JSONL archives. Default: <database name>-archive/ beside the database." },
];

/**
 * The database file in OpenClaw's state folder. Not `lcm.db`: the lossless-claw plugin defaults to that name, with
 * the same table names, so a user switching plugins would point LCM at the other plugin's file.
 */
export const DEFAULT_DATABASE_FILE = "lcm-context.db";
/** Where the database path is set, as a user would type it (messages about the database name it). */
export const DATABASE_PATH_SETTING = "plugins.entries.lcm.config.databasePath (or the LCM_DATABASE_PATH environment variable)";
/** LCM's default file name before it changed; an LCM database there keeps being used (sqlite/default-database-path.ts). */
export const LEGACY_DATABASE_FILE = "lcm.db";

/** Default database location: $OPENCLAW_STATE_DIR/lcm-context.db, else ~/.openclaw/lcm-context.db. */
export function defaultDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDirectory(env), DEFAULT_DATABASE_FILE);
}

/** Where LCM's default database was before it was renamed: `lcm.db` in the same folder. */
export function legacyDefaultDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDirectory(env), LEGACY_DATABASE_FILE);
}

function stateDirectory(env: NodeJS.ProcessEnv): string {
  const stateDir = env.OPENCLAW_STATE_DIR?.trim();
  return stateDir ? expandHome(stateDir) : join(homedir(), ".openclaw");
}

/** `<name>-files` beside the database file: `lcm-context-files/` for `lcm-context.db`. One directory per database. */
export function defaultFilesDirectory(databasePath: string): string {
  return join(dirname(databasePath), `${basename(databasePath).replace(/\.(db|sqlite3?)$/i, "")}-files`);
}

/** `<name>-archive` beside the database file: where retention writes what it removes (lcm-context-archive/). */
export function defaultArchiveDirectory(databasePath: string): string {
  return join(dirname(databasePath), `${basename(databasePath).replace(/\.(db|sqlite3?)$/i, "")}-archive`);
}

/** A URL (or text that should have been one) as a message may show it: without the password. */
export function redactedUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, "$1***@");
}

function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}

export interface ResolveOptions {
  /**
   * Picks the database path when none is configured. Default: `defaultDatabasePath`, which reads nothing; the
   * plugin passes one that keeps an existing LCM database at the legacy path (sqlite/default-database-path.ts).
   */
  defaultDatabasePath?: (env: NodeJS.ProcessEnv) => string;
  /**
   * Receives each problem instead of a throw: an invalid `LCM_*` variable is then ignored (the plugin config's value
   * or the default applies) and a condensedMinFanoutHard above condensedMinFanout is lowered to it. Without it,
   * resolution throws on the first problem.
   */
  reportProblem?: (problem: string) => void;
}

/**
 * Resolves the configuration from plugin config (`api.pluginConfig`) and `LCM_*` environment variables;
 * environment variables win. Throws LcmError("invalid_config") on the first invalid or unknown key.
 */
export function resolveConfig(
  pluginConfig: unknown = {},
  env: NodeJS.ProcessEnv = process.env,
  options: ResolveOptions = {},
): LcmConfig {
  const source = pluginConfig ?? {};
  if (typeof source !== "object" || Array.isArray(source)) {
    throw new LcmError("invalid_config", `Plugin config must be an object, got ${describe(source)}.`);
  }
  const known = new Set<string>(SETTINGS.map((setting) => setting.key));
  for (const key of Object.keys(source)) {
    if (!known.has(key)) {
      throw new LcmError("invalid_config", `Unknown setting "${key}". Known settings: ${[...known].join(", ")}.`);
    }
  }
  const values: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const fromEnv = env[setting.env];
    const fromEnvValue = fromEnv !== undefined && fromEnv !== "" ? parseEnvironment(setting, fromEnv, options.reportProblem) : NOT_SET;
    if (fromEnvValue !== NOT_SET) {
      values[setting.key] = fromEnvValue;
    } else if ((source as Record<string, unknown>)[setting.key] !== undefined) {
      values[setting.key] = checkValue(setting, (source as Record<string, unknown>)[setting.key], `setting "${setting.key}"`);
    } else {
      values[setting.key] = setting.defaultValue;
    }
  }
  if (values.databaseUrl !== undefined && !/^postgres(ql)?:\/\/./.test(values.databaseUrl as string)) {
    throw new LcmError("invalid_config", `databaseUrl must be a PostgreSQL URL (postgres://user:password@host:port/database), got "${redactedUrl(values.databaseUrl as string)}".`);
  }
  const databasePath = expandHome((values.databasePath as string | undefined) ?? (options.defaultDatabasePath ?? defaultDatabasePath)(env));
  values.databasePath = databasePath;
  values.filesDirectory = expandHome((values.filesDirectory as string | undefined) ?? defaultFilesDirectory(databasePath));
  values.retentionArchiveDirectory = expandHome((values.retentionArchiveDirectory as string | undefined) ?? defaultArchiveDirectory(databasePath));
  const config = values as unknown as LcmConfig;
  if (config.condensedMinFanoutHard > config.condensedMinFanout) {
    const problem =
      `condensedMinFanoutHard (${config.condensedMinFanoutHard}) must not exceed condensedMinFanout (${config.condensedMinFanout}).`;
    if (!options.reportProblem) throw new LcmError("invalid_config", problem);
    options.reportProblem(`${problem} Using ${config.condensedMinFanout} for both.`);
    values.condensedMinFanoutHard = config.condensedMinFanout;
  }
  return Object.freeze(config);
}

const NOT_SET = Symbol("not set");

/** An environment variable's value; an invalid one throws, or is reported and ignored when `report` is given. */
function parseEnvironment(setting: SettingSpec, raw: string, report: ((problem: string) => void) | undefined): unknown {
  try {
    return parseValue(setting, raw, `environment variable ${setting.env}`);
  } catch (error) {
    if (!report || !(error instanceof LcmError)) throw error;
    report(`${error.message} The variable is ignored: "${setting.key}" keeps its value from the plugin config or its default.`);
    return NOT_SET;
  }
}

function parseValue(setting: SettingSpec, raw: string, where: string): unknown {
  const text = raw.trim();
  switch (setting.type) {
    case "boolean":
      if (/^(1|true|yes|on)$/i.test(text)) return true;
      if (/^(0|false|no|off)$/i.test(text)) return false;
      throw invalid(setting, raw, where, "true or false");
    case "integer":
    case "number": {
      const value = Number(text);
      if (text === "" || !Number.isFinite(value)) throw invalid(setting, raw, where, rangeText(setting));
      return checkValue(setting, value, where);
    }
    case "string":
      return checkValue(setting, raw, where);
    case "string-list":
      // Comma-separated; "none" is the empty list (an empty variable means "not set").
      return checkValue(setting, /^none$/i.test(text) ? [] : text.split(",").map((entry) => entry.trim()).filter(Boolean), where);
  }
}

function checkValue(setting: SettingSpec, value: unknown, where: string): unknown {
  switch (setting.type) {
    case "boolean":
      if (typeof value !== "boolean") throw invalid(setting, value, where, "true or false");
      return value;
    case "string":
      if (typeof value !== "string" || value.trim() === "") throw invalid(setting, value, where, "a non-empty string");
      return value;
    case "string-list": {
      const isList = Array.isArray(value) && value.length <= MAX_LIST_ENTRIES && value.every((entry) =>
        typeof entry === "string" && entry.trim() !== "" && entry.length <= MAX_LIST_ENTRY_LENGTH);
      if (!isList) {
        throw invalid(setting, value, where, `a list of at most ${MAX_LIST_ENTRIES} non-empty patterns of at most ${MAX_LIST_ENTRY_LENGTH} characters`);
      }
      return Object.freeze((value as string[]).map((entry) => entry.trim()));
    }
    case "integer":
    case "number": {
      const isNumber = typeof value === "number" && Number.isFinite(value);
      const isWhole = isNumber && (setting.type === "number" || Number.isInteger(value));
      const min = setting.min ?? -Infinity;
      const max = setting.max ?? Infinity;
      const aboveMin = isNumber && (setting.exclusiveMin ? value > min : value >= min);
      if (!isWhole || !aboveMin || (value as number) > max) throw invalid(setting, value, where, rangeText(setting));
      return value;
    }
  }
}

function rangeText(setting: SettingSpec): string {
  const kind = setting.type === "integer" ? "an integer" : "a number";
  const low = setting.min === undefined ? "" : `${setting.exclusiveMin ? ">" : ">="} ${setting.min}`;
  const high = setting.max === undefined ? "" : `<= ${setting.max}`;
  return [kind, [low, high].filter(Boolean).join(" and ")].filter(Boolean).join(" ");
}

function invalid(setting: SettingSpec, value: unknown, where: string, expected: string): LcmError {
  return new LcmError(
    "invalid_config",
    `Invalid ${where}: ${describe(value)}. Expected ${expected} for "${setting.key}".`,
  );
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null || typeof value !== "object") return String(value);
  if (Array.isArray(value)) return value.length <= 5 ? JSON.stringify(value).slice(0, 200) : `a list of ${value.length} entries`;
  return "an object";
}
