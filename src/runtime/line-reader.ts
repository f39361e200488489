/**
 * Reads a JSONL stream line by line with exact byte offsets, splitting only at a line feed (0x0A). Node's readline
 * also ends a line at a lone carriage return and at U+2028 / U+2029, which are legal inside a JSON string: a message
 * holding one was cut in two, both halves failed to parse and were dropped, and a byte cursor counted from the decoded
 * halves drifted (three bytes of U+2028 counted as one). Here a line's bytes are counted as read, never re-encoded, so
 * invalid UTF-8, a NUL or a lone surrogate never moves a cursor; one carriage return before the line feed is dropped.
 */
import { createReadStream } from "node:fs";

/** One line of the input. */
export interface InputLine {
  /** The line's text: its bytes decoded as UTF-8 (invalid sequences become U+FFFD), without the line feed and one CR before it. */
  text: string;
  /** Byte offset of the line's first byte in the input. */
  start: number;
  /** Byte offset just after the line's line feed (or after its last byte when none follows). */
  end: number;
  /** False for a last line with no line feed after it: it may still be being written. */
  terminated: boolean;
}

const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** The lines of `chunks` (bytes, in order); `startOffset` is the byte offset of the first chunk in the whole input. */
export async function* readLines(chunks: AsyncIterable<Buffer | Uint8Array | string> | Iterable<Buffer | Uint8Array | string>, startOffset = 0): AsyncGenerator<InputLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineStart = startOffset;
  for await (const raw of chunks) {
    const chunk = typeof raw === "string" ? Buffer.from(raw, "utf8") : Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    let from = 0;
    for (let feed = chunk.indexOf(LINE_FEED, from); feed !== -1; feed = chunk.indexOf(LINE_FEED, from)) {
      const piece = chunk.subarray(from, feed);
      const bytes = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece], pendingBytes + piece.length);
      const end = lineStart + bytes.length + 1;
      yield { text: decode(bytes), start: lineStart, end, terminated: true };
      lineStart = end;
      pending = [];
      pendingBytes = 0;
      from = feed + 1;
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      pending.push(rest);
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes > 0) {
    const bytes = Buffer.concat(pending, pendingBytes);
    yield { text: decode(bytes), start: lineStart, end: lineStart + bytes.length, terminated: false };
  }
}

/** The lines of a file from byte `start` (default 0) to byte `end` exclusive (default: its end). */
export function fileLines(path: string, range: { start?: number; end?: number } = {}): AsyncGenerator<InputLine> {
  const start = range.start ?? 0;
  if (range.end !== undefined && range.end <= start) return readLines([], start);
  const stream = createReadStream(path, { start, ...(range.end !== undefined ? { end: range.end - 1 } : {}) });
  return readLines(stream, start);
}

function decode(bytes: Buffer): string {
  const length = bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length;
  return bytes.toString("utf8", 0, length);
}
