/**
 * Opens the database for one CLI command, never changing a file that is not LCM's: the file is inspected read-only
 * first (db/database-file.ts). Read commands open a read-only connection (nothing written, no journal mode or
 * permission changed; a WAL file without its -wal is opened immutable, so nothing is left behind). Write commands
 * (compact, doctor --repair) open a private read-write connection, which migrates an older LCM schema. "prefer-write"
 * (grep and doctor, which index messages still waiting for the full-text index, as the tools do) writes when the
 * file is writable and reads otherwise.
 */
import { Database } from "../db/database.js";
import { inspectDatabaseFile, readOnlyLocation, readOnlyReason } from "../db/database-file.js";
import { openDatabase } from "../db/connection-registry.js";
import { databaseProblemOf, describeDatabaseProblem } from "../db/database-problem.js";
import { MIGRATIONS } from "../db/migrations.js";
import { describeError, isLcmError } from "../errors.js";
import { CliError, EXIT } from "./exit-codes.js";

/**
 * "read-live": read-only, but never `immutable`, so a long-lived reader (`lcm mcp`) sees what a gateway commits while
 * it runs; SQLite may then leave an empty `-wal` and `-shm` beside a file that had none.
 */
export type AccessMode = "read" | "read-live" | "write" | "prefer-write";

export interface CliDatabase {
  database: Database;
  /** True when the connection cannot write. */
  readOnly: boolean;
  /** Why it is read-only when a write was preferred (shown as a note). */
  notice: string | null;
}

export function openCliDatabase(path: string, mode: AccessMode, pathSource: string): CliDatabase {
  const latest = MIGRATIONS.at(-1)?.version ?? 0;
  const state = inspectDatabaseFile(path);
  switch (state.kind) {
    case "missing":
    case "new":
      throw new CliError(EXIT.noDatabase,
        `No LCM database at ${path} (${state.kind === "new" ? "the file is empty" : "no such file"}; path from ${pathSource}). ` +
          "Pass --db <path>, set LCM_DATABASE_PATH, or set plugins.entries.lcm.config.databasePath in openclaw.json.");
    case "foreign":
      throw new CliError(EXIT.refused, describeDatabaseProblem(path, { kind: "foreign", found: state.found, peer: state.peer }));
    case "not-sqlite":
      throw new CliError(EXIT.refused, describeDatabaseProblem(path, { kind: "not-sqlite", found: state.found }));
    case "unreadable":
      throw new CliError(EXIT.unavailable, describeDatabaseProblem(path, { kind: "unreadable", reason: state.reason }));
    case "ours":
      if (state.schemaVersion > latest) {
        throw new CliError(EXIT.refused, describeDatabaseProblem(path, { kind: "newer-schema", schemaVersion: state.schemaVersion, supportedVersion: latest }));
      }
  }
  const writeProblem = readOnlyReason(path);
  const wantsWrite = mode === "write" || (mode === "prefer-write" && writeProblem === null);
  if (wantsWrite) return { database: openForWriting(path), readOnly: false, notice: null };
  if (state.schemaVersion < latest) {
    throw new CliError(EXIT.unavailable,
      `The LCM database ${path} has schema version ${state.schemaVersion}, older than this version's (${latest}); reading it needs the ` +
        "upgrade a write does. Run any write command (e.g. `lcm doctor`) on a writable file, or let the gateway open it first.");
  }
  const notice = mode === "prefer-write" && writeProblem !== null ? `opened read-only: ${writeProblem}` : null;
  return { database: openReadOnly(path, mode === "read-live"), readOnly: true, notice };
}

function openForWriting(path: string): Database {
  try {
    return openDatabase(path);
  } catch (error) {
    const problem = databaseProblemOf(error);
    if (problem && (problem.kind === "foreign" || problem.kind === "not-sqlite" || problem.kind === "newer-schema")) {
      throw new CliError(EXIT.refused, (error as Error).message);
    }
    throw new CliError(EXIT.unavailable, isLcmError(error) ? error.message : `LCM could not open its database ${path}: ${describeError(error)}.`);
  }
}

function openReadOnly(path: string, live: boolean): Database {
  const message = `${path} is open read-only for this command`;
  try {
    const database = new Database(path, { location: live ? path : readOnlyLocation(path), readOnly: { message, details: { databasePath: path } } });
    database.raw.exec("PRAGMA temp_store = MEMORY");
    database.raw.prepare("SELECT count(*) FROM sqlite_schema").get();
    return database;
  } catch (error) {
    throw new CliError(EXIT.unavailable, `LCM could not open its database ${path} read-only: ${describeError(error)}.`);
  }
}
