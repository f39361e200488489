/**
 * Search reads content stored aside from its files: the index says which chunks may match and where they are, and
 * the text is read here (one open per file, the ranges in order). Content the index has not reached yet is read
 * here too, from where its indexing stopped, in the same chunks the indexer makes (text/content-chunks.ts), so a
 * paste of this very turn is found before maintenance indexes it. A file that cannot be read is left out and named.
 */
import { readByteRange, readFileRanges, readFilePiece } from "../text/file-scan.js";
import type { FileId } from "../records.js";
import { chunkContent } from "../text/content-chunks.js";
import type { FileChunkHitRow, UnindexedFile } from "../store/retrieval-store.js";

/** Bytes read per piece of a file not indexed yet (sixteen chunks). */
const PIECE_BYTES = 64 * 1024;

/** Files a search could not read, by id, with the reason. */
export type UnreadableFiles = Map<FileId, string>;

/** `rows` with their text read from their files, in the same order; rows whose file cannot be read are dropped. */
export async function withChunkTexts(rows: readonly FileChunkHitRow[], unreadable: UnreadableFiles): Promise<FileChunkHitRow[]> {
  const byPath = new Map<string, FileChunkHitRow[]>();
  for (const row of rows) (byPath.get(row.path) ?? byPath.set(row.path, []).get(row.path)!).push(row);
  const texts = new Map<FileChunkHitRow, string>();
  await Promise.all([...byPath].map(async ([path, fileRows]) => {
    try {
      const read = await readFileRanges(path, fileRows.map((row) => ({ start: row.byteStart, end: row.byteEnd })));
      fileRows.forEach((row, index) => texts.set(row, read[index]!));
    } catch (error) {
      for (const row of fileRows) unreadable.set(row.fileId, describeReadError(error, path));
    }
  }));
  return rows.flatMap((row) => (texts.has(row) ? [{ ...row, text: texts.get(row)! }] : []));
}

/**
 * The content of `files` past what the index holds, newest file first, a piece at a time as chunk rows with
 * negative ids (-1, -2, …: no index row). Stops when the consumer stops asking.
 */
export async function* unindexedChunks(files: readonly UnindexedFile[], unreadable: UnreadableFiles): AsyncGenerator<FileChunkHitRow[]> {
  let nextId = -1;
  for (const file of files) {
    let offset = file.indexedBytes;
    let line = file.indexedLines;
    for (;;) {
      let piece: { bytes: Buffer; totalBytes: number };
      try {
        piece = await readFilePiece(file.path, offset, PIECE_BYTES);
      } catch (error) {
        unreadable.set(file.fileId, describeReadError(error, file.path));
        break;
      }
      const isEnd = offset + piece.bytes.length >= piece.totalBytes;
      const read = chunkContent(piece.bytes, offset, line, isEnd);
      yield read.chunks.map((chunk): FileChunkHitRow => ({
        chunkId: nextId--, fileId: file.fileId, fileName: file.fileName, conversationId: file.conversationId,
        messageId: file.messageId, createdAt: file.createdAt, byteStart: chunk.byteStart, byteEnd: chunk.byteEnd,
        lineStart: chunk.lineStart, path: file.path, text: chunk.text, rank: 0,
      }));
      if (isEnd || read.consumed === 0) break;
      offset += read.consumed;
      line = read.nextLine;
    }
  }
}

function describeReadError(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === "ENOENT") return `missing (moved or deleted) at ${path}`;
  if (code === "EACCES" || code === "EPERM") return `not readable (permission denied) at ${path}`;
  return `not readable (${error instanceof Error ? error.message : String(error)})`;
}

/**
 * The stored file's text around a place in one of its chunks (`at`, a character index of the chunk's text),
 * `bytes` long and centred on it, across the chunk's ends: a quote of a match near a chunk's start or end keeps what
 * the previous or next chunk holds (a definition split at a chunk boundary). Null when the file cannot be read.
 */
export async function textAround(chunk: Pick<FileChunkHitRow, "path" | "byteStart" | "text">, at: number, bytes: number): Promise<string | null> {
  const offset = chunk.byteStart + Buffer.byteLength(chunk.text.slice(0, at), "utf8");
  try {
    return (await readByteRange(chunk.path, Math.max(0, offset - Math.floor(bytes / 2)), bytes)).text;
  } catch {
    return null; // the file went away since the search read it: the caller quotes the chunk it has
  }
}
