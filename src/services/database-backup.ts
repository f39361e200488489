/**
 * An online, consistent copy of the database: SQLite's backup API (node:sqlite `backup`), which copies pages under
 * a read transaction and starts over if another connection writes meanwhile, so the copy is one committed state of
 * the database even while a gateway writes to it; `VACUUM INTO` where node:sqlite has no backup function. Never a
 * file copy: copying a live WAL database's file misses what the -wal file holds, or catches a page mid-checkpoint.
 * The copy is written beside the target, checked (quick_check, LCM's application id), switched to a single-file
 * journal and renamed into place, so the target is either absent or a whole, valid database.
 */
import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { resolve } from "node:path";
import * as sqlite from "node:sqlite";
import { LCM_APPLICATION_ID } from "../db/database-file.js";
import { assertNotDatabaseFile } from "../db/database-target.js";
import { LcmError } from "../errors.js";

export interface BackupOptions {
  /** Replace an existing target file. */
  overwrite?: boolean;
  /** Pages copied per step (the backup API yields between steps). */
  pagesPerStep?: number;
  onProgress?: (copiedPages: number, totalPages: number) => void;
}

export interface BackupResult {
  path: string;
  bytes: number;
  pages: number;
  method: "backup-api" | "vacuum-into";
  durationMs: number;
  check: "ok";
}

type BackupFunction = (source: sqlite.DatabaseSync, path: string, options?: {
  rate?: number; progress?: (info: { totalPages: number; remainingPages: number }) => void;
}) => Promise<number>;

export async function backupDatabase(source: sqlite.DatabaseSync, sourcePath: string, targetPath: string, options: BackupOptions = {}): Promise<BackupResult> {
  const target = resolve(targetPath);
  assertNotDatabaseFile(target, sourcePath, "backup");
  if (existsSync(target) && !options.overwrite) {
    throw new LcmError("invalid_input", `${target} exists already; choose another path, or pass --force to replace it.`, { parameter: "path" });
  }
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  const started = performance.now();
  let method: BackupResult["method"];
  let pages = 0;
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
    pages = checkCopy(partial) || pages;
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { force: true });
    rmSync(`${partial}-wal`, { force: true });
    rmSync(`${partial}-shm`, { force: true });
    throw error;
  }
  options.onProgress?.(pages, pages);
  return { path: target, bytes: statSync(target).size, pages, method, durationMs: Math.round(performance.now() - started), check: "ok" };
}

/** Checks the copy and makes it one self-contained file (rollback journal); returns its page count. */
function checkCopy(path: string): number {
  const copy = new sqlite.DatabaseSync(path);
  try {
    const check = String(Object.values(copy.prepare("PRAGMA quick_check").get() ?? {})[0]);
    if (check !== "ok") throw new LcmError("storage", `The backup copy failed SQLite's quick_check (${check}); nothing was written to the target.`);
    const applicationId = Number(Object.values(copy.prepare("PRAGMA application_id").get() ?? {})[0]);
    if (applicationId !== LCM_APPLICATION_ID && applicationId !== 0) {
      throw new LcmError("storage", `The backup copy has application id ${applicationId}, not LCM's; nothing was written to the target.`);
    }
    copy.exec("PRAGMA journal_mode = DELETE");
    return Number(Object.values(copy.prepare("PRAGMA page_count").get() ?? {})[0]);
  } finally {
    copy.close();
  }
}
