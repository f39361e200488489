/**
 * Adapts the host's PluginLogger (plain strings) to the Logger contract, prefixing every line with the plugin
 * id and appending structured fields as JSON. Logging never throws.
 */
import type { Logger } from "../contracts.js";
import type { PluginLogger } from "../host/openclaw-types.js";

export function hostLogger(logger: PluginLogger | undefined, prefix = "[lcm]"): Logger {
  const write = (level: "debug" | "info" | "warn" | "error", message: string, fields?: Record<string, unknown>) => {
    try {
      const line = `${prefix} ${message}${fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : ""}`;
      const sink = logger?.[level] ?? (level === "debug" ? undefined : logger?.info);
      if (sink) sink.call(logger, line);
      else if (!logger && level !== "debug") console[level === "info" ? "log" : level](line);
    } catch {
      // A broken host logger must not break a hook; there is nowhere else to report it.
    }
  };
  return {
    debug: (message, fields) => write("debug", message, fields),
    info: (message, fields) => write("info", message, fields),
    warn: (message, fields) => write("warn", message, fields),
    error: (message, fields) => write("error", message, fields),
  };
}
