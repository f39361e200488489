/**
 * Rebuilds the host message (AgentMessage) a lossless-claw message row and its parts were made from, so LCM stores
 * it through its own codec exactly as if OpenClaw had sent it. Pure.
 *
 * The peer keeps a plain-text copy in `messages.content` and, per content block, a part whose metadata JSON holds
 * the original block verbatim (`raw`), the original role (`originalRole`), and on later versions the tool-result
 * fields and the assistant's model identity. Blocks come back from `raw` byte for byte. What the peer did not keep
 * is reported in `inexact` (a part without its raw block, a bash output that does not follow its command) and the
 * peer's own columns LCM has no place for are kept in the message's `__lcmImport` field (its meta).
 *
 * A tool output the peer stored aside (0.15 on: a `tool_result` or `function_call_output` block whose text is
 * `[LCM Tool Output: file_… | tool=… | N bytes]`, its part metadata naming `externalizedFileId`) becomes a text block
 * holding LCM's own reference to the imported file (`[LCM File: …]` with its exploration summary), so the model, the
 * search and lcm_describe find it as they find any output LCM stored aside itself.
 */
import type { AgentMessage } from "../../host/openclaw-types.js";
import type { PeerMessage, PeerPart } from "./peer-reader.js";

export interface RebuiltMessage {
  message: AgentMessage;
  /** Why the message may differ from what the host sent (empty when every block came back verbatim). */
  inexact: string[];
  /** The peer files of the tool outputs the peer stored aside, with the tool that produced each. */
  toolOutputs: { peerFileId: string; toolName: string | null }[];
}

/** LCM's reference to the imported file a peer file id became; null when no file came over for it. */
export type FileReferenceOf = (peerFileId: string) => string | null;

/** The field of an imported message that keeps what LCM's model has no place for. */
export const IMPORT_META_FIELD = "__lcmImport";

type Metadata = Record<string, unknown>;

export function rebuildPeerMessage(peer: PeerMessage, parts: readonly PeerPart[], fileReference: FileReferenceOf = () => null): RebuiltMessage {
  const inexact: string[] = [];
  const toolOutputs: RebuiltMessage["toolOutputs"] = [];
  const metas = parts.map((part) => parseObject(part.metadata));
  const first = metas[0] ?? {};
  const originalRole = metas.map((meta) => meta.originalRole).find((role): role is string => typeof role === "string") ??
    (peer.role === "tool" ? "toolResult" : peer.role);
  const timestamp = peerTimeToMillis(peer.createdAt);

  let message: AgentMessage;
  if (first.source === "unknown-message-shape" && isObject(first.raw) && typeof first.raw.role === "string") {
    message = { ...(first.raw as AgentMessage) };
  } else if (first.source === "bash-exec") {
    const command = typeof first.command === "string" ? first.command : "";
    const prefix = `$ ${command}\n`;
    const text = parts[0]?.textContent ?? peer.content;
    if (!text.startsWith(prefix)) inexact.push("bash output not separable from its command");
    message = { role: originalRole, command, output: text.startsWith(prefix) ? text.slice(prefix.length) : text };
  } else if (first.source === "non-array-content") {
    message = { role: originalRole, content: first.raw };
  } else {
    message = { role: originalRole, content: contentOf(peer, parts, metas, originalRole, { inexact, toolOutputs, fileReference }) };
  }

  if (timestamp !== undefined && message.timestamp === undefined) message.timestamp = timestamp;
  if (originalRole === "toolResult") {
    const toolCallId = pick(metas, "toolCallId") ?? parts.find((part) => part.toolCallId)?.toolCallId ?? undefined;
    const toolName = pick(metas, "toolName") ?? parts.find((part) => part.toolName)?.toolName ?? undefined;
    const isError = metas.map((meta) => meta.isError).find((value): value is boolean => typeof value === "boolean");
    if (toolCallId !== undefined && message.toolCallId === undefined) message.toolCallId = toolCallId;
    if (toolName !== undefined && message.toolName === undefined) message.toolName = toolName;
    if (isError !== undefined && message.isError === undefined) message.isError = isError;
    if (toolCallId === undefined) inexact.push("tool result without its call id");
    if (toolName === undefined) inexact.push("tool result without its tool name (lossless-claw 0.1 did not keep it)");
  }
  if (originalRole === "assistant") restoreModelIdentity(message, metas);

  const partExtras = parts.filter((part) => Object.keys(part.extras).length > 0)
    .map((part) => ({ ordinal: part.ordinal, partType: part.partType, ...part.extras }));
  const kept: Record<string, unknown> = {
    ...(Object.keys(peer.extras).length > 0 ? peer.extras : {}),
    ...(partExtras.length > 0 ? { parts: partExtras } : {}),
    ...(inexact.length > 0 ? { inexact } : {}),
  };
  if (Object.keys(kept).length > 0) message[IMPORT_META_FIELD] = { source: "lossless-claw", ...kept };
  return { message, inexact, toolOutputs };
}

/** What building the blocks collects besides them. */
interface BlockContext {
  inexact: string[];
  toolOutputs: RebuiltMessage["toolOutputs"];
  fileReference: FileReferenceOf;
}

function contentOf(peer: PeerMessage, parts: readonly PeerPart[], metas: Metadata[], role: string, context: BlockContext): unknown {
  const { inexact } = context;
  const indexes = parts.map((_, index) => index).filter((index) => metas[index]!.topLevelReasoningOnly !== true);
  if (indexes.length === 0) {
    if (parts.length === 0) inexact.push("no parts: rebuilt from the plain-text copy");
    if (role === "user" || role === "system") return peer.content;
    return peer.content === "" && role === "assistant" ? [] : [{ type: "text", text: peer.content }];
  }
  // A string content became one text part with no raw block.
  const only = indexes.length === 1 ? parts[indexes[0]!]! : null;
  if (only && only.partType === "text" && metas[indexes[0]!]!.raw === undefined && metas[indexes[0]!]!.rawType === undefined) {
    return only.textContent ?? peer.content;
  }
  return indexes.map((index) => blockOf(parts[index]!, metas[index]!, context));
}

/** The original block when the peer kept it; otherwise one rebuilt from the part's columns. */
function blockOf(part: PeerPart, meta: Metadata, context: BlockContext): unknown {
  const { inexact } = context;
  const storedAside = externalizedToolOutput(part, meta);
  if (storedAside) {
    context.toolOutputs.push({ peerFileId: storedAside.fileId, toolName: storedAside.toolName });
    const reference = context.fileReference(storedAside.fileId);
    if (reference !== null) return { type: "text", text: reference };
    inexact.push("tool output stored aside by lossless-claw whose file did not come over: kept as the peer's reference text");
    return { type: "text", text: storedAside.text };
  }
  if (meta.raw !== undefined) {
    if (isObject(meta.raw) && typeof meta.rawType === "string" && meta.raw.type !== meta.rawType) return { ...meta.raw, type: meta.rawType };
    return meta.raw;
  }
  inexact.push(`${part.partType} part without its original block`);
  const text = part.textContent ?? "";
  switch (part.partType) {
    case "reasoning":
      return { type: "thinking", thinking: text };
    case "tool":
      if (part.toolCallId && part.toolName && part.toolInput !== null) {
        return { type: "toolCall", id: part.toolCallId, name: part.toolName, arguments: parseArguments(part.toolInput) };
      }
      return { type: "text", text: text || (part.toolOutput ?? "") };
    default:
      return { type: "text", text };
  }
}

/**
 * The tool output a part stands for, when the peer stored it aside: the part's metadata (or its raw block) says
 * `toolOutputExternalized` and names the file. The text is the peer's reference, kept when no file came over.
 */
function externalizedToolOutput(part: PeerPart, meta: Metadata): { fileId: string; toolName: string | null; text: string } | null {
  const raw = isObject(meta.raw) ? meta.raw : {};
  const flagged = meta.toolOutputExternalized === true || raw.toolOutputExternalized === true;
  const fileId = typeof meta.externalizedFileId === "string" ? meta.externalizedFileId : typeof raw.externalizedFileId === "string" ? raw.externalizedFileId : null;
  if (!flagged || fileId === null) return null;
  const text = [raw.text, raw.output, part.textContent, part.toolOutput].find((value): value is string => typeof value === "string") ?? "";
  const toolName = pick([meta, raw], "toolName") ?? (typeof raw.name === "string" ? raw.name : null) ?? part.toolName;
  return { fileId, toolName, text };
}

function restoreModelIdentity(message: AgentMessage, metas: Metadata[]): void {
  const fields: [string, string][] = [["modelProvider", "provider"], ["modelApi", "api"], ["modelId", "model"], ["responseModelId", "responseModel"]];
  for (const [stored, field] of fields) {
    const value = pick(metas, stored);
    if (value !== undefined && message[field] === undefined) message[field] = value;
  }
  const reasoning = pick(metas, "topLevelReasoningContent");
  if (reasoning !== undefined && message.reasoning_content === undefined) message.reasoning_content = reasoning;
}

/**
 * The peer's times are SQLite `datetime('now')` text in UTC ("2026-02-18 07:37:00", whole seconds), or ISO
 * strings written by later versions. Undefined when unreadable.
 */
export function peerTimeToMillis(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  const sqliteForm = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(trimmed);
  const millis = Date.parse(sqliteForm ? `${trimmed.replace(" ", "T")}Z` : trimmed);
  return Number.isFinite(millis) ? millis : undefined;
}

function pick(metas: Metadata[], key: string): string | undefined {
  return metas.map((meta) => meta[key]).find((value): value is string => typeof value === "string" && value !== "");
}

function parseObject(text: string | null): Metadata {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return isObject(value) ? value : {};
  } catch {
    return {}; // metadata that is not JSON carries nothing this import reads; the part's columns still do
  }
}

function parseArguments(text: string): unknown {
  try {
    const value = JSON.parse(text) as unknown;
    return isObject(value) ? value : { input: value };
  } catch {
    return { input: text }; // arguments the peer kept as plain text: kept as they were, under one key
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
