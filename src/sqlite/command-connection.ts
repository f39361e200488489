/**
 * Opens the database for one CLI command, never changing a file that is not LCM's: the file is inspected read-only
 * first (sqlite/database-file.ts). Read commands open a read-only connection (nothing written, no journal mode or
 * permission changed; a WAL file without its -wal is opened immutable, so nothing is left behind). Write commands
 * (compact, doctor --repair) open a private read-write connection, which migrates an older LCM schema. "prefer-write"
 * (grep and doctor, which index messages still waiting for the full-text index, as the tools do) writes when the
 * file is writable and no other process holds its write lock, and reads otherwise: in WAL mode a reader never needs
 * that lock. Every message is written for the person at the shell (what to pass, what to run), not for a gateway.
 */
import { DatabaseSync } from "node:sqlite";
import { Database, isBusyError } from "./database.js";
import { inspectDatabaseFile, readOnlyLocation, readOnlyReason } from "./database-file.js";
import { openDatabase } from "./connection-registry.js";
import { type DatabaseProblem, databaseProblemOf } from "./database-problem.js";
import { MIGRATIONS } from "./migrations.js";
import { describeError, LcmError } from "../errors.js";

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

/**
 * Why a command cannot use the database: LcmError "unavailable" with `details.databaseProblem`, which the CLI maps
 * to its exit codes (cli/exit-codes.ts): no LCM database there, a file that is not LCM's (left untouched), or one
 * that cannot be used as asked.
 */
export type CommandDatabaseProblem = "no-database" | "refused" | "unavailable";

function databaseError(problem: CommandDatabaseProblem, message: string): LcmError {
  return new LcmError("unavailable", message, { databaseProblem: problem });
}

export function openCliDatabase(path: string, mode: AccessMode, pathSource: string): CliDatabase {
  const latest = MIGRATIONS.at(-1)?.version ?? 0;
  const state = inspectDatabaseFile(path);
  switch (state.kind) {
    case "missing":
    case "new":
      throw databaseError("no-database", noDatabaseMessage(path, state.kind, pathSource));
    case "foreign":
      throw databaseError("refused", describeForCli(path, { kind: "foreign", found: state.found, peer: state.peer }));
    case "not-sqlite":
      throw databaseError("refused", describeForCli(path, { kind: "not-sqlite", found: state.found }));
    case "unreadable":
      throw databaseError("unavailable", describeForCli(path, { kind: "unreadable", reason: state.reason }));
    case "ours":
      if (state.schemaVersion > latest) {
        throw databaseError("refused", describeForCli(path, { kind: "newer-schema", schemaVersion: state.schemaVersion, supportedVersion: latest }));
      }
  }
  const writeProblem = readOnlyReason(path);
  if (mode === "write" && writeProblem !== null) {
    throw databaseError("unavailable", describeForCli(path, { kind: "read-only", reason: writeProblem, readable: true }));
  }
  const lockedByOther = mode === "prefer-write" && writeProblem === null && isWriteLockedByOther(path);
  if (mode === "write" || (mode === "prefer-write" && writeProblem === null && !lockedByOther)) {
    return { database: openForWriting(path), readOnly: false, notice: null };
  }
  if (state.schemaVersion < latest) {
    throw databaseError("unavailable",
      `The LCM database ${path} has schema version ${state.schemaVersion}, older than this version's (${latest}); reading it needs the ` +
        "upgrade a write does. Run a writing command (e.g. `lcm doctor --repair`) on a writable file with no other writer, or let the " +
        "gateway open it first.");
  }
  const notice = mode !== "prefer-write"
    ? null
    : lockedByOther
      ? "another process holds the database's write lock (a gateway writing, an import, a vacuum): reading without writing; " +
        "messages not in the full-text index yet are read directly"
      : `opened read-only: ${writeProblem}`;
  return { database: openReadOnly(path, mode === "read-live"), readOnly: true, notice };
}

/** What a problem with the file at `path` means for the person running `lcm`, and what to do (never "restart the gateway"). */
export function describeForCli(path: string, problem: DatabaseProblem): string {
  const point = "Pass --db with the path of an LCM database (the gateway's is plugins.entries.lcm.config.databasePath; default ~/.openclaw/lcm-context.db)";
  switch (problem.kind) {
    case "foreign":
      return `${path} holds ${problem.found}, not an LCM database; lcm left it untouched. ${point}.` +
        (problem.peer ? ` To bring this lossless-claw history into LCM: lcm import lossless-claw ${path}.` : "");
    case "not-sqlite":
      return `${path} is ${problem.found}; lcm left it untouched. ${point}.`;
    case "newer-schema":
      return `The LCM database ${path} has schema version ${problem.schemaVersion}, newer than this lcm supports (${problem.supportedVersion}): ` +
        "a newer LCM wrote it, and lcm left it untouched. Run the lcm of that newer version (upgrade the plugin).";
    case "read-only":
      return `The LCM database ${path} cannot be written (${problem.reason}), and this command writes. Make it writable for your user ` +
        "(e.g. chmod u+w), or run a command that only reads (status, conversations, context, dag, grep, describe, doctor without --repair).";
    case "unreadable":
      return `${path} cannot be read (${problem.reason}), so lcm cannot tell whether it is an LCM database; it left the file untouched. ` +
        "Run lcm as a user who can read it, or give your user read access.";
    case "cannot-open":
      return /locked/i.test(problem.reason)
        ? `The LCM database ${path} stayed locked by another process for more than 10 s (${problem.reason}), and this command writes. ` +
          "Run it again when the other writer (a gateway mid-write, an import, a vacuum) is done; commands that only read work meanwhile."
        : `lcm could not open the LCM database ${path}: ${problem.reason}. Check the path, that its folder exists and that you may write there.`;
  }
}

function noDatabaseMessage(path: string, kind: "missing" | "new", pathSource: string): string {
  const found = kind === "new" ? "the file is empty" : "no such file";
  const fix = pathSource === "--db"
    ? "Check the path given to --db: lcm reads an existing LCM database (the gateway creates its own on the first turn it stores)."
    : "Pass --db <path>, set LCM_DATABASE_PATH, or set plugins.entries.lcm.config.databasePath in openclaw.json.";
  return `No LCM database at ${path} (${found}; path from ${pathSource}). ${fix}`;
}

/**
 * Whether another connection holds the write lock of a WAL database right now: a transaction that would take it
 * fails at once instead of waiting. Only called for a writable LCM file about to be opened for writing anyway.
 */
function isWriteLockedByOther(path: string): boolean {
  let probe: DatabaseSync | null = null;
  try {
    probe = new DatabaseSync(path, { timeout: 0 });
    probe.exec("BEGIN IMMEDIATE");
    probe.exec("ROLLBACK");
    return false;
  } catch (error) {
    // Anything but a lock (say, a file that cannot be opened) is left to the opening that follows, which reports it.
    return isBusyError(error);
  } finally {
    probe?.close();
  }
}

function openForWriting(path: string): Database {
  try {
    return openDatabase(path);
  } catch (error) {
    const problem = databaseProblemOf(error);
    if (problem && (problem.kind === "foreign" || problem.kind === "not-sqlite" || problem.kind === "newer-schema")) {
      throw databaseError("refused", describeForCli(path, problem));
    }
    throw databaseError("unavailable", describeForCli(path, problem ?? { kind: "cannot-open", reason: describeError(error) }));
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
    throw databaseError("unavailable", `lcm could not open the LCM database ${path} read-only: ${describeError(error)}.`);
  }
}
