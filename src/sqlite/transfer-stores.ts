/**
 * The stores of every import and export on one connection, for the CLI's commands (`lcm export`, `lcm import jsonl`,
 * `lcm import lossless-claw`, `lcm retention`) until they take theirs from the backend the CLI opens (spec 026, R2).
 */
import type { Database } from "./database.js";
import { SqliteExportStore } from "./sqlite-export-store.js";
import { SqliteImportStore } from "./sqlite-import-store.js";
import { SqliteIntegrityStore } from "./sqlite-integrity-store.js";
import { SqlitePeerImportStore } from "./sqlite-peer-import-store.js";

export interface TransferStores {
  exports: SqliteExportStore;
  imports: SqliteImportStore;
  integrity: SqliteIntegrityStore;
  peerImport: SqlitePeerImportStore;
}

/** The import and export stores on `database` (the caller's connection: it opens and closes it). */
export function transferStoresOn(database: Database): TransferStores {
  return {
    exports: new SqliteExportStore(database),
    imports: new SqliteImportStore(database),
    integrity: new SqliteIntegrityStore(database),
    peerImport: new SqlitePeerImportStore(database),
  };
}
