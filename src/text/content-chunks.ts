/**
 * Content stored aside (pastes, tool outputs, file blocks: large-files/) is searched in chunks of a few KB, each
 * indexed and ranked like a message. A chunk ends at a line break where one falls in its second half, else at a
 * space or punctuation, else at a UTF-8 character boundary, so a match keeps its line and a word is split only
 * inside a run of thousands of word characters (base64, a minified bundle). Chunks carry their byte range and
 * first line, so a hit says where in the file it is. The same function serves the index and a direct read of
 * content not indexed yet, so both see the same chunks. Backend-neutral: bytes in, chunks out.
 */

/** Bytes a chunk holds at most (~1k tokens of prose): a hit's chunk is one read and one snippet. */
export const CHUNK_BYTES = 4_096;
const NEWLINE = 0x0a;

export interface ContentChunk {
  /** Byte range in the stored file, [byteStart, byteEnd). */
  byteStart: number;
  byteEnd: number;
  /** 1-based line of the chunk's first byte. */
  lineStart: number;
  text: string;
}

export interface ChunkedRead {
  chunks: ContentChunk[];
  /** Bytes of `bytes` the chunks cover; the rest is read again with the next piece of the file. */
  consumed: number;
  /** Line of the first byte after the chunks. */
  nextLine: number;
}

/**
 * Splits `bytes`, read from `offset` of a file at line `line`, into chunks. Unless `isEnd`, the tail after the last
 * full chunk is left (its chunk may continue in the bytes that follow); at the end everything is taken.
 */
export function chunkContent(bytes: Uint8Array, offset: number, line: number, isEnd: boolean, chunkBytes = CHUNK_BYTES): ChunkedRead {
  const chunks: ContentChunk[] = [];
  let start = 0;
  let lineStart = line;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  while (start < buffer.length) {
    const remaining = buffer.length - start;
    if (remaining <= chunkBytes && !isEnd) break;
    const end = remaining <= chunkBytes ? buffer.length : splitPoint(buffer, start, start + chunkBytes, chunkBytes);
    const piece = buffer.subarray(start, end);
    chunks.push({ byteStart: offset + start, byteEnd: offset + end, lineStart, text: piece.toString("utf8") });
    lineStart += countNewlines(piece);
    start = end;
  }
  return { chunks, consumed: start, nextLine: lineStart };
}

/** Where a chunk starting at `start` with at most `limit` ends (exclusive). */
function splitPoint(buffer: Buffer, start: number, limit: number, chunkBytes: number): number {
  // A chunk ends at a line break or separator in its second half, so no chunk is tiny.
  const floor = start + Math.max(1, Math.floor(chunkBytes / 2));
  const newline = buffer.lastIndexOf(NEWLINE, limit - 1);
  if (newline >= floor) return newline + 1;
  for (let index = limit - 1; index >= floor; index--) {
    if (isAsciiSeparator(buffer[index]!)) return index + 1;
  }
  let end = limit;
  while (end > start + 1 && (buffer[end]! & 0xc0) === 0x80) end--;
  return end;
}

/** ASCII characters other than letters and digits (words never continue across them). */
function isAsciiSeparator(byte: number): boolean {
  return byte < 0x80 && !((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a));
}

function countNewlines(bytes: Buffer): number {
  let count = 0;
  for (let index = bytes.indexOf(NEWLINE); index !== -1; index = bytes.indexOf(NEWLINE, index + 1)) count++;
  return count;
}

/** Line (1-based) and byte offset of character `index` of a chunk's text. */
export function positionInChunk(chunk: Pick<ContentChunk, "byteStart" | "lineStart" | "text">, index: number): { line: number; byteOffset: number } {
  const before = chunk.text.slice(0, index);
  let newlines = 0;
  for (let at = before.indexOf("\n"); at !== -1; at = before.indexOf("\n", at + 1)) newlines++;
  return { line: chunk.lineStart + newlines, byteOffset: chunk.byteStart + Buffer.byteLength(before, "utf8") };
}
