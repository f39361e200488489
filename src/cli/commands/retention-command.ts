/**
 * `lcm retention [--apply] [--vacuum]`: what the configured retention policy would archive and remove (dry run, the
 * default), or does it (--apply: everything the policy asks for, not the bounded slice `maintain` does). `--vacuum`
 * turns on incremental vacuum for a file created before it (one full VACUUM: it rewrites the file and blocks other
 * writers while it runs; stop the gateway first on a large database). Nothing happens unless a retention setting is on.
 */
import { exportConversationRecords } from "../../transfer/jsonl-export.js";
import { GzipJsonlArchiveWriter } from "../../retention/archive-writer.js";
import { describeReport, type RetentionReport, RetentionService } from "../../retention/retention-service.js";
import { SqliteRetentionStore } from "../../sqlite/sqlite-retention-store.js";
import { transferStoresOn } from "../../sqlite/transfer-stores.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { bytes } from "../format.js";

export type RetentionOutput = RetentionReport & { databasePath: string; archiveDirectory: string; fullVacuum: boolean };

export async function retentionCommand(runtime: CliRuntime, options: { apply: boolean; vacuum: boolean }): Promise<CommandOutput<RetentionOutput>> {
  const { config } = runtime.settings;
  const stores = runtime.open(options.apply || options.vacuum ? "write" : "read");
  const store = new SqliteRetentionStore(stores.database);
  const { exports } = transferStoresOn(stores.database);
  const service = new RetentionService({
    store, conversations: stores.store, exportConversation: (conversationId) => exportConversationRecords(exports, conversationId),
    archives: new GzipJsonlArchiveWriter(config.retentionArchiveDirectory), config, clock: runtime.clock,
    logger: { debug: () => undefined, info: (message) => runtime.note(message), warn: (message) => runtime.note(message), error: (message) => runtime.note(message) },
  });
  const report = await service.run({ apply: options.apply });
  let fullVacuum = false;
  if (options.vacuum && store.space().autoVacuum !== "incremental") {
    runtime.note("Rewriting the file once with auto_vacuum=INCREMENTAL (VACUUM): this takes a while on a large database.");
    fullVacuum = true;
  }
  if (options.apply || fullVacuum) await store.reclaimSpace({ full: fullVacuum });
  const lines = [
    `Retention: ${describeReport(report)}.`,
    `In use: ${bytes(report.usedBytesBefore)}${options.apply ? ` → ${bytes(report.usedBytesAfter)}` : ""}` +
      (report.policy?.maxDatabaseBytes ? ` (cap ${bytes(report.policy.maxDatabaseBytes)}, over by ${bytes(report.overCapBytes)})` : "") +
      ` · auto_vacuum ${fullVacuum ? "incremental (just turned on)" : report.autoVacuum}`,
    ...report.conversations.map((entry) => `  conversation ${entry.conversationId} (${entry.agentId}/${entry.sessionId}, ${entry.messages} messages)${entry.archivePath ? ` → ${entry.archivePath}` : ""}`),
    ...report.messages.archivePaths.map((path) => `  messages → ${path}`),
  ];
  if (!options.apply && report.enabled) lines.push("Dry run: nothing was changed; --apply does it.");
  if (report.autoVacuum !== "incremental" && !fullVacuum && report.enabled) {
    lines.push("This file was created before incremental vacuum: freed pages are reused but the file does not shrink; --vacuum rewrites it once.");
  }
  return {
    data: { ...report, databasePath: config.databasePath, archiveDirectory: config.retentionArchiveDirectory, fullVacuum },
    text: lines.join("\n"),
  };
}
