/**
 * `lcm backup <path>`: an online, consistent copy of the database (the backend's BackupStore), safe while a gateway
 * writes to it, with a progress bar; the copy is checked before it takes the target's name. The stored files go with
 * it, into `<backup name>-files/` beside it, recorded relative to it, so the backup opened anywhere finds them. A
 * stored file that could not be copied (already missing) is named, and the command exits 7 (problems found) with the
 * backup written: everything else is in it.
 */
import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { BackupResult } from "../../store/backup-store.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { bytes, count } from "../format.js";

export type BackupOutput = BackupResult & { source: string; filesDirectory: string | null };

export async function backupCommand(runtime: CliRuntime, target: string, options: { force: boolean }): Promise<CommandOutput<BackupOutput>> {
  requireFolderOf(target);
  const stores = runtime.open("read");
  const progress = runtime.progress("Backing up");
  let result: BackupResult;
  try {
    result = await stores.backend.backup.backupTo(target, {
      overwrite: options.force,
      onProgress: (copied, total) => progress.update(copied, total, stores.backend.kind === "sqlite" ? "pages" : "rows"),
      onFileProgress: (handled, total) => progress.update(handled, total, "stored files"),
    });
  } finally {
    progress.stop();
  }
  const { files } = result;
  const lines = [
    result.method === "table-copy"
      ? `Backed up ${runtime.databaseLabel} to ${result.path}, a SQLite file: ${bytes(result.bytes)}, ${count(result.rows ?? 0)} rows copied ` +
        `from one snapshot, in ${count(result.durationMs)} ms (mode ${result.mode}). Open it with --db, or restore it with lcm migrate sqlite-to-postgres.`
      : `Backed up ${runtime.databaseLabel} to ${result.path}: ${bytes(result.bytes)}, ${count(result.pages)} pages, ` +
        `${result.method === "backup-api" ? "SQLite's online backup" : "VACUUM INTO"}, checked, in ${count(result.durationMs)} ms (mode ${result.mode}).`,
    files.directory === null
      ? "No stored files."
      : `Stored files: ${count(files.copied)} (${bytes(files.bytes)}) copied to ${files.directory}; the backup records them there, relative to itself.`,
  ];
  if (files.missing.length > 0) {
    lines.push(`${count(files.missing.length)} stored file${files.missing.length === 1 ? "" : "s"} could not be copied (the backup keeps their records; \`lcm doctor\` on it lists them):`);
    for (const file of files.missing.slice(0, 20)) lines.push(`- ${file.fileId}: ${file.reason} at ${file.path}`);
    if (files.missing.length > 20) lines.push(`- … and ${count(files.missing.length - 20)} more (--json lists them all)`);
  }
  return {
    data: { ...result, source: runtime.databaseLabel, filesDirectory: files.directory },
    text: lines.join("\n"),
    ...(files.missing.length > 0 ? { exitCode: EXIT.problemsFound } : {}),
  };
}

/** The backup goes into an existing folder: a missing one is bad usage (exit 2) with the fix, before anything is read. */
function requireFolderOf(target: string): void {
  const folder = dirname(resolve(target));
  const info = statSync(folder, { throwIfNoEntry: false });
  if (!info) throw new CliError(EXIT.usage, `The folder of the backup target, ${folder}, does not exist. Create it first (mkdir -p ${folder}) or choose another path.`);
  if (!info.isDirectory()) throw new CliError(EXIT.usage, `${folder} is not a folder, so the backup target ${target} cannot be written there. Choose another path.`);
}
