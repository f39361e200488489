/**
 * One log line per process per cause. The host builds an engine for every turn and loads the plugin module
 * several times per process, so a condition that lasts (a database that cannot be opened, a file left alone at
 * the old default path) would otherwise log on every hook call. The set of causes already logged is shared
 * process-wide (process-shared.ts); a cause is logged again only after `forgetLogged` (the condition ended).
 */
import type { Logger } from "../contracts.js";
import { processShared } from "./process-shared.js";

function logged(): Set<string> {
  return processShared("log-once.v1", () => new Set<string>());
}

/** Logs `message` at `level` unless a line for `cause` was already logged in this process. Returns whether it logged. */
export function logOnce(logger: Logger, level: "info" | "warn" | "error", cause: string, message: string): boolean {
  const causes = logged();
  if (causes.has(cause)) return false;
  causes.add(cause);
  logger[level](message);
  return true;
}

/** Lets the next `logOnce` for causes starting with `prefix` log again (the condition was resolved). */
export function forgetLogged(prefix: string): void {
  const causes = logged();
  for (const cause of causes) if (cause.startsWith(prefix)) causes.delete(cause);
}
