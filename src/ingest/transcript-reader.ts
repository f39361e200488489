/**
 * Reads one session's transcript from where the conversation's cursor left it, in batches, for every reader of a
 * transcript: bootstrap's import (ingest/transcript-import.ts), `lcm import openclaw` and its dry run
 * (transfer/openclaw-backfill.ts). What a batch becomes (stored, or counted) is the caller's visitor; how far the
 * reading got is returned as the cursor to save. Two kinds of transcript:
 * - a JSONL file (older hosts, OpenClaw's earlier layout): a byte offset, lines read by the byte-exact line reader
 *   (runtime/line-reader.ts), so U+2028, a lone CR or invalid UTF-8 never splits a message or moves the cursor;
 * - a host transcript store read through a TranscriptSource (OpenClaw's SDK reader, or its agent database read-only):
 *   an opaque cursor, bounded pages.
 */
import type { Logger } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import type { BootstrapState } from "../records.js";
import { fileLines } from "../runtime/line-reader.js";
import type { TranscriptScope, TranscriptSource } from "./transcript-source.js";

/** Where one session's transcript is read from. */
export type TranscriptLocation =
  | { kind: "file"; path: string; size: number }
  | { kind: "host"; source: TranscriptSource; scope: TranscriptScope };

/** How much one reading may read; the rest follows on the next (the note says so). */
export interface TranscriptLimits {
  maxBytes: number;
  maxMessages: number;
}

export const UNBOUNDED: TranscriptLimits = { maxBytes: Number.POSITIVE_INFINITY, maxMessages: Number.POSITIVE_INFINITY };

/** What the caller does with what is read. Contract: `messages` may reject; the reading then stops with it. */
export interface TranscriptVisitor {
  /** Called once, before any batch: whether the reading starts at the transcript's start. */
  start?(fromStart: boolean): void;
  /** The next messages, in transcript order. */
  messages(batch: AgentMessage[]): Promise<void>;
  /** The host's reader starts over from the transcript's start (a new generation): what was seen before is void. */
  restart?(): void;
}

export interface TranscriptReading {
  /** The cursor after what was read (the previous one when nothing was); null when there is none yet. */
  state: BootstrapState | null;
  /** Whether the reading moved the cursor (something was read). */
  moved: boolean;
  /** Whether the reading began at the transcript's start. */
  fromStart: boolean;
  reachedEnd: boolean;
  /** Why the reading stopped before the end, or what it had to skip; absent when it read everything cleanly. */
  note?: string;
  /** Lines of a file that are not JSON and were skipped (their byte offsets, the first few). */
  skippedLines: number[];
  /** True when there is more to read: the reading stopped at its limits, or before a line still being written. */
  partial: boolean;
}

/** Messages handed to the visitor at a time. */
export const BATCH_SIZE = 500;
/** Messages per page of a host reader. */
const PAGE_MESSAGES = 250;
/**
 * Bytes per page of the host reader (its default is 1 MB). A single message larger than a page comes back as an
 * empty page naming the bytes it needs; that page is read again with room for it, up to the reader's own 64 MiB
 * (OpenClaw caps one transcript event at 4 MiB).
 */
export const PAGE_BYTES = 4 * 1024 * 1024;
const MAX_PAGE_BYTES = 64 * 1024 * 1024;
const SKIPPED_LINES_KEPT = 5;

export async function readTranscript(
  location: TranscriptLocation,
  previous: BootstrapState | null,
  visitor: TranscriptVisitor,
  limits: TranscriptLimits,
  context: { now: number; logger: Logger },
): Promise<TranscriptReading> {
  return location.kind === "file"
    ? readFileTranscript(location.path, location.size, previous, visitor, limits, context)
    : readHostTranscript(location.source, location.scope, previous, visitor, limits, context.now);
}

/** The AgentMessage inside one JSONL transcript line, or null for lines that are not messages. */
export function messageFromTranscriptLine(entry: unknown): AgentMessage | null {
  if (entry === null || typeof entry !== "object") return null;
  const record = entry as Record<string, unknown>;
  const nested = record.message;
  if (record.type === "message" && nested && typeof nested === "object" && typeof (nested as AgentMessage).role === "string") {
    return nested as AgentMessage;
  }
  if (typeof record.role === "string" && record.type === undefined) return record as AgentMessage;
  return null;
}

async function readFileTranscript(
  file: string, size: number, previous: BootstrapState | null, visitor: TranscriptVisitor, limits: TranscriptLimits,
  context: { now: number; logger: Logger },
): Promise<TranscriptReading> {
  const cursor = previous?.source === "file" && previous.file === file ? previous : null;
  // A file that shrank was rewritten or truncated: read it again from the start (identity keys dedupe).
  const start = cursor && cursor.size <= size && cursor.offset <= size ? cursor.offset : 0;
  const skipped: number[] = [];
  let skippedCount = 0;
  visitor.start?.(start === 0);
  if (start === size) return { state: cursor, moved: false, fromStart: start === 0, reachedEnd: true, skippedLines: [], partial: false };
  let consumed = start;
  let batch: AgentMessage[] = [];
  let messages = 0;
  for await (const line of fileLines(file, { start, end: size })) {
    let parsed: unknown;
    let isJson = true;
    try {
      parsed = line.text.trim() === "" ? null : JSON.parse(line.text);
    } catch {
      isJson = false;
    }
    // A last line without its line feed is still being written unless it is whole JSON already.
    if (!line.terminated && !isJson) break;
    consumed = line.end;
    if (!isJson) {
      skippedCount++;
      if (skipped.length < SKIPPED_LINES_KEPT) skipped.push(line.start);
      context.logger.warn(`Skipped the transcript line at byte ${line.start} of ${file}: it is not valid JSON.`);
    }
    const message = isJson ? messageFromTranscriptLine(parsed) : null;
    if (message) {
      batch.push(message);
      messages++;
    }
    if (batch.length >= BATCH_SIZE) {
      await visitor.messages(batch);
      batch = [];
    }
    if (consumed - start >= limits.maxBytes || messages >= limits.maxMessages) break;
  }
  if (batch.length > 0) await visitor.messages(batch);
  // Stopped at the limits, or before a last line still being written.
  const partial = consumed < size;
  const notes = [
    ...(skippedCount > 0 ? [`skipped ${skippedCount} line${skippedCount === 1 ? "" : "s"} that ${skippedCount === 1 ? "is" : "are"} not JSON (at byte ${skipped.join(", ")}${skippedCount > skipped.length ? ", …" : ""})`] : []),
    ...(partial ? [`read ${consumed} of ${size} bytes; the rest follows on later turns`] : []),
  ];
  return {
    state: consumed === start && cursor ? cursor : { source: "file", file, offset: consumed, size, importedAt: context.now },
    moved: consumed !== start, fromStart: start === 0, reachedEnd: consumed === size, skippedLines: skipped, partial,
    ...(notes.length > 0 ? { note: notes.join("; ") } : {}),
  };
}

async function readHostTranscript(
  source: TranscriptSource, scope: TranscriptScope, previous: BootstrapState | null, visitor: TranscriptVisitor,
  limits: TranscriptLimits, now: number,
): Promise<TranscriptReading> {
  const startCursor = previous?.source === "host" ? previous.cursor : undefined;
  let cursor = startCursor;
  let fromStart = cursor === undefined;
  visitor.start?.(fromStart);
  let read = 0;
  let resets = 0;
  let note: string | undefined;
  let reachedEnd = false;
  let partial = false;
  while (read < limits.maxMessages) {
    let page = await source.readPage(scope, cursor, PAGE_MESSAGES, PAGE_BYTES);
    if (page.kind === "page" && page.messages.length === 0 && page.requiredBytes !== undefined && page.requiredBytes <= MAX_PAGE_BYTES) {
      page = await source.readPage(scope, cursor, 1, Math.max(PAGE_BYTES, page.requiredBytes));
    }
    if (page.kind === "reset") {
      if (++resets > 1) {
        note = `transcript reader reset twice (${page.reason})`;
        break;
      }
      cursor = page.cursor;
      fromStart = true;
      visitor.restart?.();
      continue;
    }
    if (page.kind !== "page") {
      note = `host transcript ${page.kind}: ${page.reason}`;
      break;
    }
    if (page.messages.length === 0 && page.hasMore) {
      // No progress is possible from here (a message the reader will not return): stop instead of asking again.
      note = `host transcript reader returned no message at the cursor (${page.requiredBytes ?? "unknown"} bytes required)`;
      break;
    }
    read += page.messages.length;
    if (page.messages.length > 0) await visitor.messages(page.messages);
    cursor = page.cursor;
    if (!page.hasMore) {
      reachedEnd = true;
      break;
    }
    if (read >= limits.maxMessages) {
      partial = true;
      note = `read ${read} messages; the rest follows on later turns`;
    }
  }
  const moved = cursor !== undefined && cursor !== startCursor;
  return {
    state: moved ? { source: "host", cursor: cursor!, importedAt: now } : previous?.source === "host" ? previous : null,
    moved, fromStart, reachedEnd, skippedLines: [], partial, ...(note ? { note } : {}),
  };
}
