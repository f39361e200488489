/**
 * The plugin's settings as they are now, not as they were when the plugin registered (specs/016-session-lifecycle.md).
 * The plugin declares `plugins.entries.lcm.config` a "dynamic read" (`reload.noopPrefixes`): editing it does not make
 * OpenClaw retire and reload the plugin, which used to drop turns for tens of seconds, or be refused while a turn ran
 * and never retried. Instead every engine, tool call and command reads the host's current config here; a change is
 * resolved once, logged with the settings that changed, and applies from the next turn on.
 *
 * A setting OpenClaw let through but LCM cannot use (an invalid `LCM_*` variable, fan-outs in the wrong order) is
 * reported as a warning and ignored. A config that cannot be used at all keeps the last one that could, loudly.
 */
import type { Logger } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { describeError } from "../errors.js";
import { logOnce } from "./log-once.js";

export interface LiveConfigOptions<T> {
  /** The plugin's config object now (plugins.entries.lcm.config). Contract: may throw (a retired host API). */
  read: () => unknown;
  /** Resolves and validates; reports what it ignored through `report`; throws when nothing usable results. */
  resolve: (raw: unknown, report: (problem: string) => void) => LcmConfig;
  /** What the plugin builds from a config (database access, summarizers, filters): rebuilt only on a change. */
  build: (config: LcmConfig) => T;
  logger: Logger;
}

export interface Resolved<T> {
  config: LcmConfig;
  wiring: T;
}

export class LiveConfig<T> {
  private key: string | undefined;
  private resolved: Resolved<T> | undefined;

  constructor(private readonly options: LiveConfigOptions<T>) {}

  /** The settings now. Throws only when the very first config cannot be used (registration then fails, saying why). */
  current(): Resolved<T> {
    const raw = this.readRaw();
    const key = stableJson(raw);
    if (this.resolved && key === this.key) return this.resolved;
    let config: LcmConfig;
    try {
      config = this.options.resolve(raw, (problem) => logOnce(this.options.logger, "warn", `config-problem:${problem}`, problem));
    } catch (error) {
      if (!this.resolved) throw error;
      logOnce(this.options.logger, "error", `config-rejected:${key}`,
        `The new LCM settings cannot be used: ${describeError(error)} LCM keeps the previous settings; fix the value ` +
          "(openclaw config set plugins.entries.lcm.config.<key> <value>).");
      this.key = key;
      return this.resolved;
    }
    const previous = this.resolved?.config;
    const previousKey = this.key;
    this.resolved = { config, wiring: this.options.build(config) };
    this.key = key;
    if (previous) {
      const changed = changedSettings(previous, config);
      // Once per process per change: every registration of the plugin (OpenClaw loads it several times) notices it.
      if (changed.length > 0) {
        logOnce(this.options.logger, "info", `settings-changed:${previousKey}:${key}`,
          `Settings changed (${changed.join(", ")}): applied from the next turn, no restart needed.`);
      }
    }
    return this.resolved;
  }

  private readRaw(): unknown {
    try {
      return this.options.read();
    } catch (error) {
      // The host's config API is gone (the plugin is retiring): the settings stay as they were.
      if (this.resolved) return JSON.parse(this.key ?? "{}") as unknown;
      throw error;
    }
  }
}

function changedSettings(before: LcmConfig, after: LcmConfig): string[] {
  return (Object.keys(after) as (keyof LcmConfig)[]).filter((key) => stableJson(before[key]) !== stableJson(after[key]))
    .map((key) => `${key} ${show(before[key])} → ${show(after[key])}`);
}

function show(value: unknown): string {
  return value === undefined ? "unset" : JSON.stringify(value);
}

/** JSON with object keys sorted, so an equal config always gives the same text. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([left], [right]) => left.localeCompare(right)))
      : item) ?? "null";
}
