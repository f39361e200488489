/**
 * `lcm status [conversation]`: the database (file, schema, size, growth, what retention would do, totals, index
 * backlog) and, for one conversation, what `/lcm status` shows in a chat, from the same StatusService. The spend
 * guard counts in the gateway's memory: the CLI shows its limits and says where the count is (the `lcm.status` RPC),
 * never its own empty guard. Circuit breakers are per process too; a closed one is not shown.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { renderStatus } from "../../chat/lcm-status.js";
import { StatusService, type StatusSnapshot } from "../../services/status-service.js";
import type { DatabaseFileInfo } from "../../store/operator-store.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { bytes, count } from "../format.js";

export interface StatusOutput {
  databasePath: string;
  databasePathSource: string;
  file: DatabaseFileInfo & { walBytes: number };
  status: StatusSnapshot;
}

export async function statusCommand(runtime: CliRuntime, conversationId: number | undefined): Promise<CommandOutput<StatusOutput>> {
  const { config, databasePathSource } = runtime.settings;
  const stores = runtime.open("read");
  const service = new StatusService({
    location: stores.backend.location, conversations: stores.store, sessions: stores.retrievalStore, status: stores.statusStore, config, clock: runtime.clock,
    storage: stores.backend.retention, spendGuard: null,
  });
  const status = await service.snapshot(conversationId === undefined ? {} : { conversationId });
  if (conversationId !== undefined && status.conversation === null) {
    throw new CliError(EXIT.notFound, `No conversation ${conversationId} is stored in ${runtime.databaseLabel}; list them with \`lcm conversations\`.`);
  }
  const info = await stores.operator.fileInfo();
  const file = info.backend === "sqlite"
    ? {
        ...info,
        // A read-only connection to a WAL file whose log was checkpointed away reads it immutable, and SQLite then reports
        // "delete": the file header says what the database is.
        journalMode: isWalHeader(config.databasePath) ? "wal" : info.journalMode,
        sizeBytes: statSync(config.databasePath).size,
        walBytes: statSync(`${config.databasePath}-wal`, { throwIfNoEntry: false })?.size ?? 0,
      }
    // A server's database: its size as the server counts it, and no write-ahead log file of LCM's own.
    : { ...info, walBytes: 0 };
  const pages = file.pageCount === null || file.pageSize === null
    ? `${bytes(file.freeBytes)} free (dead rows)`
    : `${count(file.pageCount)} pages of ${bytes(file.pageSize)} (${count(file.freePages ?? 0)} free)`;
  const text = [
    renderStatus(status, conversationId === undefined ? "database" : "session"),
    `${file.backend === "sqlite" ? "File" : "Database (PostgreSQL)"}: schema ${file.schemaVersion} · ${bytes(file.sizeBytes)}` +
      `${file.walBytes > 0 ? ` + ${bytes(file.walBytes)} write-ahead log` : ""} · ${pages} · journal ${file.journalMode} · path from ${databasePathSource}`,
  ].join("\n");
  return { data: { databasePath: runtime.databaseLabel, databasePathSource, file, status }, text };
}

/** Whether the file's header marks it a WAL database (bytes 18 and 19 are 2). */
function isWalHeader(path: string): boolean {
  const descriptor = openSync(path, "r");
  try {
    const header = Buffer.alloc(20);
    return readSync(descriptor, header, 0, 20, 0) === 20 && header[18] === 2 && header[19] === 2;
  } finally {
    closeSync(descriptor);
  }
}
