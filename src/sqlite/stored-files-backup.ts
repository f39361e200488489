/**
 * The stored-files half of a backup: copies every file a backup copy's `large_files` rows name into a folder beside
 * the backup (`<backup name>-files/<conversation>/<file>`, the folder a database opened at the backup's path uses by
 * default) and records each row's path relative to the backup's folder (sqlite/stored-file-path.ts), so the backup opened
 * anywhere finds its files. Only regular files are read (a named pipe or a device in their place is reported, never
 * opened); a file that is gone is reported and its row points where it belongs in the backup. Owner-only like the
 * database's files: folders 0700, files 0600.
 */
import { chmod, copyFile, mkdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { resolveRecordedPath } from "./stored-file-path.js";
import { describeError } from "../errors.js";
import type { MissingStoredFile, StoredFilesCopy } from "../store/backup-store.js";

interface FileRow {
  file_id: string;
  conversation_id: number;
  storage_path: string;
}

/**
 * Copies the files `copy` (the backup's database, not yet in place) names into `partialDirectory` (renamed to
 * `finalDirectory` by the caller) and rewrites their rows to `<finalDirectory's name>/<conversation>/<file>`.
 * `sourcePath` is the database the rows were recorded by: their relative paths resolve against its folder.
 */
export async function copyStoredFiles(
  copy: DatabaseSync, sourcePath: string, partialDirectory: string, finalDirectory: string,
  onProgress?: (copied: number, total: number) => void,
): Promise<StoredFilesCopy> {
  const rows = (copy.prepare("SELECT file_id, conversation_id, storage_path FROM large_files ORDER BY conversation_id, file_id").all() as unknown as FileRow[])
    .map((row) => ({ ...row }));
  const result: StoredFilesCopy = { directory: rows.length > 0 ? finalDirectory : null, copied: 0, bytes: 0, missing: [] };
  if (rows.length === 0) return result;
  await makePrivateDirectory(partialDirectory);
  const folders = new Set<number>();
  const recorded: [path: string, fileId: string][] = [];
  for (const row of rows) {
    const source = resolveRecordedPath(sourcePath, row.storage_path);
    const name = basename(source);
    if (!folders.has(row.conversation_id)) {
      await makePrivateDirectory(join(partialDirectory, String(row.conversation_id)));
      folders.add(row.conversation_id);
    }
    recorded.push([`${basename(finalDirectory)}/${row.conversation_id}/${name}`, row.file_id]);
    const problem = await regularFileProblem(source);
    if (problem) {
      result.missing.push({ fileId: row.file_id, path: source, reason: problem });
      continue;
    }
    const target = join(partialDirectory, String(row.conversation_id), name);
    try {
      await copyFile(source, target);
      await chmod(target, 0o600);
      result.bytes += (await stat(target)).size;
      result.copied++;
    } catch (error) {
      result.missing.push({ fileId: row.file_id, path: source, reason: `not copied (${describeError(error)})` });
    }
    onProgress?.(result.copied + result.missing.length, rows.length);
  }
  const update = copy.prepare("UPDATE large_files SET storage_path = ? WHERE file_id = ?");
  copy.exec("BEGIN");
  try {
    for (const [path, fileId] of recorded) update.run(path, fileId);
    copy.exec("COMMIT");
  } catch (error) {
    copy.exec("ROLLBACK");
    throw error;
  }
  return result;
}

async function makePrivateDirectory(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  await chmod(path, 0o700); // the process umask may have taken bits off mkdir's mode; the owner keeps all of them
}

/** Why `path` cannot be copied (missing, not a regular file, unreadable), or null when it can. */
async function regularFileProblem(path: string): Promise<string | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? null : "not a regular file (a folder, named pipe or device is never read)";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing (moved or deleted)" : `not readable (${describeError(error)})`;
  }
}
