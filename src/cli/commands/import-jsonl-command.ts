/**
 * `lcm import jsonl <file> [--apply]`: restores an `lcm export --format jsonl` file into the database
 * (transfer/jsonl-import.ts): every conversation block the database does not hold yet, exactly; blocks already stored
 * are skipped and named; a bad file or a conflict is refused before anything is written. Without --apply, a dry run:
 * the whole file is checked and decided against the database (read only; none at the path: an empty one in memory),
 * and the report says what would come over. With --apply, the database is created when there is none at the path,
 * and imported rows are then added to the full-text index, in steps, so the gateway is left no backlog.
 */
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { type ImportedBlock, importExportFile, type JsonlImportResult, planExportFile } from "../../transfer/jsonl-import.js";
import { type CliEnvironment, type CliRuntime, type CliStores, type CommandOutput, type CommonOptions, runCommand } from "../cli-runtime.js";
import { count } from "../format.js";
import { withCommonOptions } from "./import-command.js";

export interface ImportJsonlOutput {
  /** True: nothing was written, the counts say what --apply would do. */
  dryRun: boolean;
  path: string;
  databasePath: string;
  databaseCreated: boolean;
  records: number;
  imported: number;
  resumed: number;
  skipped: number;
  indexed: number;
  durationMs: number;
  conversations: ImportedBlock[];
}

/** Adds `jsonl` to the `lcm import` group (import-command.ts). */
export function defineImportJsonlCommand(group: Command, environment: CliEnvironment): void {
  withCommonOptions(group.command("jsonl")
    .description("Restore an `lcm export --format jsonl` file exactly (a dry run unless --apply; conversations already stored are skipped)")
    .argument("<file>", "the JSONL export")
    .option("--apply", "write (default: a dry run that checks the whole file and reports what would come over)"))
    .action((file: string, options: CommonOptions & { apply?: boolean }) =>
      runCommand(environment, "import jsonl", options, (runtime) => importJsonlCommand(runtime, file, { apply: options.apply === true })));
}

export async function importJsonlCommand(runtime: CliRuntime, file: string, options: { apply: boolean }): Promise<CommandOutput<ImportJsonlOutput>> {
  if (!options.apply) return planJsonlCommand(runtime, file);
  const started = performance.now();
  const { config } = runtime.settings;
  const databaseCreated = runtime.createDatabase();
  const stores = runtime.open("write");
  const progress = runtime.progress("Importing");
  let result;
  try {
    result = await importExportFile(stores.backend, file, {
      filesDirectory: config.filesDirectory,
      clock: runtime.clock,
      onProgress: (phase, done, total) => progress.update(done, Math.max(done, total), phase === "check" ? "records checked" : "records written"),
    });
  } finally {
    progress.stop();
  }
  const indexed = await indexNewRows(runtime, stores);
  return report(runtime, result, { dryRun: false, databaseCreated, indexed, durationMs: Math.round(performance.now() - started) });
}

/** The dry run: the importer's first pass against the database read only (or an empty one in memory); writes nothing. */
async function planJsonlCommand(runtime: CliRuntime, file: string): Promise<CommandOutput<ImportJsonlOutput>> {
  const started = performance.now();
  const { exports } = runtime.hasDatabase() ? runtime.open("read").backend : runtime.openScratch();
  const progress = runtime.progress("Checking");
  try {
    const result = await planExportFile(exports, file, {
      onProgress: (_phase, done, total) => progress.update(done, Math.max(done, total), "records checked"),
    });
    return report(runtime, result, { dryRun: true, databaseCreated: false, indexed: 0, durationMs: Math.round(performance.now() - started) });
  } finally {
    progress.stop();
  }
}

function report(
  runtime: CliRuntime, result: JsonlImportResult, run: { dryRun: boolean; databaseCreated: boolean; indexed: number; durationMs: number },
): CommandOutput<ImportJsonlOutput> {
  const { databasePath } = runtime.settings.config;
  const by = (outcome: ImportedBlock["outcome"]) => result.conversations.filter((block) => block.outcome === outcome);
  const verb = (outcome: ImportedBlock["outcome"]) => (run.dryRun ? `would be ${outcome}` : outcome);
  const lines = result.conversations.map((block) => {
    const name = `${block.agentId}/${block.sessionKey ?? block.sessionId}`;
    if (block.outcome === "skipped") return `  ${verb("skipped")} ${name}: already stored as conversation ${block.conversationId}`;
    return `  ${verb(block.outcome)} ${name}${block.conversationId === null ? "" : ` as conversation ${block.conversationId}`}: ` +
      `${count(block.messages)} messages, ${count(block.summaries)} summaries, ${count(block.contextItems)} context items, ` +
      `${count(block.largeFiles)} large files`;
  });
  const coming = by("imported").length + by("resumed").length;
  const skipped = by("skipped").length > 0 ? `; ${by("skipped").length} already stored, left as they are.` : ".";
  const headline = run.dryRun
    ? `Dry run: would import ${coming} of ${result.conversations.length} conversations from ${result.path} into ${databasePath}` +
      `${existsSync(databasePath) ? "" : " (would be created)"}; all ${count(result.records)} records checked${skipped}`
    : `Imported ${coming} of ${result.conversations.length} conversations from ${result.path} ` +
      `into ${databasePath}${run.databaseCreated ? " (created)" : ""} in ${count(run.durationMs)} ms${skipped}`;
  const text = [
    headline,
    ...lines,
    ...(run.dryRun ? ["Nothing was written. Run again with --apply to import."] : []),
  ].join("\n");
  return {
    data: {
      dryRun: run.dryRun, path: result.path, databasePath, databaseCreated: run.databaseCreated, records: result.records,
      imported: by("imported").length, resumed: by("resumed").length, skipped: by("skipped").length, indexed: run.indexed,
      durationMs: run.durationMs, conversations: result.conversations,
    },
    text,
  };
}

/** Indexes what the import stored for full-text search, in steps (the event loop runs between chunks); returns rows indexed. */
export async function indexNewRows(runtime: CliRuntime, stores: CliStores): Promise<number> {
  const index = stores.backend.searchIndex;
  const remaining = async () => await index.pendingMessages() + await index.pendingSummaries();
  const waiting = await remaining();
  if (waiting === 0) return 0;
  const progress = runtime.progress("Indexing");
  let left = waiting;
  try {
    while (left > 0) {
      await index.indexPending({ maxRows: 10_000 });
      const now = await remaining();
      if (now >= left) break; // no progress (another process is indexing): the gateway finishes it
      left = now;
      progress.update(waiting - left, waiting, "rows indexed");
    }
  } finally {
    progress.stop();
  }
  return waiting - left;
}
