/**
 * `lcm export <conversation> | --agent <id> --format jsonl|markdown --out <path>`: one conversation, or every
 * conversation of an agent (archived ones included, oldest first), written as the lossless JSONL export
 * (transfer/jsonl-export.ts; `lcm import jsonl` restores it) or as Markdown to read (transfer/markdown-export.ts).
 * Everything is read in one read transaction: one consistent state, whatever the gateway writes meanwhile. The file
 * is written beside its target and renamed into place when whole, so a failed export leaves no half file; the target
 * is never the database itself (--force or not). A stored file that cannot be read fails the export (it would not be
 * lossless) unless --allow-missing-files, which writes its record without content and says the export is not lossless.
 */
import { once } from "node:events";
import { createWriteStream, existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { finished } from "node:stream/promises";
import { resolve } from "node:path";
import { exportLine } from "../../store/export-format.js";
import { exportConversationRecords } from "../../transfer/jsonl-export.js";
import { exportConversationMarkdown } from "../../transfer/markdown-export.js";
import type { ConversationCounts, ExportStore } from "../../store/export-store.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { bytes, count } from "../format.js";

export type ExportFormat = "jsonl" | "markdown";

/** What one exported conversation held, and how many of its stored files had no content to write. */
export interface ExportedConversation extends ConversationCounts {
  conversationId: number;
  missingFiles: number;
}

export interface ExportOutput {
  format: ExportFormat;
  /** True when `lcm import jsonl` restores the file exactly (JSONL with every stored file's content); false otherwise. */
  lossless: boolean;
  /** Stored files written without their content (only with --allow-missing-files). */
  missingFileIds: string[];
  path: string;
  databasePath: string;
  bytes: number;
  durationMs: number;
  conversations: ExportedConversation[];
}

export async function exportCommand(
  runtime: CliRuntime,
  target: { conversation?: number; agent?: string },
  options: { format: ExportFormat; out: string; force: boolean; allowMissingFiles?: boolean },
): Promise<CommandOutput<ExportOutput>> {
  if ((target.conversation === undefined) === (target.agent === undefined)) {
    throw new CliError(EXIT.usage, "Name one conversation (lcm export <conversation>) or one agent (--agent <id>), not both and not neither.");
  }
  const path = resolve(options.out);
  runtime.refuseDatabaseTarget(path, "export");
  if (existsSync(path) && !options.force) throw new CliError(EXIT.usage, `${path} exists; pass --force to replace it, or choose another --out.`);
  const { exports } = runtime.open("read").backend;
  return exports.readSnapshot(() => writeExport(runtime, exports, target, { ...options, path }));
}

async function writeExport(
  runtime: CliRuntime, exports: ExportStore, target: { conversation?: number; agent?: string },
  options: { format: ExportFormat; path: string; allowMissingFiles?: boolean },
): Promise<CommandOutput<ExportOutput>> {
  const { config } = runtime.settings;
  const { path } = options;
  const ids = target.conversation !== undefined ? [target.conversation] : await exports.conversationIdsOfAgent(target.agent!);
  if (ids.length === 0) throw new CliError(EXIT.notFound, `Agent ${target.agent} has no conversations in ${runtime.databaseLabel}; \`lcm conversations\` lists the stored ones.`);
  let totalMessages = 0;
  for (const id of ids) totalMessages += (await exports.conversationCounts(id))?.messages ?? 0;

  const started = performance.now();
  const missingFiles: { fileId: string; conversationId: number }[] = [];
  const partial = `${path}.partial-${process.pid}`;
  const out = createWriteStream(partial, { mode: 0o600 });
  const progress = runtime.progress("Exporting");
  const exported: ExportedConversation[] = [];
  let written = 0;
  let messagesDone = 0;
  // A write error (a full disk) is kept and thrown by the next write or the end, never left unhandled.
  let outError: Error | null = null;
  out.on("error", (error) => { outError ??= error; });
  const write = async (text: string) => {
    if (outError) throw outError;
    written += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, "drain");
  };
  try {
    for (const conversationId of ids) {
      if (options.format === "markdown") {
        if (exported.length > 0) await write("\n---\n\n");
        for await (const piece of exportConversationMarkdown(exports, conversationId)) await write(piece);
        const counts = (await exports.conversationCounts(conversationId))!;
        exported.push({ conversationId, ...counts, missingFiles: 0 });
        continue;
      }
      let entry: ExportedConversation | null = null;
      for await (const record of exportConversationRecords(exports, conversationId)) {
        if (record.type === "conversation") {
          entry = { conversationId, agentId: record.agentId, sessionId: record.sessionId, messages: 0, summaries: 0, contextItems: 0, largeFiles: 0, missingFiles: 0 };
        } else if (record.type === "message" && ++messagesDone % 1_000 === 0) {
          progress.update(messagesDone, totalMessages, "messages");
        } else if (record.type === "largeFile" && record.contentBase64 === null) {
          missingFiles.push({ fileId: record.fileId, conversationId });
          if (!options.allowMissingFiles) throw missingFileError(record.fileId, conversationId, config.filesDirectory);
        } else if (record.type === "end" && entry) {
          const { type: _type, ...counts } = record;
          exported.push({ ...entry, ...counts });
        }
        await write(exportLine(record));
      }
    }
    out.end();
    await finished(out);
    await rename(partial, path);
  } catch (error) {
    // Destroyed while its file may still be opening or a write pending: wait until it is closed, or the file would be
    // created after it is removed (and the pending write would fail unhandled).
    out.destroy();
    await finished(out).catch(() => undefined);
    await rm(partial, { force: true });
    throw error;
  } finally {
    progress.stop();
  }
  const durationMs = Math.round(performance.now() - started);
  const lossless = options.format === "jsonl" && missingFiles.length === 0;
  const missing = missingFiles.length;
  const text = `Exported ${exported.length} conversation${exported.length === 1 ? "" : "s"} (${count(exported.reduce((sum, entry) => sum + entry.messages, 0))} messages, ` +
    `${count(exported.reduce((sum, entry) => sum + entry.summaries, 0))} summaries) as ${options.format} to ${path}: ${bytes(written)} in ${count(durationMs)} ms` +
    (lossless ? "; lossless: lcm import jsonl restores it exactly." : ".") +
    (missing > 0
      ? `\nNOT lossless: ${missing} stored file${missing === 1 ? " was" : "s were"} unreadable and ${missing === 1 ? "is" : "are"} recorded without content ` +
        `(--allow-missing-files): ${missingFiles.map((file) => file.fileId).join(", ")}. See lcm doctor.`
      : "");
  return {
    data: {
      format: options.format, lossless, missingFileIds: missingFiles.map((file) => file.fileId), path, databasePath: runtime.databaseLabel,
      bytes: written, durationMs, conversations: exported,
    },
    text,
  };
}

function missingFileError(fileId: string, conversationId: number, filesDirectory: string): CliError {
  return new CliError(
    EXIT.unavailable,
    `The stored file ${fileId} of conversation ${conversationId} cannot be read (missing or unreadable under ${filesDirectory}), so the ` +
      "export would not be lossless; nothing was written. Restore the file (lcm doctor names where it belongs), or pass " +
      "--allow-missing-files to export its record without content (the export then says it is not lossless).",
  );
}
