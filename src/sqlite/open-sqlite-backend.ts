/**
 * Opens the SQLite backend: one connection to one database file and every store on it, as the contracts of store/
 * describe them (store/backend.ts). The only place that builds the SQLite stores; the plugin, the CLI, the retention
 * worker and the tests' helpers call it. Opening never changes a file that is not LCM's.
 */
import type { LcmBackend, StorageControl } from "../store/backend.js";
import { type AccessMode, openCliDatabase } from "./command-connection.js";
import { processConnectionHolds } from "./connection-holds.js";
import { openDatabase, openSharedDatabase, openSharedReadableDatabase, openWorkerConnection } from "./connection-registry.js";
import { type Database, withWriteDeadline } from "./database.js";
import { backupDatabase } from "./database-backup.js";
import { describeDatabaseProblem } from "./database-problem.js";
import { SqliteCompactionStore } from "./sqlite-compaction-store.js";
import { SqliteExportStore } from "./sqlite-export-store.js";
import { SqliteGrantStore } from "./sqlite-grant-store.js";
import { SqliteImportStore } from "./sqlite-import-store.js";
import { SqliteIntegrityStore } from "./sqlite-integrity-store.js";
import { SqliteOperatorStore } from "./sqlite-operator-store.js";
import { SqlitePeerImportStore } from "./sqlite-peer-import-store.js";
import { SqliteRepairStore } from "./sqlite-repair-store.js";
import { SqliteRetentionStore } from "./sqlite-retention-store.js";
import { SqliteRetrievalStore } from "./sqlite-retrieval-store.js";
import { SqliteSearchIndex } from "./sqlite-search-index.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { SqliteStatusStore } from "./sqlite-status-store.js";
import { SqliteStore } from "./sqlite-store.js";
import { SqliteTableCopy } from "./sqlite-table-copy.js";
import { isStorageFailure } from "./storage-failure.js";

/**
 * How to open the file:
 * - "shared": the process's read-write connection (the gateway's engine); throws LcmError("unavailable") naming the
 *   problem and the fix when the file cannot be written.
 * - "shared-readable": the same, or a read-only connection when the file is LCM's but may only be read (status, recall).
 * - "worker": a connection of a worker thread's own to a database the process already opened and migrated.
 * - "private": a connection of its own, migrated (tests, a scratch `:memory:` database, an import's target).
 * - a command's access (the `lcm` CLI: read, read-live, write, prefer-write), with where its path came from for the
 *   messages (cli/cli-config.ts).
 */
export type BackendAccess =
  | "shared" | "shared-readable" | "worker" | "private"
  | { command: AccessMode; pathSource: string };

/** The SQLite backend; `database` is its connection, for the backend's own modules and the tests' fixtures. */
export interface SqliteBackend extends LcmBackend {
  readonly database: Database;
}

export function openSqliteBackend(path: string, access: BackendAccess): SqliteBackend {
  if (access === "shared") return sqliteBackendOn(openSharedDatabase(path), { shared: true });
  if (access === "shared-readable") {
    const { database, problem } = openSharedReadableDatabase(path);
    return sqliteBackendOn(database, { shared: true, readOnlyNotice: problem ? describeDatabaseProblem(path, problem) : null, writable: !problem });
  }
  if (access === "worker") return sqliteBackendOn(openWorkerConnection(path));
  if (access === "private") return sqliteBackendOn(openDatabase(path));
  const { database, readOnly, notice } = openCliDatabase(path, access.command, access.pathSource);
  return sqliteBackendOn(database, { writable: !readOnly, readOnlyNotice: notice });
}

/** The stores on an open connection. `shared`: the registry's connection, which close() leaves open. */
export function sqliteBackendOn(
  database: Database, options: { shared?: boolean; writable?: boolean; readOnlyNotice?: string | null } = {},
): SqliteBackend {
  return {
    database,
    kind: "sqlite",
    location: database.path,
    writable: options.writable ?? true,
    readOnlyNotice: options.readOnlyNotice ?? null,
    store: new SqliteStore(database),
    compaction: new SqliteCompactionStore(database),
    retrieval: new SqliteRetrievalStore(database),
    searchIndex: new SqliteSearchIndex(database),
    grants: new SqliteGrantStore(database),
    status: new SqliteStatusStore(database),
    integrity: new SqliteIntegrityStore(database),
    sessions: new SqliteSessionStore(database),
    retention: new SqliteRetentionStore(database),
    operator: new SqliteOperatorStore(database),
    repairs: new SqliteRepairStore(database),
    exports: new SqliteExportStore(database),
    imports: new SqliteImportStore(database),
    peerImport: new SqlitePeerImportStore(database),
    backup: { backupTo: (targetPath, backupOptions) => backupDatabase(database.raw, database.path, targetPath, backupOptions) },
    tableCopy: new SqliteTableCopy(database),
    storage: sqliteStorageControl,
    close: () => {
      if (!options.shared) database.close();
      return Promise.resolve();
    },
  };
}

/** Write deadlines, storage failures and connection holds of the SQLite backend (process-wide, like its connections). */
export const sqliteStorageControl: StorageControl = {
  withWriteDeadline,
  isStorageFailure: (error) => isStorageFailure(error),
  // Optional call: holds made by an older copy of the module in the process have no whileBusy.
  keepOpenWhile: (work) => processConnectionHolds().whileBusy?.(work),
};
