/**
 * One shared database connection per file per process. The host builds a new engine for every turn and loads
 * the plugin module several times per gateway process, so the registry lives on globalThis under a versioned
 * symbol: every copy of the module, every engine instance and every tool shares one connection and one
 * migration check. Engines never close it; `closeAllDatabases` exists for tests and process shutdown.
 * Before a file is opened for writing it is inspected without being changed (database-file.ts): a file that is
 * not LCM's is never modified, and one LCM may only read is opened read-only for status and recall.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Database, retryWhileBusySync } from "./database.js";
import { inspectDatabaseFile, readOnlyLocation, readOnlyReason } from "./database-file.js";
import {
  type DatabaseProblem,
  databaseProblemOf,
  databaseUnavailableError,
  describeDatabaseProblem,
} from "./database-problem.js";
import { migrate, MIGRATIONS } from "./migrations.js";
import { WalCheckpointer } from "./wal-checkpointer.js";
import { processShared } from "../runtime/process-shared.js";
import { describeError, isLcmError } from "../errors.js";

/**
 * How long opening a file waits, in short synchronous sleeps, while another connection holds a lock that opening
 * needs. Measured: when several processes open a new file at once, the one creating it holds an exclusive lock
 * while it writes the first page, and the others' `PRAGMA journal_mode = WAL` fails with "database is locked"
 * (5 of 180 opens in 30 rounds of 6 processes). Before this wait, such a process served the turn with the
 * unavailable engine, which stores nothing.
 */
const OPEN_WAIT_MS = 10_000;

const READ_ONLY_SUFFIX = "\0read-only";

function registry(): { databases: Map<string, Database> } {
  return processShared("connection-registry.v1", () => ({ databases: new Map<string, Database>() }));
}

/**
 * The shared, migrated connection for `path`, opened (owner-only, WAL) on first use. Throws LcmError("unavailable")
 * carrying a DatabaseProblem (database-problem.ts) when the file is not LCM's, is newer, cannot be written or
 * cannot be opened; nothing about the file is changed then.
 */
export function openSharedDatabase(path: string): Database {
  const key = path === ":memory:" ? path : resolve(path);
  const databases = registry().databases;
  const existing = databases.get(key);
  if (existing?.raw.isOpen && !existing.isStale && existing.fileProblem() === null) return existing;
  existing?.close();
  const database = openDatabase(key);
  databases.set(key, database);
  closeReadOnly(key); // the file became writable: readers move to the read-write connection
  return database;
}

/**
 * The shared connection to read `path`: the read-write one when the file can be written, else, for an LCM file of
 * the current schema that this process may only read, a read-only one (`problem` says why). Writes through a
 * read-only connection fail with LcmError("unavailable") naming the path and the fix. Throws like openSharedDatabase
 * when the file cannot be read as LCM's at all.
 */
export function openSharedReadableDatabase(path: string): { database: Database; problem: DatabaseProblem | null } {
  try {
    return { database: openSharedDatabase(path), problem: null };
  } catch (error) {
    const problem = databaseProblemOf(error);
    if (problem?.kind !== "read-only" || !problem.readable) throw error;
    const key = resolve(path) + READ_ONLY_SUFFIX;
    const databases = registry().databases;
    const existing = databases.get(key);
    if (existing?.raw.isOpen) return { database: existing, problem };
    const database = openReadOnly(resolve(path), problem);
    databases.set(key, database);
    return { database, problem };
  }
}

/** Opens and migrates a private connection (tests, tools that need their own handle). Throws like openSharedDatabase. */
export function openDatabase(path: string): Database {
  if (path === ":memory:") return openOnce(path);
  const problem = problemForWriting(path);
  if (problem) throw databaseUnavailableError(path, problem);
  try {
    createOwnerOnly(path);
    return retryWhileBusySync(() => openOnce(path), OPEN_WAIT_MS);
  } catch (error) {
    if (isLcmError(error, "unavailable")) throw error; // migrate found a newer schema (a newer LCM wrote it meanwhile)
    throw databaseUnavailableError(path, { kind: "cannot-open", reason: describeError(error) }, error);
  }
}

/** Why `path` must not be opened for writing, or null when it may: read without changing anything. */
function problemForWriting(path: string): DatabaseProblem | null {
  const state = inspectDatabaseFile(path, OPEN_WAIT_MS);
  switch (state.kind) {
    case "foreign":
      return { kind: "foreign", found: state.found, peer: state.peer };
    case "not-sqlite":
      return { kind: "not-sqlite", found: state.found };
    case "unreadable":
      return { kind: "unreadable", reason: state.reason };
    case "ours": {
      if (state.schemaVersion > latestVersion()) {
        return { kind: "newer-schema", schemaVersion: state.schemaVersion, supportedVersion: latestVersion() };
      }
      const reason = readOnlyReason(path);
      if (!reason) return null;
      const isCurrent = state.schemaVersion === latestVersion();
      return isCurrent
        ? { kind: "read-only", reason, readable: true }
        : { kind: "read-only", reason: `${reason}, and its schema (version ${state.schemaVersion}) needs an upgrade, which writes`, readable: false };
    }
    case "missing":
    case "new": {
      const reason = readOnlyReason(path);
      return reason ? { kind: "cannot-open", reason: `the file cannot be created or set up: ${reason}` } : null;
    }
  }
}

function openReadOnly(path: string, problem: DatabaseProblem): Database {
  const readOnly = { message: describeDatabaseProblem(path, problem), details: { databasePath: path, problem } };
  try {
    return retryWhileBusySync(() => {
      const connection = new Database(path, { location: readOnlyLocation(path), readOnly });
      try {
        connection.raw.exec("PRAGMA temp_store = MEMORY");
        connection.raw.prepare("SELECT count(*) FROM sqlite_schema").get(); // fails here, not later, if it cannot be read
        return connection;
      } catch (error) {
        connection.close();
        throw error;
      }
    }, OPEN_WAIT_MS);
  } catch (error) {
    throw databaseUnavailableError(path, { kind: "cannot-open", reason: `opening it read-only failed: ${describeError(error)}` }, error);
  }
}

function closeReadOnly(key: string): void {
  const databases = registry().databases;
  databases.get(key + READ_ONLY_SUFFIX)?.close();
  databases.delete(key + READ_ONLY_SUFFIX);
}

function latestVersion(): number {
  return MIGRATIONS.at(-1)?.version ?? 0;
}

function openOnce(path: string): Database {
  const database = new Database(path);
  try {
    // 8 KiB pages for new files (a no-op on existing ones): rows of a few hundred bytes to a few KiB waste less
    // of each page than with 4 KiB, about 3% of the file (docs/benchmarks.md). Must precede the first write.
    database.raw.exec("PRAGMA page_size = 8192");
    // New files give freed pages back in steps (retention's PRAGMA incremental_vacuum); a no-op on existing files,
    // which need one VACUUM for it (`lcm retention --apply --vacuum`, docs/operations.md#retention).
    database.raw.exec("PRAGMA auto_vacuum = INCREMENTAL");
    database.raw.exec("PRAGMA journal_mode = WAL");
    database.raw.exec("PRAGMA synchronous = NORMAL");
    database.raw.exec("PRAGMA temp_store = MEMORY");
    database.raw.exec("PRAGMA cache_size = -32000");
    migrate(database);
    if (path !== ":memory:") {
      database.checkpointer = new WalCheckpointer({ path, exec: (sql) => database.raw.exec(sql) });
      database.watchFile();
    }
  } catch (error) {
    database.close();
    throw error;
  }
  return database;
}

/**
 * A private connection for a worker thread of this process (retention runs on one: retention/retention-thread.ts).
 * The file is already open, migrated and checkpointed by the process's shared connection, so this one only opens it:
 * no migration and no checkpoint worker of its own (SQLite's automatic checkpoint, on the worker's thread, keeps the
 * log it writes bounded). Throws when the file is not at this code's schema version (it changed since the main
 * connection opened it): nothing is written then.
 */
export function openWorkerConnection(path: string): Database {
  const database = retryWhileBusySync(() => new Database(path), OPEN_WAIT_MS);
  try {
    // Per connection, like the shared one's (SQLite's default FULL syncs the log at every commit: a 15 ms slice of a
    // retention run took 110 ms in a gateway).
    database.raw.exec("PRAGMA synchronous = NORMAL");
    database.raw.exec("PRAGMA temp_store = MEMORY");
    database.raw.exec("PRAGMA cache_size = -16000");
    const version = Number((database.raw.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
    if (version !== latestVersion()) {
      throw new Error(`the database ${path} is at schema version ${version}, this code at ${latestVersion()}`);
    }
    database.watchFile();
  } catch (error) {
    database.close();
    throw error;
  }
  return database;
}

/** Creates the file owner-only, or makes an existing LCM file owner-only (only ever called for LCM's own files). */
function createOwnerOnly(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
}

export function closeSharedDatabase(path: string): void {
  const key = path === ":memory:" ? path : resolve(path);
  registry().databases.get(key)?.close();
  registry().databases.delete(key);
  closeReadOnly(key);
}

export function closeAllDatabases(): void {
  for (const database of registry().databases.values()) database.close();
  registry().databases.clear();
}
