/**
 * Plans which parts of a host message are large enough to store aside, and applies the references once they
 * exist. Pure: the interceptor does the I/O between `planRewrite` and `apply`. Large content is looked for in
 * `<file>` blocks of user messages (string content or text blocks), in pasted text of user messages (a text block
 * that is large without file tags: it keeps its head and tail around the reference, since a question often opens or
 * closes a paste), in the text of tool results, and in the output of bash executions; anything else passes
 * through untouched.
 */
import type { AgentMessage } from "../host/openclaw-types.js";
import type { LargeFileOrigin } from "../records.js";
import { type FileBlock, parseFileBlocks, replaceFileBlocks } from "./file-block-parser.js";

/** One piece of content to store aside. */
export interface LargePiece {
  content: string;
  fileName: string | null;
  mimeType: string | null;
  origin: LargeFileOrigin;
  toolName: string | null;
  /** A first line for the exploration summary saying where the content came from (tool output). */
  note: string | null;
}

export interface RewritePlan {
  pieces: LargePiece[];
  /** The message with piece i replaced by references[i]; the input message is not modified. */
  apply(references: readonly string[]): AgentMessage;
}

/** Null when nothing in the message reaches the threshold. */
export function planRewrite(message: AgentMessage, isLarge: (text: string) => boolean): RewritePlan | null {
  switch (message.role) {
    case "user":
      return planFileBlocks(message, isLarge) ?? planPastedText(message, isLarge);
    case "toolResult":
      return planToolResult(message, isLarge);
    case "bashExecution":
      return planBashOutput(message, isLarge);
    default:
      return null;
  }
}

function planFileBlocks(message: AgentMessage, isLarge: (text: string) => boolean): RewritePlan | null {
  const pieces: LargePiece[] = [];
  const blockPiece = new Map<FileBlock, number>();
  const largeBlocksOf = (text: string): FileBlock[] => {
    const large = parseFileBlocks(text).filter((block) => isLarge(block.content));
    for (const block of large) {
      blockPiece.set(block, pieces.length);
      pieces.push({ content: block.content, fileName: block.fileName, mimeType: block.mimeType, origin: "file-block", toolName: null, note: null });
    }
    return large;
  };
  const rewriteText = (text: string, blocks: FileBlock[], references: readonly string[]) =>
    replaceFileBlocks(text, blocks, (block) => references[blockPiece.get(block)!] ?? null);

  const content = message.content;
  if (typeof content === "string") {
    const blocks = largeBlocksOf(content);
    if (blocks.length === 0) return null;
    return { pieces, apply: (references) => ({ ...message, content: rewriteText(content, blocks, references) }) };
  }
  if (!Array.isArray(content)) return null;
  const blocksByIndex = new Map<number, FileBlock[]>();
  content.forEach((block, index) => {
    const text = textOf(block);
    if (text === null) return;
    const blocks = largeBlocksOf(text);
    if (blocks.length > 0) blocksByIndex.set(index, blocks);
  });
  if (blocksByIndex.size === 0) return null;
  return {
    pieces,
    apply: (references) => ({
      ...message,
      content: content.map((block, index) => {
        const blocks = blocksByIndex.get(index);
        return blocks ? { ...(block as object), text: rewriteText(textOf(block)!, blocks, references) } : block;
      }),
    }),
  };
}

/** Characters of a paste kept before and after its reference. */
export const PASTE_HEAD_CHARS = 800;
export const PASTE_TAIL_CHARS = 400;

/** The largest text of a user message, when it is large and holds no file block: stored aside as a pasted text. */
function planPastedText(message: AgentMessage, isLarge: (text: string) => boolean): RewritePlan | null {
  const content = message.content;
  const texts = typeof content === "string" ? [content] : Array.isArray(content) ? content.map(textOf) : [];
  let largest = -1;
  for (const [index, text] of texts.entries()) {
    if (text !== null && (largest < 0 || text.length > texts[largest]!.length)) largest = index;
  }
  const text = largest < 0 ? null : texts[largest]!;
  if (text === null || !isLarge(text)) return null;
  const piece: LargePiece = {
    content: text,
    fileName: "pasted-text",
    mimeType: null,
    origin: "paste",
    toolName: null,
    note: "Text pasted into a user message, stored aside because it was too large for the context.",
  };
  const keep = (reference: string) => {
    const head = cutAtLine(text.slice(0, PASTE_HEAD_CHARS), "end");
    const tail = cutAtLine(text.slice(-PASTE_TAIL_CHARS), "start");
    return `${head}\n[... pasted text continues; stored in full: lcm_grep searches all of it, lcm_describe reads it ...]\n\n${reference}\n\n[... the paste ends with ...]\n${tail}`;
  };
  return {
    pieces: [piece],
    apply: ([reference]) => {
      const replaced = reference === undefined ? text : keep(reference);
      if (typeof content === "string") return { ...message, content: replaced };
      return { ...message, content: (content as unknown[]).map((block, index) => (index === largest ? { ...(block as object), text: replaced } : block)) };
    },
  };
}

/** A cut at the nearest line break, when one is close: a head ends at a line end, a tail starts at a line start. */
function cutAtLine(text: string, keep: "end" | "start"): string {
  const index = keep === "end" ? text.lastIndexOf("\n") : text.indexOf("\n");
  const isClose = keep === "end" ? index > text.length / 2 : index >= 0 && index < text.length / 2;
  if (!isClose) return text;
  return keep === "end" ? text.slice(0, index) : text.slice(index + 1);
}

/** The text of all text blocks of a tool result is one piece: a `cat` split over blocks is still one output. */
function planToolResult(message: AgentMessage, isLarge: (text: string) => boolean): RewritePlan | null {
  const toolName = typeof message.toolName === "string" && message.toolName !== "" ? message.toolName : "tool";
  const piece = (text: string): LargePiece => ({
    content: text,
    fileName: `${safeName(toolName)}-output`,
    mimeType: null,
    origin: "tool-result",
    toolName,
    note: `Output of tool "${toolName}", stored aside because it was too large for the context.`,
  });
  const content = message.content;
  if (typeof content === "string") {
    if (!isLarge(content)) return null;
    return {
      pieces: [piece(content)],
      apply: ([reference]) => withDetailsCopies({ ...message, content: reference ?? content }, content, reference),
    };
  }
  if (!Array.isArray(content)) return null;
  const textIndexes = content.flatMap((block, index) => (textOf(block) === null ? [] : [index]));
  const text = textIndexes.map((index) => textOf(content[index])!).join("\n");
  if (textIndexes.length === 0 || !isLarge(text)) return null;
  const first = textIndexes[0]!;
  return {
    pieces: [piece(text)],
    apply: ([reference]) => withDetailsCopies({
      ...message,
      content: content.flatMap((block, index) => {
        if (index === first) return [{ ...(block as object), text: reference ?? text }];
        return textIndexes.includes(index) ? [] : [block];
      }),
    }, text, reference),
  };
}

/** Strings of a tool result's `details` at least this long are checked for being a copy of the stored output. */
const MIN_DETAILS_COPY_CHARS = 256;

/**
 * The message with each long string of its `details` that is a copy of (part of) the output stored aside replaced
 * by the same reference: OpenClaw's `read` tool puts the whole file in `details` again, which kept every large read
 * in the database twice after its output had gone to a file. `details` is the host's bookkeeping, never sent to a
 * model; the stored file holds the text byte-exact.
 */
function withDetailsCopies(message: AgentMessage, output: string, reference: string | undefined): AgentMessage {
  if (reference === undefined || message.details === null || typeof message.details !== "object") return message;
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return value.length >= MIN_DETAILS_COPY_CHARS && output.includes(value) ? reference : value;
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, walk(field)]));
  };
  return { ...message, details: walk(message.details) };
}

function planBashOutput(message: AgentMessage, isLarge: (text: string) => boolean): RewritePlan | null {
  const output = message.output;
  if (typeof output !== "string" || !isLarge(output)) return null;
  const command = typeof message.command === "string" ? message.command.replace(/\s+/g, " ").trim().slice(0, 200) : "";
  return {
    pieces: [{
      content: output,
      fileName: "bash-output",
      mimeType: null,
      origin: "tool-result",
      toolName: "bash",
      note: `Output of tool "bash"${command ? ` (command: ${command})` : ""}, stored aside because it was too large for the context.`,
    }],
    apply: ([reference]) => ({ ...message, output: reference ?? output }),
  };
}

function textOf(block: unknown): string | null {
  if (block === null || typeof block !== "object") return null;
  const record = block as { type?: unknown; text?: unknown };
  return record.type === "text" && typeof record.text === "string" ? record.text : null;
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 60) || "tool";
}
