/**
 * An online, consistent copy of the database: SQLite's backup API (node:sqlite `backup`), which copies pages under
 * a read transaction and starts over if another connection writes meanwhile, so the copy is one committed state of
 * the database even while a gateway writes to it; `VACUUM INTO` where node:sqlite has no backup function. Never a
 * file copy: copying a live WAL database's file misses what the -wal file holds, or catches a page mid-checkpoint.
 * The stored files the copy's rows name go with it, into `<backup name>-files/` beside it (stored-files-backup.ts),
 * so the backup opened anywhere finds them. The copy is written beside the target, checked (quick_check, LCM's
 * application id), switched to a single-file journal, given the database's permissions and renamed into place after
 * its files folder, so the target is either absent or a whole, valid database with its files.
 */
import { chmodSync, existsSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import * as sqlite from "node:sqlite";
import { defaultFilesDirectory } from "../config.js";
import { LCM_APPLICATION_ID } from "./database-file.js";
import { assertNotDatabaseFile } from "./database-target.js";
import { LcmError } from "../errors.js";
import { copyStoredFiles } from "./stored-files-backup.js";
import type { BackupOptions, BackupResult, StoredFilesCopy } from "../store/backup-store.js";

type BackupFunction = (source: sqlite.DatabaseSync, path: string, options?: {
  rate?: number; progress?: (info: { totalPages: number; remainingPages: number }) => void;
}) => Promise<number>;

export async function backupDatabase(source: sqlite.DatabaseSync, sourcePath: string, targetPath: string, options: BackupOptions = {}): Promise<BackupResult> {
  const target = resolve(targetPath);
  assertNotDatabaseFile(target, sourcePath, "backup");
  const filesTarget = defaultFilesDirectory(target);
  for (const path of [target, filesTarget]) {
    if (existsSync(path) && !options.overwrite) {
      throw new LcmError("invalid_input", `${path} exists already; choose another path, or pass --force to replace it.`, { parameter: "path" });
    }
  }
  const partial = `${target}.partial-${process.pid}`;
  const partialFiles = `${filesTarget}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  await rm(partialFiles, { recursive: true, force: true });
  const started = performance.now();
  let method: BackupResult["method"];
  let pages = 0;
  let files: StoredFilesCopy;
  const mode = statSync(sourcePath).mode & 0o777;
  // Created empty with the database's permissions before a byte is copied (SQLite fills an empty file, and gives its
  // journal the same permissions): the copy is never readable by others, not even while it is written.
  writeFileSync(partial, "", { mode, flag: "wx" });
  chmodSync(partial, mode);
  try {
    const backup = (sqlite as unknown as { backup?: BackupFunction }).backup;
    if (typeof backup === "function") {
      method = "backup-api";
      pages = await backup(source, partial, {
        rate: options.pagesPerStep ?? 1_000,
        progress: ({ totalPages, remainingPages }) => options.onProgress?.(totalPages - remainingPages, totalPages),
      });
    } else {
      method = "vacuum-into";
      source.prepare("VACUUM INTO ?").run(partial);
    }
    const copy = new sqlite.DatabaseSync(partial);
    try {
      files = await copyStoredFiles(copy, sourcePath, partialFiles, filesTarget, options.onFileProgress);
      pages = checkCopy(copy) || pages;
    } finally {
      copy.close();
    }
    chmodSync(partial, mode);
    if (files.directory !== null) await replace(partialFiles, filesTarget);
    else if (options.overwrite) await rm(filesTarget, { recursive: true, force: true }); // an older backup's files
    // The companions of the file being replaced go first: a -wal left beside the new file would be replayed into it
    // the next time it is opened in WAL mode (its frames are the old database's pages).
    for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(`${target}${suffix}`, { force: true });
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { force: true });
    rmSync(`${partial}-wal`, { force: true });
    rmSync(`${partial}-shm`, { force: true });
    rmSync(`${partial}-journal`, { force: true });
    await rm(partialFiles, { recursive: true, force: true });
    throw error;
  }
  options.onProgress?.(pages, pages);
  return {
    path: target, bytes: statSync(target).size, pages, method, durationMs: Math.round(performance.now() - started), check: "ok",
    mode: `0${mode.toString(8)}`, files,
  };
}

/** Moves the finished files folder into place, replacing an older backup's folder (--force) only once it is whole. */
async function replace(partialDirectory: string, directory: string): Promise<void> {
  if (!existsSync(directory)) {
    renameSync(partialDirectory, directory);
    return;
  }
  const replaced = `${directory}.replaced-${process.pid}`;
  renameSync(directory, replaced);
  renameSync(partialDirectory, directory);
  await rm(replaced, { recursive: true, force: true });
}

/** Checks the copy and makes it one self-contained file (rollback journal); returns its page count. */
function checkCopy(copy: sqlite.DatabaseSync): number {
  const check = String(Object.values(copy.prepare("PRAGMA quick_check").get() ?? {})[0]);
  if (check !== "ok") throw new LcmError("storage", `The backup copy failed SQLite's quick_check (${check}); nothing was written to the target.`);
  const applicationId = Number(Object.values(copy.prepare("PRAGMA application_id").get() ?? {})[0]);
  if (applicationId !== LCM_APPLICATION_ID && applicationId !== 0) {
    throw new LcmError("storage", `The backup copy has application id ${applicationId}, not LCM's; nothing was written to the target.`);
  }
  copy.exec("PRAGMA journal_mode = DELETE");
  return Number(Object.values(copy.prepare("PRAGMA page_count").get() ?? {})[0]);
}
