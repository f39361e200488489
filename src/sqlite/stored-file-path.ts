/**
 * How a stored file's path is recorded in `large_files.storage_path`: relative to the database's folder when the file
 * lies inside it (the default files directory is `<name>-files/` beside the database), absolute otherwise. A
 * database copied or moved with its files folder (a backup, a restore, a new home directory) then still finds every
 * file, while a files directory configured elsewhere keeps working as it did. Rows written before schema 13 held
 * absolute paths; migration 13 made those under the database's folder relative.
 */
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

/** Databases with no folder of their own (in memory): paths are recorded absolute. */
function folderOf(databasePath: string): string | null {
  if (databasePath === "" || databasePath === ":memory:" || databasePath.startsWith("file::memory:")) return null;
  return dirname(resolve(databasePath));
}

/** The path to record for a file stored at `filePath`: relative to the database's folder when inside it. */
export function recordedPath(databasePath: string, filePath: string): string {
  const folder = folderOf(databasePath);
  const absolute = resolve(filePath);
  if (folder === null) return absolute;
  const inside = relative(folder, absolute);
  return inside !== "" && !inside.startsWith(`..${sep}`) && inside !== ".." && !isAbsolute(inside) ? inside : absolute;
}

/** The file a recorded path names: a relative one is resolved against the database's folder. */
export function resolveRecordedPath(databasePath: string, recorded: string): string {
  if (isAbsolute(recorded)) return recorded;
  const folder = folderOf(databasePath);
  return folder === null ? resolve(recorded) : resolve(folder, recorded);
}
