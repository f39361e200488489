/**
 * A PostgreSQL pool opened read-only (`lcm mcp` without --writable and the CLI's reading commands, as on SQLite): every
 * session it opens runs with `default_transaction_read_only=on`, so the server itself refuses a write, whichever code
 * path tries one. The schema is checked, never created or upgraded, and a refused write becomes an error that says
 * what happened and what to run instead.
 */
import { LcmError } from "../errors.js";
import type { PgMigrationTarget } from "./pg-migrations.js";
import { PG_SCHEMA_VERSION, storedSchemaVersion } from "./pg-migrations.js";

/** The session setting that makes every transaction of a connection read-only (SQLSTATE 25006 on a write). */
export const READ_ONLY_SESSION = { default_transaction_read_only: "on" } as const;

/** SQLSTATE of a write in a read-only transaction. */
const READ_ONLY_TRANSACTION = "25006";

/**
 * The connection URL with the read-only setting appended to an `options` parameter it carries (the driver lets the
 * URL's `options` replace the pool's, which would drop the setting); unchanged otherwise.
 */
export function keepingReadOnlyInUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // The driver reports an unparsable URL when it connects; nothing to keep.
  }
  const options = parsed.searchParams.get("options");
  if (options === null) return url;
  parsed.searchParams.set("options", `${options} ${sessionOptions(READ_ONLY_SESSION)}`);
  return parsed.toString();
}

/** Session settings as the startup `options` parameter takes them (`-c name=value …`). */
export function sessionOptions(settings: Record<string, string>): string {
  return Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`).join(" ");
}

/**
 * The server's refusal of a write on a read-only session as an LcmError("unavailable") naming the database and what
 * to run instead; any other error unchanged.
 */
export function asReadOnlyRefusal(error: unknown, location: string): unknown {
  if ((error as { code?: unknown } | null)?.code !== READ_ONLY_TRANSACTION) return error;
  return new LcmError(
    "unavailable",
    `This needs to write to the PostgreSQL database ${location}, which this command opened read-only: the server refused the write ` +
      `(${(error as Error).message}). Nothing was changed. Run \`lcm mcp\` with --writable, or a command that writes.`,
    { sqlState: READ_ONLY_TRANSACTION, databaseLocation: location },
    { cause: error },
  );
}

/**
 * Before a read-only pool's first statement: the database must hold this build's schema, since a read-only session can
 * neither create nor upgrade it. Throws LcmError("unavailable") with `details.databaseProblem` (the CLI's exit codes:
 * cli/exit-codes.ts) otherwise.
 */
export async function checkReadableSchema(database: PgMigrationTarget, location: string): Promise<void> {
  const version = await storedSchemaVersion(database);
  if (version === PG_SCHEMA_VERSION) return;
  if (version === 0) {
    throw new LcmError("unavailable",
      `No LCM database at ${location}: it holds no LCM schema yet, and this command opened it read-only, so it cannot create one. ` +
        "Check the URL (--database-url, LCM_DATABASE_URL or plugins.entries.lcm.config.databaseUrl), or let the gateway or a command " +
        "that writes create it first.",
      { databaseProblem: "no-database", databaseLocation: location });
  }
  if (version > PG_SCHEMA_VERSION) {
    throw new LcmError("unavailable",
      `The LCM schema in ${location} is version ${version}, newer than this build's (${PG_SCHEMA_VERSION}): a newer LCM wrote it, ` +
        "and lcm left it untouched. Run the lcm of that newer version (upgrade the plugin).",
      { databaseProblem: "refused", databaseLocation: location });
  }
  throw new LcmError("unavailable",
    `The LCM schema in ${location} is version ${version}, older than this build's (${PG_SCHEMA_VERSION}); reading it needs the upgrade ` +
      "a write does, and this command opened it read-only. Let the gateway open it first, or run a command that writes " +
      "(e.g. `lcm doctor --repair`, or `lcm mcp --writable`).",
    { databaseProblem: "unavailable", databaseLocation: location });
}
