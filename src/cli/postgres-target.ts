/**
 * Where the CLI opens a PostgreSQL database (a composition root, like cli-runtime.ts): `openPostgresForCli` for any
 * command (its backup a portable SQLite file, transfer/table-backup.ts), and the two databases of `lcm migrate`, named
 * on its command line whatever --db and LCM_DATABASE_PATH say. A SQLite target that does not exist yet is created; a
 * PostgreSQL database gets LCM's schema on the first statement.
 */
import { existsSync } from "node:fs";
import { redactedUrl } from "../config.js";
import { openPostgresBackend, type PostgresBackend, type PostgresBackendOptions } from "../postgres/open-postgres-backend.js";
import { openSqliteBackend } from "../sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "../store/backend.js";
import type { BackupStore } from "../store/backup-store.js";
import { CliError, EXIT } from "./exit-codes.js";

/** The SQLite file a migration reads (it writes only to bring an older LCM schema up to date, as any command does). */
export function openSqliteSource(path: string, argument: string): LcmBackend {
  return openSqliteBackend(path, { command: "prefer-write", pathSource: `the ${argument} argument` });
}

/** The SQLite file a migration writes: created (with its folder's permissions rules) when there is none. */
export function openSqliteTarget(path: string, argument: string): LcmBackend {
  if (!existsSync(path)) return openSqliteBackend(path, "private");
  return openSqliteBackend(path, { command: "write", pathSource: `the ${argument} argument` });
}

/**
 * A PostgreSQL database by its URL for one command: a pool of its own (close() ends it), and `lcm backup` writing a
 * portable SQLite file. `argument` names where the URL came from, for the message when it is not one.
 */
export function openPostgresForCli(url: string, argument: string, options: PostgresBackendOptions = {}): PostgresBackend {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new CliError(EXIT.usage, `${argument} must be a PostgreSQL URL (postgres://user:password@host:5432/database), got ${JSON.stringify(redactedUrl(url))}.`);
  }
  const backend = openPostgresBackend(url, "private", { applicationName: "lcm-cli", ...options });
  // The copy is loaded when a backup runs: the other commands never load transfer/.
  const backup: BackupStore = {
    backupTo: async (target, backupOptions) => (await import("../transfer/table-backup.js"))
      .backupByTableCopy(backend.tableCopy, (path) => openSqliteBackend(path, "private")).backupTo(target, backupOptions),
  };
  return { ...backend, backup };
}
