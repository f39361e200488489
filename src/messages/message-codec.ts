/**
 * Converts host AgentMessages to the stored form and back, losslessly and storing each payload once.
 *
 * `content` is a plain-text rendering of the message (what full-text and regex search read). Every text-like
 * payload (text, thinking, tool-call arguments as JSON, summary/command/output fields) appears in it exactly
 * once, and its part records the span [start, end) that holds it, so decoding slices instead of keeping a second
 * copy. Binary-ish payloads (image data, unknown blocks) live in the part's `data`. Everything else about the
 * message (model, usage, timestamps, host ids, tool-result details) is kept in `meta` JSON: verbatim, except that a
 * long string of `details` that the message's text already holds (OpenClaw's `read` tool puts the whole file there
 * again) is kept as the span of `content` that holds it.
 */
import { createHash } from "node:crypto";
import type { TokenEstimator } from "../contracts.js";
import { LcmError } from "../errors.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import { isTranscriptOnlyReply } from "./host-commands.js";
import type { LargeFileRecord, PartKind, StoredPart } from "../records.js";

export type { PartKind, StoredPart } from "../records.js";

/** Bit flags on messages.flags. */
export const MessageFlags = {
  /** `content` was a string rather than a block array. */
  contentString: 1,
  /** The message had no `content` field. */
  contentAbsent: 2,
  /** `content` had an unexpected shape; it is kept verbatim in meta. */
  contentInMeta: 4,
  /** Stored but never assembled (host `excludeFromContext`, or a role providers cannot take). */
  excluded: 8,
  /** `timestamp` was a number equal to `created_at`, so it is not repeated in meta (saves ~3% of the file). */
  timestampIsCreatedAt: 16,
  /** meta holds `{"$lcmSpan":[start,end]}` in place of long strings of `details` that `content` holds (metaSpans). */
  metaSpans: 32,
} as const;

/** Bit flags on context_items.flags, so planners and the assembler need not load messages. */
export const ItemFlags = {
  /** An assistant message holding at least one tool call. */
  toolCalls: 1,
  /** A tool result; it must stay with the assistant message that called it. */
  toolResult: 2,
} as const;

export interface EncodedMessage {
  role: string;
  content: string;
  parts: StoredPart[];
  meta: string;
  flags: number;
  itemFlags: number;
  tokenCount: number;
  /** Milliseconds since the epoch: the host timestamp, else the ingest time. */
  createdAt: number;
  /** The canonical identity used for idempotency (UNIQUE per conversation). */
  identityKey: string;
  /**
   * The identity an older version gave the same message (`key:<idempotencyKey>` without the content fingerprint):
   * a row stored under it is this message.
   */
  legacyIdentityKey?: string;
  /** Large files this message references; their rows are written in the same transaction as the message. */
  largeFiles?: LargeFileRecord[];
}

export const KNOWN_ROLES = new Set([
  "user", "assistant", "toolResult", "custom", "compactionSummary", "branchSummary", "bashExecution",
]);
const TEXT_FIELDS = ["summary", "command", "output"] as const;
/** Per-message framing overhead providers charge (role markers, separators). */
const MESSAGE_OVERHEAD_TOKENS = 4;

/** Validates the shape of a host message; throws LcmError("invalid_message") with the reason. */
export function assertAgentMessage(value: unknown): asserts value is AgentMessage {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new LcmError("invalid_message", `A message must be an object, got ${value === null ? "null" : typeof value}.`);
  }
  const role = (value as { role?: unknown }).role;
  if (typeof role !== "string" || role.trim() === "") {
    throw new LcmError("invalid_message", "A message must have a non-empty string `role`.");
  }
}

/**
 * The message's identity. OpenClaw gives user messages an `idempotencyKey`; assistant and tool-result messages
 * carry no id that survives from commitTurn to later views, so their identity is a canonical fingerprint of what
 * does: role, timestamp and visible content. The fingerprint ignores what the host rewrites between views (the
 * key order, tool-call ids reduced to [A-Za-z0-9], tool-result `details`, `__openclaw` bookkeeping), so the same
 * message seen through commitTurn, the transcript or assemble's history always maps to the same key. A keyed
 * message's identity holds its fingerprint too: a later message reusing a key with other content is another
 * message, never dropped as a duplicate of the first.
 */
export function identityKeyOf(message: AgentMessage): string {
  const key = legacyIdentityKeyOf(message);
  return key === undefined ? `fp:${fingerprintOf(message)}` : `${key}#${fingerprintOf(message)}`;
}

/** `key:<idempotencyKey>`, the identity versions before schema 5 gave a keyed message. */
export function legacyIdentityKeyOf(message: AgentMessage): string | undefined {
  return typeof message.idempotencyKey === "string" && message.idempotencyKey !== "" ? `key:${message.idempotencyKey}` : undefined;
}

/** Every identity under which a stored row is this message. */
export function identityKeysOf(message: Pick<EncodedMessage, "identityKey" | "legacyIdentityKey">): string[] {
  return message.legacyIdentityKey === undefined ? [message.identityKey] : [message.identityKey, message.legacyIdentityKey];
}

/** Whether the message is among `stored` (identity keys found in the store) under any of its identities. */
export function isStoredIn(stored: ReadonlySet<string>, message: Pick<EncodedMessage, "identityKey" | "legacyIdentityKey">): boolean {
  return stored.has(message.identityKey) || (message.legacyIdentityKey !== undefined && stored.has(message.legacyIdentityKey));
}

export function fingerprintOf(message: AgentMessage): string {
  // One update over the joined pieces: the same digest as one update per piece, at a fraction of the calls.
  const pieces: string[] = [];
  const add = (label: string, value: string) => pieces.push(`\u0000${label}=${value}`);
  add("role", message.role);
  add("timestamp", String(message.timestamp ?? ""));
  if (typeof message.toolCallId === "string") add("toolCallId", sanitizeToolCallId(message.toolCallId));
  if (typeof message.toolName === "string") add("toolName", message.toolName);
  if (typeof message.customType === "string") add("customType", message.customType);
  const content = message.content;
  if (typeof content === "string") add("text", content);
  else if (Array.isArray(content)) for (const block of content) add("block", canonicalBlock(block));
  else if (content !== undefined) add("content", canonicalJson(content));
  for (const field of TEXT_FIELDS) {
    if (typeof message[field] === "string") add(field, message[field] as string);
  }
  // 128 bits in 22 base64url characters: the key is stored twice (row and UNIQUE index), once per message.
  return createHash("sha256").update(pieces.join("")).digest("base64url").slice(0, 22);
}

/** OpenClaw's strict tool-call id sanitizer keeps only ASCII letters and digits. */
export function sanitizeToolCallId(id: string): string {
  return id.replace(/[^A-Za-z0-9]/g, "");
}

function canonicalBlock(block: unknown): string {
  if (block === null || typeof block !== "object") return canonicalJson(block);
  const record = block as Record<string, unknown>;
  switch (record.type) {
    case "text":
      return `text:${String(record.text)}`;
    case "thinking":
      return `thinking:${String(record.thinking)}`;
    case "toolCall":
      return `toolCall:${sanitizeToolCallId(String(record.id ?? ""))}:${String(record.name)}:${canonicalJson(record.arguments)}`;
    case "image":
      return `image:${String(record.mimeType)}:${createHash("sha256").update(String(record.data)).digest("hex")}`;
    default:
      return canonicalJson(record);
  }
}

/** JSON with object keys sorted, so key order never changes a fingerprint. */
function canonicalJson(value: unknown): string {
  const seen = new WeakSet<object>();
  const normalize = (item: unknown): unknown => {
    if (item === null || typeof item !== "object") return item;
    if (seen.has(item)) return "[cycle]";
    seen.add(item);
    if (Array.isArray(item)) return item.map(normalize);
    return Object.fromEntries(
      Object.keys(item).sort().map((key) => [key, normalize((item as Record<string, unknown>)[key])]),
    );
  };
  return JSON.stringify(normalize(value)) ?? "null";
}

/** The largest |milliseconds| a JavaScript Date can hold (100,000,000 days either side of 1970). */
export const MAX_DATE_MILLIS = 8_640_000_000_000_000;

/**
 * How a numeric host timestamp is read, by its magnitude: below `secondsBelow` seconds, from `microsecondsFrom`
 * microseconds, from `nanosecondsFrom` nanoseconds, milliseconds in between. The doctor's timestamp repair
 * (sqlite/sqlite-timestamp-repair.ts) applies the same rule in SQL to rows an older version stored as
 * they came.
 */
export const TIMESTAMP_SCALE = { secondsBelow: 1e11, microsecondsFrom: 1e14, nanosecondsFrom: 1e17 } as const;

/**
 * A host timestamp as milliseconds since the epoch, or `fallback` (the ingest time) when it is none. The result
 * is always an integer a Date can hold (|ms| <= MAX_DATE_MILLIS): node:sqlite cannot read back an integer above
 * 2^53 and a Date cannot hold one above MAX_DATE_MILLIS, so an unchecked value (a nanosecond epoch, 1.7e18)
 * broke every later read of its conversation. The host's own value stays in meta whenever it differs.
 */
export function timestampToMillis(value: unknown, fallback: number): number {
  const millis = typeof value === "number" ? numberToMillis(value) : typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isSafeInteger(millis) && Math.abs(millis) <= MAX_DATE_MILLIS ? millis : fallback;
}

function numberToMillis(value: number): number {
  if (!Number.isFinite(value)) return Number.NaN;
  if (value < TIMESTAMP_SCALE.secondsBelow) return Math.round(value * 1_000);
  if (value < TIMESTAMP_SCALE.microsecondsFrom) return Math.round(value);
  if (value < TIMESTAMP_SCALE.nanosecondsFrom) return Math.round(value / 1_000);
  return Math.round(value / 1_000_000);
}

class ContentBuilder {
  private readonly pieces: string[] = [];
  private length = 0;

  /** Appends a searchable span and returns its [start, end). */
  span(text: string): [number, number] {
    this.separate();
    const start = this.length;
    this.pieces.push(text);
    this.length += text.length;
    return [start, this.length];
  }

  /** Appends a label that helps search and reading but is not part of any payload. */
  label(text: string): void {
    this.separate();
    this.pieces.push(text);
    this.length += text.length;
  }

  private separate(): void {
    if (this.length > 0 || this.pieces.length > 0) {
      this.pieces.push("\n");
      this.length += 1;
    }
  }

  text(): string {
    return this.pieces.join("");
  }
}

function metaOf(block: Record<string, unknown>, omit: readonly string[]): string | null {
  const rest: Record<string, unknown> = {};
  let any = false;
  for (const [key, value] of Object.entries(block)) {
    if (omit.includes(key)) continue;
    rest[key] = value;
    any = true;
  }
  return any ? JSON.stringify(rest) : null;
}

/** Encodes one host message. `now` is used when the message has no usable timestamp. */
export function encodeMessage(message: AgentMessage, tokens: TokenEstimator, now: number): EncodedMessage {
  assertAgentMessage(message);
  try {
    return encodeValidMessage(message, tokens, now);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    // JSON serialization recursed past the stack: no host could have persisted or sent this message either.
    throw new LcmError("invalid_message", `The ${message.role} message is nested too deeply to serialize; it was not stored.`, {}, { cause: error });
  }
}

function encodeValidMessage(message: AgentMessage, tokens: TokenEstimator, now: number): EncodedMessage {
  const builder = new ContentBuilder();
  const parts: StoredPart[] = [];
  let flags = 0;
  let itemFlags = 0;
  let tokenCount = MESSAGE_OVERHEAD_TOKENS;
  const omitFromMeta: string[] = ["role"];
  const createdAt = timestampToMillis(message.timestamp, now);
  if (typeof message.timestamp === "number" && message.timestamp === createdAt) {
    flags |= MessageFlags.timestampIsCreatedAt;
    omitFromMeta.push("timestamp");
  }

  const addSpan = (kind: PartKind, text: string, meta: string | null) => {
    const [start, end] = builder.span(text);
    parts.push({ kind, start, end, data: null, meta });
    tokenCount += tokens.estimate(text);
  };

  const content = message.content;
  if (content === undefined) {
    flags |= MessageFlags.contentAbsent;
  } else if (typeof content === "string") {
    flags |= MessageFlags.contentString;
    omitFromMeta.push("content");
    addSpan("text", content, null);
  } else if (Array.isArray(content)) {
    omitFromMeta.push("content");
    for (const block of content) encodeBlock(block);
  } else {
    flags |= MessageFlags.contentInMeta;
  }

  function encodeBlock(block: unknown): void {
    const record = block !== null && typeof block === "object" ? (block as Record<string, unknown>) : null;
    const type = record?.type;
    if (record && type === "text" && typeof record.text === "string") {
      addSpan("text", record.text, metaOf(record, ["type", "text"]));
    } else if (record && type === "thinking" && typeof record.thinking === "string") {
      addSpan("thinking", record.thinking, metaOf(record, ["type", "thinking"]));
    } else if (record && type === "toolCall" && typeof record.name === "string" && isPlainObject(record.arguments)) {
      builder.label(`[tool call ${record.name}]`);
      tokenCount += tokens.estimate(record.name) + 2;
      addSpan("toolCall", JSON.stringify(record.arguments), metaOf(record, ["type", "arguments"]));
      itemFlags |= ItemFlags.toolCalls;
    } else if (record && type === "image" && typeof record.data === "string") {
      builder.label(`[image ${typeof record.mimeType === "string" ? record.mimeType : ""}]`.trim());
      parts.push({ kind: "image", start: null, end: null, data: record.data, meta: metaOf(record, ["type", "data"]) });
      tokenCount += tokens.imageTokens;
    } else {
      const data = JSON.stringify(block) ?? "null";
      parts.push({ kind: "raw", start: null, end: null, data, meta: null });
      tokenCount += tokens.estimate(data);
    }
  }

  for (const field of TEXT_FIELDS) {
    const value = message[field];
    if (typeof value === "string") {
      omitFromMeta.push(field);
      builder.label(`[${field}]`);
      addSpan("field", value, JSON.stringify({ field }));
    }
  }

  if (message.role === "toolResult") {
    itemFlags |= ItemFlags.toolResult;
    if (typeof message.toolName === "string") builder.label(`[tool result ${message.toolName}]`);
  }
  // The gateway's own answers ("Compacted …", /lcm status) are written into the transcript and never sent to a model.
  if (message.excludeFromContext === true || !KNOWN_ROLES.has(message.role) || isTranscriptOnlyReply(message)) {
    flags |= MessageFlags.excluded;
  }

  const text = builder.text();
  const details = spannedDetails(message, text);
  if (details !== undefined) flags |= MessageFlags.metaSpans;
  const meta = metaOf(details === undefined ? message : { ...message, details }, omitFromMeta) ?? "{}";
  return {
    role: message.role,
    content: text,
    parts,
    meta,
    flags,
    itemFlags,
    tokenCount,
    createdAt,
    identityKey: identityKeyOf(message),
    ...(legacyIdentityKeyOf(message) === undefined ? {} : { legacyIdentityKey: legacyIdentityKeyOf(message)! }),
  };
}

/** Strings of `details` at least this long are looked for in the message's text. */
const MIN_SPANNED_CHARS = 256;
const SPAN_KEY = "$lcmSpan";

/**
 * `message.details` with each long string that `text` holds replaced by `{"$lcmSpan":[start,end]}`, or undefined
 * when nothing was replaced (or `details` already has an object keyed `$lcmSpan`, which decoding would misread).
 */
function spannedDetails(message: AgentMessage, text: string): unknown {
  const details = message.details;
  if (details === null || typeof details !== "object") return undefined;
  let replaced = false;
  let clash = false;
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") {
      if (value.length < MIN_SPANNED_CHARS) return value;
      const start = text.indexOf(value);
      if (start < 0) return value;
      replaced = true;
      return { [SPAN_KEY]: [start, start + value.length] };
    }
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== "object") return value;
    if (Object.hasOwn(value, SPAN_KEY)) clash = true;
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) out[key] = walk(field);
    return out;
  };
  const result = walk(details);
  return replaced && !clash ? result : undefined;
}

/** meta's `details` with every span marker replaced by the text of `content` it names. */
function restoreSpans(meta: Record<string, unknown>, content: string): Record<string, unknown> {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== "object") return value;
    const span = (value as Record<string, unknown>)[SPAN_KEY];
    if (Array.isArray(span) && Object.keys(value).length === 1) return content.slice(Number(span[0]), Number(span[1]));
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) out[key] = walk(field);
    return out;
  };
  return "details" in meta ? { ...meta, details: walk(meta.details) } : meta;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Rebuilds the host message exactly as it was ingested. */
export function decodeMessage(stored: {
  role: string;
  content: string;
  flags: number;
  meta: string;
  parts: StoredPart[];
  createdAt: number;
}): AgentMessage {
  const slice = (part: StoredPart) => stored.content.slice(part.start ?? 0, part.end ?? 0);
  const blocks: unknown[] = [];
  const fields: Record<string, string> = {};
  for (const part of stored.parts) {
    const extra = part.meta ? (JSON.parse(part.meta) as Record<string, unknown>) : {};
    switch (part.kind) {
      case "text":
        blocks.push({ type: "text", text: slice(part), ...extra });
        break;
      case "thinking":
        blocks.push({ type: "thinking", thinking: slice(part), ...extra });
        break;
      case "toolCall":
        blocks.push({ type: "toolCall", ...extra, arguments: JSON.parse(slice(part)) });
        break;
      case "image":
        blocks.push({ type: "image", data: part.data ?? "", ...extra });
        break;
      case "raw":
        blocks.push(JSON.parse(part.data ?? "null"));
        break;
      case "field":
        fields[(extra as { field: string }).field] = slice(part);
        break;
    }
  }
  const message: AgentMessage = { role: stored.role };
  if (stored.flags & MessageFlags.contentString) {
    message.content = (blocks[0] as { text: string } | undefined)?.text ?? "";
  } else if (!(stored.flags & (MessageFlags.contentAbsent | MessageFlags.contentInMeta))) {
    message.content = blocks;
  }
  if (stored.flags & MessageFlags.timestampIsCreatedAt) message.timestamp = stored.createdAt;
  const meta = JSON.parse(stored.meta) as Record<string, unknown>;
  return Object.assign(message, stored.flags & MessageFlags.metaSpans ? restoreSpans(meta, stored.content) : meta, fields);
}
