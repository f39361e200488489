/**
 * The backup contract: an online, consistent copy of the database that stays one committed state while a gateway
 * writes to it, checked before it takes the target's name, with the stored files beside it so that the copy opened
 * anywhere finds them (`lcm backup`). The figures name how the backend copied (pages, method) for the person reading.
 */

export interface BackupOptions {
  /** Replace an existing target file. */
  overwrite?: boolean;
  /** Pages copied per step (the copy yields between steps). */
  pagesPerStep?: number;
  /** Told as the copy goes: pages (SQLite), or rows of the table being copied (a table copy). */
  onProgress?: (copiedPages: number, totalPages: number) => void;
  /** Told after each stored file: files handled of those the copy names. */
  onFileProgress?: (handledFiles: number, totalFiles: number) => void;
}

/** A stored file the backup could not copy. */
export interface MissingStoredFile {
  fileId: string;
  /** Where the database recorded it. */
  path: string;
  reason: string;
}

export interface StoredFilesCopy {
  /** The files folder beside the backup; null when the database holds no stored file. */
  directory: string | null;
  copied: number;
  bytes: number;
  missing: MissingStoredFile[];
}

export interface BackupResult {
  path: string;
  bytes: number;
  /** SQLite pages copied (0 for a table copy). */
  pages: number;
  /** Rows copied, for a table copy (a backend without SQLite's page copy: transfer/table-backup.ts). */
  rows?: number;
  method: "backup-api" | "vacuum-into" | "table-copy";
  durationMs: number;
  check: "ok";
  /** The database file's permissions (the source's: 0600 for LCM's own), as octal text. */
  mode: string;
  /** The stored files, copied into the folder beside the backup. */
  files: StoredFilesCopy;
}

export interface BackupStore {
  /**
   * Copies the database and its stored files to `targetPath`. Throws LcmError("invalid_input") when the target is the
   * database or one of its files, or exists without `overwrite`; the target is then either absent or a whole backup.
   */
  backupTo(targetPath: string, options?: BackupOptions): Promise<BackupResult>;
}
