/**
 * The database path when none is configured. LCM's default file used to be `lcm.db` in OpenClaw's state folder,
 * which is also the default of the lossless-claw plugin, with the same table names; the default is now
 * `lcm-context.db`. An LCM database already at `lcm.db` keeps being used, so upgrading loses nothing; anything
 * else found there (the other plugin's database) is left alone, said once in the log, and the new name is used.
 */
import { existsSync } from "node:fs";
import { defaultDatabasePath, legacyDefaultDatabasePath } from "../config.js";
import type { Logger } from "../contracts.js";
import { logOnce } from "../runtime/log-once.js";
import { type DatabaseFileState, inspectDatabaseFile } from "./database-file.js";

/** A short wait: this runs while the plugin registers; opening the file later waits longer for a lock. */
const INSPECT_WAIT_MS = 1_000;

export function chooseDefaultDatabasePath(
  env: NodeJS.ProcessEnv,
  logger: Logger,
  inspect: (path: string) => DatabaseFileState = (path) => inspectDatabaseFile(path, INSPECT_WAIT_MS),
): string {
  const legacy = legacyDefaultDatabasePath(env);
  const current = defaultDatabasePath(env);
  const state = inspect(legacy);
  switch (state.kind) {
    case "ours":
      return legacy;
    case "unreadable":
      // Whose it is cannot be told: keep pointing at it (opening it reports the problem with a fix) rather than
      // start a second, empty history beside what may be the user's own.
      return existsSync(current) ? current : legacy;
    case "foreign":
    case "not-sqlite":
      logOnce(
        logger, "info", `default-database:${legacy}`,
        `Found ${state.found} at ${legacy}, the old default path (shared with the lossless-claw plugin): left it ` +
          `untouched. LCM keeps its history in ${current}; set databasePath to use another file.`,
      );
      return current;
    case "missing":
    case "new":
      return current;
  }
}
