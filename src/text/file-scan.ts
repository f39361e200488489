/**
 * Streams a stored file line by line without loading it whole: the reader's line pages and the grep inside
 * stored files both use it. Lines are split on "\n" at the byte level (so multi-byte characters never break),
 * a trailing "\r" is dropped, and one line holds at most MAX_LINE_BYTES of decoded text (the rest is counted).
 * Once the callback has what it needs, the remaining lines can be counted without decoding them. A callback may
 * answer with a promise (e.g. after handing a batch of lines to a worker); the scan waits for it before reading on.
 */
import { createReadStream } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";

/** Longest part of one line that is decoded (a minified 2 MB JSON document is a single line). */
export const MAX_LINE_BYTES = 1024 * 1024;

export interface ScanOptions {
  /** Keep counting lines after the callback stopped, so `totalLines` is exact. */
  countAll: boolean;
}

export interface ScanResult {
  /** Lines in the file when `countAll` or the scan reached the end; else the lines read. */
  totalLines: number;
  /** Whether the callback stopped the scan. */
  stopped: boolean;
}

/** Whether to read on after a line; a promise makes the scan wait for the answer. */
export type LineVerdict = boolean | Promise<boolean>;

/** Calls `onLine(text, lineNumber, byteLength)` for lines 1, 2, … until it returns (or resolves) false. */
export async function scanLines(
  path: string,
  onLine: (text: string, lineNumber: number, byteLength: number) => LineVerdict,
  options: ScanOptions,
): Promise<ScanResult> {
  const stream = createReadStream(path, { highWaterMark: 256 * 1024 });
  let pieces: Buffer[] = [];
  let pieceBytes = 0;
  let lineBytes = 0;
  let lineNumber = 0;
  let listening = true;
  let lastByte = 10;
  const take = (piece: Buffer) => {
    lineBytes += piece.length;
    if (pieceBytes >= MAX_LINE_BYTES) return;
    const kept = piece.subarray(0, MAX_LINE_BYTES - pieceBytes);
    pieces.push(kept);
    pieceBytes += kept.length;
  };
  /** Synchronous unless the callback answered with a promise (no microtask per line for plain callbacks). */
  const emit = (): Promise<void> | undefined => {
    lineNumber++;
    let text = Buffer.concat(pieces).toString("utf8");
    if (text.endsWith("\r")) text = text.slice(0, -1);
    const byteLength = lineBytes;
    pieces = [];
    pieceBytes = 0;
    lineBytes = 0;
    const verdict = onLine(text, lineNumber, byteLength);
    if (typeof verdict !== "boolean") return verdict.then((keep) => { listening = keep; });
    listening = verdict;
    return undefined;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (chunk.length === 0) continue;
      lastByte = chunk[chunk.length - 1]!;
      let start = 0;
      while (listening) {
        const newline = chunk.indexOf(10, start);
        if (newline === -1) break;
        take(chunk.subarray(start, newline));
        start = newline + 1;
        const waiting = emit();
        if (waiting) await waiting;
      }
      if (listening) {
        if (start < chunk.length) take(chunk.subarray(start));
        continue;
      }
      if (!options.countAll) return { totalLines: lineNumber, stopped: true };
      for (let newline = chunk.indexOf(10, start); newline !== -1; newline = chunk.indexOf(10, newline + 1)) lineNumber++;
    }
  } finally {
    stream.destroy();
  }
  if (listening) {
    if (lineBytes > 0) await emit(); // the last line has no newline (awaiting undefined is harmless)
    return { totalLines: lineNumber, stopped: !listening };
  }
  return { totalLines: lastByte === 10 ? lineNumber : lineNumber + 1, stopped: true };
}

/**
 * Reads `length` bytes at `offset`, moved to UTF-8 character boundaries (the start skips continuation bytes,
 * the end drops an incomplete character), so the text never holds a broken character.
 */
export async function readByteRange(path: string, offset: number, length: number): Promise<{ text: string; start: number; end: number; totalBytes: number }> {
  const handle = await open(path, "r");
  try {
    const totalBytes = (await handle.stat()).size;
    const from = Math.min(offset, totalBytes);
    const size = Math.min(length + 4, totalBytes - from);
    const buffer = Buffer.alloc(size);
    const { bytesRead } = await handle.read(buffer, 0, size, from);
    const bytes = buffer.subarray(0, bytesRead);
    let start = 0;
    while (start < Math.min(bytes.length, 4) && isContinuation(bytes[start]!)) start++;
    let end = Math.min(bytes.length, start + length);
    if (end < bytes.length) {
      while (end > start && isContinuation(bytes[end]!)) end--;
    }
    return { text: bytes.subarray(start, end).toString("utf8"), start: from + start, end: from + end, totalBytes };
  } finally {
    await handle.close();
  }
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** Reads up to `length` raw bytes at `offset` (fewer at the end of the file), with the file's size. */
export async function readFilePiece(path: string, offset: number, length: number): Promise<{ bytes: Buffer; totalBytes: number }> {
  const handle = await openRegularFile(path);
  try {
    const info = await handle.stat();
    const size = Math.max(0, Math.min(length, info.size - offset));
    const buffer = Buffer.alloc(size);
    const { bytesRead } = size > 0 ? await handle.read(buffer, 0, size, offset) : { bytesRead: 0 };
    return { bytes: buffer.subarray(0, bytesRead), totalBytes: info.size };
  } finally {
    await handle.close();
  }
}

/**
 * Reads several byte ranges of one file with one open, in the order given; each range decoded as UTF-8. A range past
 * the end reads as far as the file goes.
 */
export async function readFileRanges(path: string, ranges: readonly { start: number; end: number }[]): Promise<string[]> {
  const handle = await openRegularFile(path);
  try {
    const texts: string[] = [];
    for (const range of ranges) {
      const buffer = Buffer.alloc(Math.max(0, range.end - range.start));
      const { bytesRead } = buffer.length > 0 ? await handle.read(buffer, 0, buffer.length, range.start) : { bytesRead: 0 };
      texts.push(buffer.subarray(0, bytesRead).toString("utf8"));
    }
    return texts;
  } finally {
    await handle.close();
  }
}

/** Opens a regular file for reading; anything else (a named pipe would block the open forever, a directory) is refused. */
async function openRegularFile(path: string): Promise<FileHandle> {
  const info = await stat(path);
  if (!info.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: "ENOTFILE" });
  return open(path, "r");
}
