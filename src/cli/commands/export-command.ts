/**
 * `lcm export <conversation> | --agent <id> --format jsonl|markdown --out <path>`: one conversation, or every
 * conversation of an agent (archived ones included, oldest first), written as the lossless JSONL export
 * (transfer/jsonl-export.ts; `lcm import jsonl` restores it) or as Markdown to read (transfer/markdown-export.ts).
 * The file is written beside its target and renamed into place when whole, so a failed export leaves no half file.
 */
import { once } from "node:events";
import { createWriteStream, existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { exportLine } from "../../transfer/export-format.js";
import { conversationCounts, conversationIdsOfAgent, exportConversationRecords } from "../../transfer/jsonl-export.js";
import { exportConversationMarkdown } from "../../transfer/markdown-export.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { bytes, count } from "../format.js";

export type ExportFormat = "jsonl" | "markdown";

export interface ExportedConversation {
  conversationId: number;
  agentId: string;
  sessionId: string;
  messages: number;
  summaries: number;
  contextItems: number;
  largeFiles: number;
  missingFiles: number;
}

export interface ExportOutput {
  format: ExportFormat;
  path: string;
  databasePath: string;
  bytes: number;
  durationMs: number;
  conversations: ExportedConversation[];
}

export async function exportCommand(
  runtime: CliRuntime,
  target: { conversation?: number; agent?: string },
  options: { format: ExportFormat; out: string; force: boolean },
): Promise<CommandOutput<ExportOutput>> {
  if ((target.conversation === undefined) === (target.agent === undefined)) {
    throw new CliError(EXIT.usage, "Name one conversation (lcm export <conversation>) or one agent (--agent <id>), not both and not neither.");
  }
  const path = resolve(options.out);
  if (existsSync(path) && !options.force) throw new CliError(EXIT.usage, `${path} exists; pass --force to replace it, or choose another --out.`);
  const { config } = runtime.settings;
  const { database } = runtime.open("read");
  const ids = target.conversation !== undefined ? [target.conversation] : conversationIdsOfAgent(database, target.agent!);
  if (ids.length === 0) throw new CliError(EXIT.notFound, `Agent ${target.agent} has no conversations in ${config.databasePath}; \`lcm conversations\` lists the stored ones.`);
  const totalMessages = ids.reduce((sum, id) => sum + (conversationCounts(database, id)?.messages ?? 0), 0);

  const started = performance.now();
  const partial = `${path}.partial-${process.pid}`;
  const out = createWriteStream(partial, { mode: 0o600 });
  const progress = runtime.progress("Exporting");
  const exported: ExportedConversation[] = [];
  let written = 0;
  let messagesDone = 0;
  const write = async (text: string) => {
    written += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, "drain");
  };
  try {
    for (const conversationId of ids) {
      if (options.format === "markdown") {
        if (exported.length > 0) await write("\n---\n\n");
        for await (const piece of exportConversationMarkdown(database, conversationId)) await write(piece);
        const counts = conversationCounts(database, conversationId)!;
        exported.push({ conversationId, ...counts, missingFiles: 0 });
        continue;
      }
      let entry: ExportedConversation | null = null;
      for await (const record of exportConversationRecords(database, conversationId)) {
        if (record.type === "conversation") {
          entry = { conversationId, agentId: record.agentId, sessionId: record.sessionId, messages: 0, summaries: 0, contextItems: 0, largeFiles: 0, missingFiles: 0 };
        } else if (record.type === "message" && ++messagesDone % 1_000 === 0) {
          progress.update(messagesDone, totalMessages, "messages");
        } else if (record.type === "end" && entry) {
          const { type: _type, ...counts } = record;
          exported.push({ ...entry, ...counts });
        }
        await write(exportLine(record));
      }
    }
    out.end();
    await once(out, "finish");
    await rename(partial, path);
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  } finally {
    progress.stop();
  }
  const durationMs = Math.round(performance.now() - started);
  const missing = exported.reduce((sum, entry) => sum + entry.missingFiles, 0);
  const text = `Exported ${exported.length} conversation${exported.length === 1 ? "" : "s"} (${count(exported.reduce((sum, entry) => sum + entry.messages, 0))} messages, ` +
    `${count(exported.reduce((sum, entry) => sum + entry.summaries, 0))} summaries) as ${options.format} to ${path}: ${bytes(written)} in ${count(durationMs)} ms.` +
    (missing > 0 ? `\n${missing} large file${missing === 1 ? " was" : "s were"} missing on disk; the export records them without content (see lcm doctor).` : "");
  return { data: { format: options.format, path, databasePath: config.databasePath, bytes: written, durationMs, conversations: exported }, text };
}
