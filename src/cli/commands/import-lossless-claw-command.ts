/**
 * `lcm import lossless-claw <path> [--apply]`: brings a lossless-claw database (either schema line) into LCM's
 * (src/import/lossless-claw). Without --apply, a dry run against a throwaway in-memory database reports what would
 * come over and what cannot be mapped exactly; with it, the rows are written (a missing LCM database is created) and
 * the imported messages and summaries are indexed for search. The source is only ever read.
 * Exits 3 when the source is missing, 5 when it is not lossless-claw's (or the target is not LCM's), 6 when either
 * cannot be opened.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import type { ImportReport } from "../../transfer/lossless-claw/import-report.js";
import { importLosslessClaw } from "../../transfer/lossless-claw/lossless-claw-import.js";
import { PeerImportError } from "../../transfer/lossless-claw/peer-import-error.js";
import { LargeFileStorage } from "../../large-files/large-file-storage.js";
import type { LcmBackend } from "../../store/backend.js";
import { type CliEnvironment, type CliRuntime, type CommandOutput, type CommonOptions, runCommand } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { count } from "../format.js";
import { withCommonOptions } from "./import-command.js";

/**
 * The report, with what the other import commands also say: `dryRun` (true unless --apply), the target database
 * and whether this run created it. `applied` (the opposite of dryRun) and `target` (= databasePath) are kept for
 * scripts written against the first version.
 */
export type ImportLosslessClawOutput = ImportReport & {
  dryRun: boolean;
  databasePath: string;
  databaseCreated: boolean;
  target: string;
  indexed: { messages: number; pending: number } | null;
};

interface Options {
  apply: boolean;
  agent: string;
  index: boolean;
}

/** Adds `lossless-claw` to the `lcm import` group. */
export function defineImportLosslessClawCommand(group: Command, environment: CliEnvironment): void {
  withCommonOptions(group.command("lossless-claw")
    .description("Import a lossless-claw database: conversations, messages, the summary DAG, context, stored files")
    .argument("<path>", "lossless-claw's database file (its default: ~/.openclaw/lcm.db)")
    .option("--apply", "write (default: a dry run that reports what would come over)")
    .option("--agent <id>", "agent of conversations whose session key names none (lossless-claw 0.1 kept no session key)", "main")
    .option("--no-index", "leave the imported rows for maintenance to index (default: index them for search now)"))
    .action((path: string, options: CommonOptions & { apply?: boolean; agent: string; index: boolean }) =>
      runCommand(environment, "import lossless-claw", options, (runtime) =>
        importLosslessClawCommand(runtime, path, { apply: options.apply === true, agent: options.agent, index: options.index })));
}

export async function importLosslessClawCommand(runtime: CliRuntime, sourceArgument: string, options: Options): Promise<CommandOutput<ImportLosslessClawOutput>> {
  const { config } = runtime.settings;
  const source = resolve(sourceArgument);
  const targetPath = resolve(config.databasePath);
  if (source === targetPath) throw new CliError(EXIT.usage, `The source ${source} is the target database itself; pass lossless-claw's database (e.g. ~/.openclaw/lcm.db).`);
  const progress = runtime.progress(options.apply ? "Importing" : "Reading");
  try {
    const created = options.apply && !runtime.hasDatabase();
    const target = openTarget(runtime, options.apply);
    const scratch = options.apply ? null : runtime.openScratch();
    // With --apply the target is the store (an interrupted import resumes in it); a dry run writes to a scratch
    // database and only reads the target, for what it holds already.
    const report = await importLosslessClaw({
      sourcePath: source,
      store: (scratch ?? target!).peerImport,
      target: scratch ? (target ? target.peerImport : null) : undefined,
      files: options.apply ? new LargeFileStorage(config.filesDirectory) : null,
      defaultAgentId: options.agent,
      tokens: runtime.tokens,
      clock: runtime.clock,
      onProgress: (done, total) => progress.update(done, total, "messages"),
    }).catch((error: unknown) => {
      throw error instanceof PeerImportError ? new CliError(exitCodeOf(error), error.message, error.reason) : error;
    });
    progress.stop();
    let indexed: ImportLosslessClawOutput["indexed"] = null;
    if (options.apply && options.index && target) {
      const indexProgress = runtime.progress("Indexing");
      const waiting = await target.searchIndex.pendingMessages();
      const result = await target.searchIndex.indexPending();
      indexProgress.update(waiting, waiting, "messages");
      indexProgress.stop();
      indexed = { messages: result.indexed, pending: result.pending };
    }
    const data: ImportLosslessClawOutput = { ...report, dryRun: !report.applied, databasePath: targetPath, databaseCreated: created, target: targetPath, indexed };
    return { data, text: describe(data) };
  } finally {
    progress.stop();
  }
}

/** The target: created when --apply finds none; in a dry run only read, and only when it can hold earlier imports. */
function openTarget(runtime: CliRuntime, apply: boolean): LcmBackend | null {
  if (apply) return runtime.openCreating().backend;
  if (!runtime.hasDatabase() || runtime.predatesImports()) return null;
  return runtime.open("read").backend;
}

function exitCodeOf(error: PeerImportError) {
  switch (error.reason) {
    case "source-missing":
      return EXIT.notFound;
    case "not-peer":
      return EXIT.refused;
    case "source-unreadable":
      return EXIT.unavailable;
  }
}

function describe(data: ImportLosslessClawOutput): string {
  const { sourceCounts: source, written, conversations } = data;
  const verb = data.dryRun ? "Would import" : "Imported";
  const lines = [
    `lossless-claw ${data.source.versionRange} database ${data.source.path} (schema line ${data.source.schemaLine}) → ${data.target}`,
    `${verb} ${count(conversations.imported)} of ${count(conversations.total)} conversations` +
      (conversations.alreadyImported ? ` (${count(conversations.alreadyImported)} imported before: nothing to do)` : "") +
      (conversations.resumed ? ` (${count(conversations.resumed)} resumed)` : "") +
      (conversations.archived ? `, ${count(conversations.archived)} as archived` : "") +
      (conversations.notImported ? `; ${count(conversations.notImported)} not imported (below)` : "") + ".",
    "",
    "table              source   " + (data.dryRun ? "would write" : "written"),
    ...([
      ["messages", source.messages, written.messages], ["message parts", source.messageParts, written.messageParts],
      ["summaries", source.summaries, written.summaries], ["summary → message", source.summaryMessages, written.summaryMessages],
      ["summary → summary", source.summaryParents, written.summaryParents], ["context items", source.contextItems, written.contextItems],
      ["large files", source.largeFiles, written.largeFiles],
    ] as const).map(([name, from, to]) => `${name.padEnd(17)} ${count(from).padStart(8)}   ${count(to).padStart(8)}`),
  ];
  if (data.unmapped.length > 0) {
    lines.push("", "Not mapped exactly (kept as the peer had it where possible; --json lists examples):");
    for (const entry of data.unmapped) lines.push(`- ${entry.kind}: ${count(entry.count)}`);
  }
  const tables = Object.entries(data.notImportedTables);
  if (tables.length > 0) lines.push("", `Not imported (lossless-claw's own bookkeeping): ${tables.map(([table, rows]) => `${table} (${count(rows)})`).join(", ")}.`);
  if (!data.dryRun) {
    if (data.databaseCreated) lines.push("", `Created the LCM database ${data.databasePath}.`);
    lines.push("", `${count(written.messages)} messages in ${count(data.durationMs)} ms (${count(data.messagesPerSecond)} messages/s).`);
    if (data.indexed) lines.push(`Indexed ${count(data.indexed.messages)} messages for search${data.indexed.pending ? `; ${count(data.indexed.pending)} left for maintenance` : ""}.`);
  } else {
    lines.push("", "Dry run: nothing was written. Run again with --apply to import.");
  }
  return lines.join("\n");
}
