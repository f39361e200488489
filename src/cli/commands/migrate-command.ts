/**
 * `lcm migrate sqlite-to-postgres <sqlite-file> <postgres-url>` and `lcm migrate postgres-to-sqlite <postgres-url>
 * <sqlite-file>`: every table of the model copied, ids kept (transfer/table-migration.ts), with a progress bar per
 * table. Idempotent and resumable: run again after an interruption, it copies what is missing and nothing twice. A
 * target holding other data is refused with nothing changed. Stored files stay where they are (their rows name them
 * by absolute path on PostgreSQL), and their content goes into PostgreSQL with their rows; on the way back, a file this
 * machine lacks is written from PostgreSQL's copy beside the SQLite file. Each backend builds its own search index, and
 * the command builds the target's before it ends (messages, summaries, stored files' content): a migrated history is
 * searchable at once, not after a gateway's turns have indexed it 5,000 rows at a time (a 1M-message history: 200
 * turns, during which a regex search of older history could run out of its budget and find nothing). An interrupted
 * run leaves the rest queued; run again, it copies nothing and indexes what is left.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { defaultFilesDirectory } from "../../config.js";
import type { LcmBackend } from "../../store/backend.js";
import type { TableCopyReport } from "../../transfer/table-migration.js";
import { type CliEnvironment, type CliRuntime, type CommandOutput, type CommonOptions, runCommand } from "../cli-runtime.js";
import { count, positiveInteger } from "../format.js";

export type MigrateDirection = "sqlite-to-postgres" | "postgres-to-sqlite";

export type MigrateOutput = TableCopyReport & {
  direction: MigrateDirection;
  /** Messages and summaries the target's full-text index took in afterwards. */
  indexed: number;
  /** Bytes of stored files' content the target's index took in afterwards. */
  indexedFileBytes: number;
};

interface MigrateOptions { json?: boolean; batchRows?: string }

/** Rows and stored content indexed per step of the target's indexing (each step's progress is shown). */
const INDEX_ROWS_PER_STEP = 10_000;
const INDEX_FILE_BYTES_PER_STEP = 4 * 1024 * 1024;

/** Adds `lcm migrate` and its two directions. */
export function defineMigrateCommands(lcm: Command, environment: CliEnvironment): void {
  const group = lcm.command("migrate")
    .description("Copy everything between a SQLite file and a PostgreSQL database, ids kept (idempotent and resumable)")
    .addHelpText("after", `
Stop the gateways that write the source first. The target must be empty, or what an interrupted run of the same
migration left (run it again: it finishes what is missing). Stored files stay where they are.`);
  const direction = (name: MigrateDirection, from: string, to: string, description: string) =>
    group.command(name).description(description)
      .argument(from, from === "<sqlite-file>" ? "the LCM SQLite database to copy" : "the PostgreSQL database to copy (postgres://…)")
      .argument(to, to === "<sqlite-file>" ? "the SQLite file to write (created when missing)" : "the PostgreSQL database to write (postgres://…; empty, or a previous run's)")
      .option("--batch-rows <n>", "rows per transaction", "500")
      .option("--json", "print one JSON document instead of text")
      .action((source: string, target: string, options: MigrateOptions) =>
        runCommand(environment, `migrate ${name}`, options as CommonOptions, (runtime) =>
          migrateCommand(runtime, name, source, target, positiveInteger(options.batchRows ?? "500", "--batch-rows"))));
  direction("sqlite-to-postgres", "<sqlite-file>", "<postgres-url>", "Copy an LCM SQLite database into a PostgreSQL database");
  direction("postgres-to-sqlite", "<postgres-url>", "<sqlite-file>", "Copy an LCM PostgreSQL database into a SQLite file");
}

export async function migrateCommand(
  runtime: CliRuntime, direction: MigrateDirection, sourceLocation: string, targetLocation: string, batchRows: number,
): Promise<CommandOutput<MigrateOutput>> {
  // Loaded when a migration runs: the other commands never load the PostgreSQL backend or the copy.
  const [{ copyAllTables }, { openPostgresForCli, openSqliteSource, openSqliteTarget }, { writingMissingFiles }] = await Promise.all([
    import("../../transfer/table-migration.js"), import("../postgres-target.js"), import("../../transfer/stored-file-copies.js"),
  ]);
  const opened: LcmBackend[] = [];
  const open = (kind: "sqlite-source" | "sqlite-target" | "postgres", location: string, argument: string): LcmBackend => {
    const backend = kind === "postgres" ? openPostgresForCli(location, argument, { applicationName: "lcm-migrate" })
      : kind === "sqlite-source" ? openSqliteSource(location, argument) : openSqliteTarget(location, argument);
    opened.push(backend);
    return backend;
  };
  const progress = runtime.progress("Migrating");
  try {
    const source = direction === "sqlite-to-postgres" ? open("sqlite-source", sourceLocation, "<sqlite-file>") : open("postgres", sourceLocation, "<postgres-url>");
    const target = direction === "sqlite-to-postgres" ? open("postgres", targetLocation, "<postgres-url>") : open("sqlite-target", targetLocation, "<sqlite-file>");
    // A file the PostgreSQL source keeps but this machine lacks is written beside the SQLite target (its files folder).
    const targetCopy = direction === "postgres-to-sqlite"
      ? writingMissingFiles(source.tableCopy, target.tableCopy, defaultFilesDirectory(resolve(targetLocation))) : target.tableCopy;
    const report = await copyAllTables(source.tableCopy, targetCopy, {
      batchRows, onProgress: (table, done, total) => progress.update(done, total, `${table} rows`),
    });
    progress.stop();
    const { indexed, indexedFileBytes } = await indexCopiedRows(runtime, target);
    return { data: { ...report, direction, indexed, indexedFileBytes }, text: describe(report, direction, indexed, indexedFileBytes) };
  } finally {
    progress.stop();
    for (const backend of opened.reverse()) await backend.close();
  }
}

/** Brings the target's full-text indexes up to the copied rows and stored files, so it is searchable as it is. */
async function indexCopiedRows(runtime: CliRuntime, backend: LcmBackend): Promise<{ indexed: number; indexedFileBytes: number }> {
  const index = backend.searchIndex;
  const remaining = async () => await index.pendingMessages() + await index.pendingSummaries();
  const waiting = await remaining();
  const progress = runtime.progress("Indexing");
  let left = waiting;
  let indexedFileBytes = 0;
  try {
    while (left > 0) {
      await index.indexPending({ maxRows: INDEX_ROWS_PER_STEP });
      const now = await remaining();
      if (now >= left) break;
      left = now;
      progress.update(waiting - left, waiting, "rows indexed");
    }
    // Then the stored files' content, a byte budget at a time, until a step finds none left.
    for (;;) {
      const { fileBytes } = await index.indexPending({ maxRows: 0, maxFileBytes: INDEX_FILE_BYTES_PER_STEP });
      if (fileBytes === 0) break;
      indexedFileBytes += fileBytes;
      progress.update(indexedFileBytes, indexedFileBytes, "bytes of stored files indexed");
    }
  } finally {
    progress.stop();
  }
  return { indexed: waiting - left, indexedFileBytes };
}

function describe(report: TableCopyReport, direction: MigrateDirection, indexed: number, indexedFileBytes: number): string {
  const resumed = report.tables.some((table) => table.alreadyThere > 0);
  const lines = [
    report.copied === 0 && resumed
      ? `Nothing to copy: ${report.target} already holds every row of ${report.source}.`
      : `Copied ${count(report.copied)} rows from ${report.source} to ${report.target} in ${count(report.durationMs)} ms` +
        `${resumed ? " (resuming an earlier run)" : ""}.`,
  ];
  for (const table of report.tables) {
    if (table.sourceRows === 0) continue;
    lines.push(`  ${table.table}: ${count(table.copied)} copied${table.alreadyThere > 0 ? `, ${count(table.alreadyThere)} already there` : ""} (source: ${count(table.sourceRows)})`);
  }
  lines.push(direction === "sqlite-to-postgres"
    ? "Stored files stay where they are; the PostgreSQL rows name them by absolute path, and their content is kept in PostgreSQL too."
    : "Stored files stay where they are (those not on this machine were written from PostgreSQL beside the SQLite file).");
  lines.push(`Indexed for search: ${count(indexed)} messages and summaries, ${count(indexedFileBytes)} bytes of stored files' content.`);
  return lines.join("\n");
}
