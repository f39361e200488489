/**
 * `lcm backup` for a backend without SQLite's page copy (PostgreSQL): the backup is a portable LCM SQLite file written
 * by the table copy (table-migration.ts) from one committed state of the database, with the stored files copied into
 * `<backup name>-files/` beside it and recorded there, as SQLite's own backup does (a file this machine lacks is written
 * from the database's copy of its content, which PostgreSQL keeps for gateways that share no disk). The file opens with every `lcm`
 * command (`--db`), or goes back into PostgreSQL with `lcm migrate sqlite-to-postgres`. Written beside the target and
 * renamed into place after its files folder, so the target is either absent or a whole backup.
 */
import { chmodSync, existsSync, renameSync, rmSync, statSync } from "node:fs";
import { chmod, copyFile, mkdir, rm, stat, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { defaultFilesDirectory } from "../config.js";
import { describeError, LcmError } from "../errors.js";
import type { LcmBackend } from "../store/backend.js";
import type { BackupOptions, BackupResult, BackupStore, StoredFilesCopy } from "../store/backup-store.js";
import { type CopiedRow, type CopiedTable, STORED_PATH_COLUMN, type TableCopyStore } from "../store/table-copy.js";
import { copyAllTables } from "./table-migration.js";

/** A backup store over `source`'s table copy; `openSqliteFile` creates the LCM SQLite file the backup is written to. */
export function backupByTableCopy(source: TableCopyStore, openSqliteFile: (path: string) => LcmBackend): BackupStore {
  return { backupTo: (targetPath, options) => backupTo(source, openSqliteFile, targetPath, options) };
}

/** A stored file to copy: where the source records it, and where it goes in the backup's files folder. */
interface FileToCopy { fileId: string; from: string; to: string }

async function backupTo(source: TableCopyStore, openSqliteFile: (path: string) => LcmBackend, targetPath: string, options: BackupOptions = {}): Promise<BackupResult> {
  const target = resolve(targetPath);
  const filesTarget = defaultFilesDirectory(target);
  for (const path of [target, filesTarget]) {
    if (existsSync(path) && !options.overwrite) {
      throw new LcmError("invalid_input", `${path} exists already; choose another path, or pass --force to replace it.`, { parameter: "path" });
    }
  }
  const partial = `${target}.partial-${process.pid}`;
  const partialFiles = `${filesTarget}.partial-${process.pid}`;
  removeDatabaseFiles(partial);
  await rm(partialFiles, { recursive: true, force: true });
  const started = performance.now();
  const files: FileToCopy[] = [];
  try {
    const copy = openSqliteFile(partial);
    let rows = 0;
    try {
      // Stored files are recorded where they will be in the backup's files folder (relative to it, by the SQLite side).
      const report = await copyAllTables(source, relocatingFiles(copy.tableCopy, filesTarget, files), {
        onProgress: (_table, done, total) => options.onProgress?.(done, total),
      });
      const short = report.tables.find((table) => table.copied !== table.sourceRows);
      if (short) throw new LcmError("storage", `The backup copy holds ${short.copied} of the ${short.sourceRows} rows of ${short.table}; nothing was written to the target.`);
      rows = report.copied;
    } finally {
      await copy.close();
    }
    const copied = await copyFiles(files, filesTarget, partialFiles, options.onFileProgress, source.storedFileContent?.bind(source));
    chmodSync(partial, 0o600);
    if (copied.directory !== null) await replace(partialFiles, filesTarget);
    else if (options.overwrite) await rm(filesTarget, { recursive: true, force: true });
    for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(`${target}${suffix}`, { force: true });
    renameSync(partial, target);
    return {
      path: target, bytes: statSync(target).size, pages: 0, rows, method: "table-copy", durationMs: Math.round(performance.now() - started),
      check: "ok", mode: "0600", files: copied,
    };
  } catch (error) {
    removeDatabaseFiles(partial);
    await rm(partialFiles, { recursive: true, force: true });
    throw error;
  }
}

/** The SQLite side of the copy, with each stored file's path changed to its place in the backup's files folder. */
function relocatingFiles(target: TableCopyStore, filesTarget: string, files: FileToCopy[]): TableCopyStore {
  const relocate = (table: CopiedTable, row: CopiedRow): CopiedRow => {
    const pathIndex = table.columns.indexOf(STORED_PATH_COLUMN.column);
    const fileId = String(row[0]);
    const from = String(row[pathIndex]);
    const to = join(filesTarget, String(row[table.columns.indexOf("conversation_id")]), basename(from));
    files.push({ fileId, from, to });
    return row.map((value, index) => (index === pathIndex ? to : value));
  };
  return Object.assign(Object.create(target) as TableCopyStore, {
    writeRows: (table: CopiedTable, rows: readonly CopiedRow[]) =>
      target.writeRows(table, table.name === STORED_PATH_COLUMN.table ? rows.map((row) => relocate(table, row)) : rows),
  });
}

/** Copies each stored file into the partial folder (owner-only), reporting those that cannot be read. */
async function copyFiles(
  files: readonly FileToCopy[], filesTarget: string, partialFiles: string, onProgress?: (handled: number, total: number) => void,
  storedContent?: (fileId: string) => Promise<Buffer | null>,
): Promise<StoredFilesCopy> {
  const result: StoredFilesCopy = { directory: files.length > 0 ? filesTarget : null, copied: 0, bytes: 0, missing: [] };
  for (const [index, file] of files.entries()) {
    const to = join(partialFiles, file.to.slice(filesTarget.length + 1));
    await mkdir(join(to, ".."), { recursive: true, mode: 0o700 });
    await chmod(partialFiles, 0o700);
    await chmod(join(to, ".."), 0o700);
    try {
      const info = await stat(file.from);
      if (!info.isFile()) {
        result.missing.push({ fileId: file.fileId, path: file.from, reason: "not a regular file (a folder, named pipe or device is never read)" });
      } else {
        await copyFile(file.from, to);
        await chmod(to, 0o600);
        result.bytes += info.size;
        result.copied++;
      }
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      const kept = missing ? await storedContent?.(file.fileId) ?? null : null;
      if (kept !== null) {
        await writeFile(to, kept, { mode: 0o600 });
        result.bytes += kept.length;
        result.copied++;
      } else {
        result.missing.push({ fileId: file.fileId, path: file.from, reason: missing ? "missing (moved or deleted)" : `not copied (${describeError(error)})` });
      }
    }
    onProgress?.(index + 1, files.length);
  }
  return result;
}

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

function removeDatabaseFiles(path: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${path}${suffix}`, { force: true });
}
