/**
 * `lcm describe <sum_…|file_…>`: the lcm_describe engine for the operator. Human output is text (what the summary
 * is, where it sits in the DAG and the context, its content; a file's name, size, exploration summary and a page),
 * and every hint names the CLI's flags (`--start-line`, `--offset`), not the tool's parameters. `--json` prints the
 * engine's description as it is.
 */
import { isLcmError, LcmError } from "../../errors.js";
import { type Description, type FileDescription, type PageParameterNames, pageNote, type SummaryDescription } from "../../retrieval/describe.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { bytes, count, counted } from "../format.js";
import { recallFor } from "./recall-commands.js";

export interface DescribeOptions {
  conversation?: number;
  startLine?: number;
  maxLines?: number;
  offset?: number;
  maxBytes?: number;
}

/** The page parameters as `lcm describe` spells them. */
const CLI_PAGE_FLAGS: PageParameterNames = { offset: "--offset", startLine: "--start-line", again: "run again with" };
const FLAG_OF: Record<string, string> = { offset: "--offset", maxBytes: "--max-bytes", startLine: "--start-line", maxLines: "--max-lines" };

export async function describeCommand(runtime: CliRuntime, id: string, options: DescribeOptions): Promise<CommandOutput<Description>> {
  if ((options.offset !== undefined || options.maxBytes !== undefined) && (options.startLine !== undefined || options.maxLines !== undefined)) {
    throw new CliError(EXIT.usage, "Page a file either by lines (--start-line, --max-lines) or by bytes (--offset, --max-bytes), not both.");
  }
  const { service, reader } = recallFor(runtime, runtime.open("read"));
  let description: Description;
  try {
    description = await service.describe(reader, id, options.conversation !== undefined ? { conversationId: options.conversation } : {}, {
      ...(options.offset !== undefined ? { offset: options.offset } : {}),
      ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
      ...(options.startLine !== undefined ? { startLine: options.startLine } : {}),
      ...(options.maxLines !== undefined ? { maxLines: options.maxLines } : {}),
    });
  } catch (error) {
    throw withFlagNames(error);
  }
  return { data: description, text: description.type === "summary" ? summaryText(description, id) : fileText(description) };
}

function summaryText(summary: SummaryDescription, id: string): string {
  const where = summary.inContext
    ? "in the model's context now"
    : summary.childSummaryIds.length > 0 ? `condensed into ${summary.childSummaryIds.join(", ")}` : "not in the context";
  const lines = [
    `${summary.summaryId}: ${summary.kind} summary, depth ${summary.depth}, conversation ${summary.conversationId}` +
      (summary.level === "normal" ? "" : ` (${summary.level === "fallback" ? "fallback: a truncation written when the model failed" : "aggressive"})`),
    `${counted(summary.tokenCount, "token")} from ${counted(summary.sourceTokenCount, "token")}: ` +
      `${counted(summary.sourceMessageCount, "message")}, seq ${summary.seqStart}-${summary.seqEnd}, ` +
      `${summary.earliestAt} → ${summary.latestAt}; written ${summary.createdAt}`,
    `Place: ${where}` +
      (summary.parentSummaryIds.length > 0 ? `; condenses ${summary.parentSummaryIds.join(", ")}` : "") +
      (summary.kind === "leaf" && summary.sourceMessageIds.length > 0 ? `; source messages ${idRange(summary.sourceMessageIds)}` : ""),
    ...(summary.fileIds.length > 0 ? [`Files: ${summary.fileIds.join(", ")} (lcm describe <id>)`] : []),
    ...(summary.archivedSources ?? []).map((source) =>
      `Archived by retention ${source.archivedAt}: ${counted(source.messageIds.length, "source message")} in ${source.archivePath}`),
    "",
    summary.content,
    "",
    `More: lcm expand ${id} (the detail below it)`,
  ];
  return lines.join("\n");
}

function fileText(file: FileDescription): string {
  const content = file.content;
  const note = content ? pageNote(content, CLI_PAGE_FLAGS) : file.contentNote;
  const origin = file.origin === "tool-result" ? `tool output${file.toolName ? ` of ${file.toolName}` : ""}` : file.origin === "paste" ? "a paste" : "a file block";
  const lines = [
    `${file.fileId}: ${file.fileName ?? "(no name)"} · ${file.mimeType ?? "unknown type"} · ${bytes(file.byteSize)} (${counted(file.tokenCount, "token")}) · ` +
      `conversation ${file.conversationId} · stored from ${origin} ${file.createdAt}`,
    "",
    "Exploration summary:",
    file.explorationSummary,
    ...(content ? ["", content.text] : []),
    ...(note ? ["", note] : []),
  ];
  return lines.join("\n");
}

/** "12-40" for consecutive ids, else the first few and how many more. */
function idRange(ids: readonly number[]): string {
  const first = ids[0]!;
  const last = ids.at(-1)!;
  if (last - first + 1 === ids.length) return ids.length === 1 ? String(first) : `${first}-${last}`;
  return ids.length <= 8 ? ids.join(", ") : `${ids.slice(0, 8).join(", ")} and ${count(ids.length - 8)} more`;
}

/** A page request the engine refused names the tool's parameter: say the CLI's flag instead. */
function withFlagNames(error: unknown): unknown {
  if (!isLcmError(error, "invalid_input")) return error;
  const parameter = typeof error.details?.parameter === "string" ? error.details.parameter : undefined;
  const flag = parameter ? FLAG_OF[parameter] : undefined;
  if (!flag) return error;
  const message = error.message
    .replace(/^Parameter "\w+": /, `${flag}: `)
    .replace(/\b(startLine|offset|maxLines|maxBytes) (\d)/g, (_, name: string, digit: string) => `${FLAG_OF[name]} ${digit}`);
  return new LcmError("invalid_input", message, error.details);
}
