/**
 * Opens the PostgreSQL backend: a pool on one database and every store on it, as the contracts of store/ describe
 * them (store/backend.ts). The only place that builds the PostgreSQL stores. Opening is synchronous and connects
 * nothing: the driver loads, the pool connects and the schema migrates before the first statement, so the plugin's
 * per-turn engine factory opens it like the SQLite file.
 */
import { LcmError } from "../errors.js";
import { processShared } from "../runtime/process-shared.js";
import type { LcmBackend, StorageControl } from "../store/backend.js";
import type { ImportedHistoryStore } from "../store/imported-history-store.js";
import type { LocalFilesDirectory } from "../store/large-file-store.js";
import type { SearchIndex } from "../store/search-index.js";
import { PgCompactionStore } from "./pg-compaction-store.js";
import { isPgStorageFailure, PgDatabase, type PgOptions } from "./pg-database.js";
import { PgExportStore } from "./pg-export-store.js";
import { PgFileIndex } from "./pg-file-index.js";
import { PgGrantStore } from "./pg-grant-store.js";
import { PgImportStore } from "./pg-import-store.js";
import { PgImportedHistoryStore } from "./pg-imported-history-store.js";
import { PgIntegrityStore } from "./pg-integrity-store.js";
import { PgOperatorStore } from "./pg-operator-store.js";
import { PgPeerImportStore } from "./pg-peer-import-store.js";
import { PgRepairStore } from "./pg-repair-store.js";
import { PgRetentionStore } from "./pg-retention-store.js";
import { PgRetrievalStore } from "./pg-retrieval-store.js";
import { PgSearchCheck } from "./pg-search-check.js";
import { PgSearchIndex } from "./pg-search-index.js";
import { PgSessionStore } from "./pg-session-store.js";
import { PgStatusStore } from "./pg-status-store.js";
import { PgStore } from "./pg-store.js";
import { PgStoredFiles } from "./pg-stored-files.js";
import { PgTableCopy } from "./pg-table-copy.js";

/**
 * - "shared": the process's pool for this URL (the gateway: every turn's engine, the tools, status), which close()
 *   leaves open.
 * - "private": a pool of its own (the CLI, tests, a migration's target), ended by close().
 */
export type PostgresAccess = "shared" | "private";

/** What a read-only opening (`PgOptions.readOnly`) means, for the person running the command. */
export interface PostgresBackend extends LcmBackend {
  readonly database: PgDatabase;
}

export interface PostgresBackendOptions extends PgOptions {
  /**
   * This machine's files directory (the configured `filesDirectory`): where a file another machine stored is copied
   * from the database to be read. Without it, such a file reads as missing (search indexes it from the database).
   */
  files?: LocalFilesDirectory;
}

export function openPostgresBackend(url: string, access: PostgresAccess, backendOptions: PostgresBackendOptions = {}): PostgresBackend {
  const { files = null, ...options } = backendOptions;
  if (access === "shared") {
    const pools = processShared("postgres-pools.v1", () => new Map<string, PgDatabase>());
    let database = pools.get(url);
    if (!database) {
      database = new PgDatabase(url, options);
      pools.set(url, database);
    }
    return postgresBackendOn(database, { shared: true, files });
  }
  return postgresBackendOn(new PgDatabase(url, options), { shared: false, files });
}

function postgresBackendOn(database: PgDatabase, options: { shared: boolean; files: LocalFilesDirectory | null }): PostgresBackend {
  const pending = new Set<Promise<unknown>>();
  const storage: StorageControl = {
    // PostgreSQL waits for row locks itself; a turn's commit is bounded by the statement timeout instead.
    withWriteDeadline: (_deadlineMs, body) => body(),
    isStorageFailure: (error) => isPgStorageFailure(error),
    keepOpenWhile: (work) => {
      pending.add(work);
      void work.catch(() => {}).finally(() => pending.delete(work));
    },
  };
  const storedFiles = new PgStoredFiles(database, options.files);
  const searchIndex = new PgSearchIndex(database, new PgFileIndex(database, storedFiles));
  return {
    database,
    kind: "postgres",
    location: database.location,
    writable: !database.readOnly,
    // Only a reading command opens read-only, and it could not have written: no notice, as on SQLite (LcmBackend).
    readOnlyNotice: null,
    store: withImportedHistory(new PgStore(database, storedFiles), new PgImportedHistoryStore(database)),
    compaction: new PgCompactionStore(database),
    retrieval: new PgRetrievalStore(database, { index: searchIndex }),
    searchIndex,
    grants: new PgGrantStore(database),
    status: new PgStatusStore(database, searchIndex),
    integrity: new PgIntegrityStore(database, new PgSearchCheck(database)),
    sessions: new PgSessionStore(database),
    retention: new PgRetentionStore(database),
    operator: new PgOperatorStore(database),
    repairs: new PgRepairStore(database),
    exports: new PgExportStore(database),
    imports: new PgImportStore(database),
    peerImport: new PgPeerImportStore(database),
    backup: notYet("backup"),
    tableCopy: new PgTableCopy(database),
    storage,
    close: async () => {
      if (options.shared) return;
      // Work that asked to keep the connections (a maintenance pass) ends first; the pool then closes.
      await Promise.allSettled([...pending]);
      await database.close();
    },
  };
}

/**
 * The core store, answering bootstrap's questions about imported history too (store/imported-history-store.ts), as
 * SqliteStore does: bootstrap finds the two methods on the backend's store.
 */
function withImportedHistory<T extends object>(store: T, history: ImportedHistoryStore): T & ImportedHistoryStore {
  return Object.assign(Object.create(store) as T, {
    importedMessagesToMatch: history.importedMessagesToMatch.bind(history),
    saveTranscriptMatches: history.saveTranscriptMatches.bind(history),
  });
}

/** A store this build does not have on PostgreSQL: every call fails with a clear error instead of a wrong answer. */
function notYet<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      if (property === "then") return undefined;
      return () => Promise.reject(new LcmError("unavailable", `The ${name} store (${String(property)}) is not available on PostgreSQL yet; use SQLite (unset databaseUrl) for it.`));
    },
  });
}
