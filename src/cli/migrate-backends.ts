/**
 * Where `lcm migrate` opens its two databases (a composition root, like cli-runtime.ts): the SQLite file and the
 * PostgreSQL database named on its command line, whatever --db and LCM_DATABASE_PATH say. A SQLite target that does
 * not exist yet is created; a PostgreSQL database gets LCM's schema on the first statement.
 */
import { existsSync } from "node:fs";
import { openPostgresBackend } from "../postgres/open-postgres-backend.js";
import { openSqliteBackend } from "../sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "../store/backend.js";
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

/** A PostgreSQL database by its URL (a pool of its own, ended when the command closes it). */
export function openPostgres(url: string, argument: string): LcmBackend & { closed(): Promise<void> } {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new CliError(EXIT.usage, `${argument} must be a PostgreSQL URL (postgres://user:password@host:5432/database), got ${JSON.stringify(redacted(url))}.`);
  }
  const backend = openPostgresBackend(url, "private", { applicationName: "openclaw-lcm migrate" });
  return Object.assign(backend, { closed: () => backend.database.close() });
}

function redacted(text: string): string {
  return text.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");
}
