/**
 * `lcm retention [--apply] [--vacuum]`: what the configured retention policy would archive and remove (dry run, the
 * default), or does it (--apply: everything the policy asks for, not the bounded slice `maintain` does). `--vacuum`
 * turns on incremental vacuum for a SQLite file created before it (one full VACUUM: it rewrites the file and blocks
 * other writers while it runs; stop the gateway first on a large database); on PostgreSQL it runs VACUUM FULL on LCM's
 * tables. Nothing happens unless a retention setting is on.
 */
import { describeReport, type RetentionReport } from "../../retention/retention-service.js";
import { retentionServiceOn } from "../../retention/retention-wiring.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { bytes } from "../format.js";

export type RetentionOutput = RetentionReport & { databasePath: string; archiveDirectory: string; fullVacuum: boolean };

export async function retentionCommand(runtime: CliRuntime, options: { apply: boolean; vacuum: boolean }): Promise<CommandOutput<RetentionOutput>> {
  const { config } = runtime.settings;
  const stores = runtime.open(options.apply || options.vacuum ? "write" : "read");
  const store = stores.backend.retention;
  const service = retentionServiceOn(stores.backend, {
    config, clock: runtime.clock,
    // Each archive written is said as it happens (info), unlike the other commands' services.
    logger: { ...runtime.logger, info: (message) => runtime.note(message) },
  });
  const report = await service.run({ apply: options.apply });
  let fullVacuum = false;
  const before = options.vacuum ? (await store.space()).autoVacuum : report.autoVacuum;
  if (options.vacuum && before !== "incremental") {
    runtime.note(before === "server"
      ? "Rewriting LCM's tables (VACUUM FULL): each table is locked while it is rewritten, so every gateway's writes wait; this takes a while on a large database."
      : "Rewriting the file once with auto_vacuum=INCREMENTAL (VACUUM): this takes a while on a large database.");
    fullVacuum = true;
  }
  if (options.apply || fullVacuum) await store.reclaimSpace({ full: fullVacuum });
  const vacuumWords = report.autoVacuum === "server"
    ? ` · vacuum by the server${fullVacuum ? " (VACUUM FULL just ran)" : options.apply ? " (VACUUM just ran)" : ""}`
    : ` · auto_vacuum ${fullVacuum ? "incremental (just turned on)" : report.autoVacuum}`;
  const lines = [
    `Retention: ${describeReport(report)}.`,
    `In use: ${bytes(report.usedBytesBefore)}${options.apply ? ` → ${bytes(report.usedBytesAfter)}` : ""}` +
      (report.policy?.maxDatabaseBytes ? ` (cap ${bytes(report.policy.maxDatabaseBytes)}, over by ${bytes(report.overCapBytes)})` : "") + vacuumWords,
    ...report.conversations.map((entry) => `  conversation ${entry.conversationId} (${entry.agentId}/${entry.sessionId}, ${entry.messages} messages)${entry.archivePath ? ` → ${entry.archivePath}` : ""}`),
    ...report.messages.archivePaths.map((path) => `  messages → ${path}`),
  ];
  if (report.busyConversations.length > 0) {
    lines.push(`Skipped (another gateway was compacting or repairing them; the next run takes them): conversation(s) ${report.busyConversations.join(", ")}.`);
  }
  if (!options.apply && report.enabled) lines.push("Dry run: nothing was changed; --apply does it.");
  if ((report.autoVacuum === "none" || report.autoVacuum === "full") && !fullVacuum && report.enabled) {
    lines.push("This file was created before incremental vacuum: freed pages are reused but the file does not shrink; --vacuum rewrites it once.");
  }
  return {
    data: { ...report, databasePath: runtime.databaseLabel, archiveDirectory: config.retentionArchiveDirectory, fullVacuum },
    text: lines.join("\n"),
  };
}
