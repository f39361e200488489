/**
 * `lcm backup <path>`: an online, consistent copy of the database (services/database-backup.ts), safe while a gateway
 * writes to it, with a progress bar; the copy is checked before it takes the target's name. Large files stored aside
 * live in their own folder, which the copy does not include: the output names it.
 */
import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type BackupResult, backupDatabase } from "../../services/database-backup.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { bytes, count } from "../format.js";

export type BackupOutput = BackupResult & { source: string; filesDirectory: string | null };

export async function backupCommand(runtime: CliRuntime, target: string, options: { force: boolean }): Promise<CommandOutput<BackupOutput>> {
  requireFolderOf(target);
  const { config } = runtime.settings;
  const stores = runtime.open("read");
  const progress = runtime.progress("Backing up");
  let result: BackupResult;
  try {
    result = await backupDatabase(stores.database.raw, config.databasePath, target, {
      overwrite: options.force,
      onProgress: (copied, total) => progress.update(copied, total, "pages"),
    });
  } finally {
    progress.stop();
  }
  const filesDirectory = existsSync(config.filesDirectory) ? config.filesDirectory : null;
  const text = `Backed up ${config.databasePath} to ${result.path}: ${bytes(result.bytes)}, ${count(result.pages)} pages, ` +
    `${result.method === "backup-api" ? "SQLite's online backup" : "VACUUM INTO"}, checked, in ${count(result.durationMs)} ms.` +
    (filesDirectory ? `\nLarge files stored aside are in ${filesDirectory}; copy that folder with the backup.` : "");
  return { data: { ...result, source: config.databasePath, filesDirectory }, text };
}

/** The backup goes into an existing folder: a missing one is bad usage (exit 2) with the fix, before anything is read. */
function requireFolderOf(target: string): void {
  const folder = dirname(resolve(target));
  const info = statSync(folder, { throwIfNoEntry: false });
  if (!info) throw new CliError(EXIT.usage, `The folder of the backup target, ${folder}, does not exist. Create it first (mkdir -p ${folder}) or choose another path.`);
  if (!info.isDirectory()) throw new CliError(EXIT.usage, `${folder} is not a folder, so the backup target ${target} cannot be written there. Choose another path.`);
}
