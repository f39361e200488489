/**
 * One backend: every store LCM's components use, opened together on one connection to one database. The plugin, the
 * CLI, the retention worker, the inspector, repairs and the MCP server all take this shape (sqlite/open-sqlite-backend.ts
 * builds it), so a second backend returns the same members and nothing above the stores changes.
 */
import type { BackupStore } from "./backup-store.js";
import type { CompactionStore } from "./compaction-store.js";
import type { ExportStore } from "./export-store.js";
import type { GrantStore } from "./grant-store.js";
import type { ImportStore } from "./import-store.js";
import type { IntegrityStore } from "./integrity-store.js";
import type { OperatorStore } from "./operator-store.js";
import type { PeerImportStore } from "./peer-import-store.js";
import type { RepairStore } from "./repair-store.js";
import type { RetentionStore } from "./retention-store.js";
import type { RetrievalStore } from "./retrieval-store.js";
import type { SearchIndex } from "./search-index.js";
import type { SessionLifecycleStore } from "./session-store.js";
import type { StatusStore } from "./status-store.js";
import type { LcmStore } from "./store.js";
import type { TableCopyStore } from "./table-copy.js";

/** How the backend's writes meet a busy or failing database; the engine decides with it what to retry and what to report. */
export interface StorageControl {
  /** Runs `body` with writes that wait at most `deadlineMs` for a lock another process holds (default 15 s). */
  withWriteDeadline<T>(deadlineMs: number, body: () => Promise<T>): Promise<T>;
  /** Whether `error` means the store could not take a write (locked past the deadline, disk full, read-only…). */
  isStorageFailure(error: unknown): boolean;
  /** Keeps the process's connections open until `work` settles, should the plugin be retired meanwhile. */
  keepOpenWhile(work: Promise<unknown>): void;
}

export interface LcmBackend {
  /** Which database holds the data: an embedded SQLite file, or a PostgreSQL server several gateways share. */
  readonly kind: "sqlite" | "postgres";
  /** Where the data is, as the person configured it (a file path, ":memory:", or a postgres:// URL without its password). */
  readonly location: string;
  /** False when this opening only reads (a read-only file, another writer's lock, a reading command). */
  readonly writable: boolean;
  /** Why an opening that could have written only reads, with the fix; null otherwise. */
  readonly readOnlyNotice: string | null;
  /** Conversations, messages, the context, summaries and stored large files. */
  readonly store: LcmStore;
  readonly compaction: CompactionStore;
  readonly retrieval: RetrievalStore;
  readonly searchIndex: SearchIndex;
  readonly grants: GrantStore;
  readonly status: StatusStore;
  readonly integrity: IntegrityStore;
  readonly sessions: SessionLifecycleStore;
  readonly retention: RetentionStore;
  readonly operator: OperatorStore;
  readonly repairs: RepairStore;
  /** The reads of `lcm export` (JSONL and Markdown) and of retention's archives. */
  readonly exports: ExportStore;
  /** The writes of `lcm import jsonl`. */
  readonly imports: ImportStore;
  /** The writes of `lcm import lossless-claw`. */
  readonly peerImport: PeerImportStore;
  /** `lcm backup`: an online copy of the database and its stored files. */
  readonly backup: BackupStore;
  /** Every table of the model read and written as it is, ids kept: `lcm migrate` between backends. */
  readonly tableCopy: TableCopyStore;
  readonly storage: StorageControl;
  /**
   * Releases this opening: a connection (or pool) of its own closes; the gateway's shared one stays open for the
   * process. SQLite closes at once; PostgreSQL's pool ends when the promise settles (a command awaits it before exiting).
   */
  close(): Promise<void>;
}
