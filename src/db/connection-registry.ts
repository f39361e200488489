/**
 * One shared database connection per file per process. The host builds a new engine for every turn and loads
 * the plugin module several times per gateway process, so the registry lives on globalThis under a versioned
 * symbol: every copy of the module, every engine instance and every tool shares one connection and one
 * migration check. Engines never close it; `closeAllDatabases` exists for tests and process shutdown.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Database, retryWhileBusySync } from "./database.js";
import { migrate } from "./migrations.js";
import { WalCheckpointer } from "./wal-checkpointer.js";
import { processShared } from "../runtime/process-shared.js";

/**
 * How long opening a file waits, in short synchronous sleeps, while another connection holds a lock that opening
 * needs. Measured: when several processes open a new file at once, the one creating it holds an exclusive lock
 * while it writes the first page, and the others' `PRAGMA journal_mode = WAL` fails with "database is locked"
 * (5 of 180 opens in 30 rounds of 6 processes). Before this wait, such a process served the turn with the
 * unavailable engine, which stores nothing.
 */
const OPEN_WAIT_MS = 10_000;

function registry(): { databases: Map<string, Database> } {
  return processShared("connection-registry.v1", () => ({ databases: new Map<string, Database>() }));
}

/** The shared, migrated connection for `path`, opened (owner-only, WAL) on first use. */
export function openSharedDatabase(path: string): Database {
  const key = path === ":memory:" ? path : resolve(path);
  const databases = registry().databases;
  const existing = databases.get(key);
  if (existing?.raw.isOpen) return existing;
  const database = openDatabase(key);
  databases.set(key, database);
  return database;
}

/** Opens and migrates a private connection (tests, tools that need their own handle). */
export function openDatabase(path: string): Database {
  if (path !== ":memory:") createOwnerOnly(path);
  return retryWhileBusySync(() => openOnce(path), OPEN_WAIT_MS);
}

function openOnce(path: string): Database {
  const database = new Database(path);
  try {
    // 8 KiB pages for new files (a no-op on existing ones): rows of a few hundred bytes to a few KiB waste less
    // of each page than with 4 KiB, about 3% of the file (docs/benchmarks.md). Must precede the first write.
    database.raw.exec("PRAGMA page_size = 8192");
    database.raw.exec("PRAGMA journal_mode = WAL");
    database.raw.exec("PRAGMA synchronous = NORMAL");
    database.raw.exec("PRAGMA temp_store = MEMORY");
    database.raw.exec("PRAGMA cache_size = -32000");
    migrate(database);
    if (path !== ":memory:") {
      database.checkpointer = new WalCheckpointer({ path, exec: (sql) => database.raw.exec(sql) });
    }
  } catch (error) {
    database.close();
    throw error;
  }
  return database;
}

function createOwnerOnly(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
}

export function closeSharedDatabase(path: string): void {
  const key = path === ":memory:" ? path : resolve(path);
  registry().databases.get(key)?.close();
  registry().databases.delete(key);
}

export function closeAllDatabases(): void {
  for (const database of registry().databases.values()) database.close();
  registry().databases.clear();
}
