/**
 * The full-text index of content stored aside, on PostgreSQL: each stored file (a `file_index` row, written by a
 * trigger on large_files) is read from disk in pieces outside any transaction, split into chunks of a few KB
 * (text/content-chunks.ts), and each chunk's tsvector goes into `file_chunks` with the dictionary's new words and the
 * file's progress, in one transaction per piece. That transaction first checks, under the file row's lock, that the
 * file still stands where the piece was read from: another gateway may have indexed it meanwhile (nothing is written
 * then). A file missing here is read from the database's copy (pg-stored-files.ts); a file that is neither here nor
 * there is left for later (the machine that holds it uploads it); one that cannot be read or is binary is marked so,
 * and search reports it.
 */
import { readFilePiece } from "../text/file-scan.js";
import { BINARY_EXPLORER } from "../text/file-types.js";
import { nextLoopTurn } from "../runtime/time-slice.js";
import { type ContentChunk, chunkContent } from "../text/content-chunks.js";
import { analyzeDocument } from "../text/text-analysis.js";
import type { PgDatabase } from "./pg-database.js";
import { type PgQueryable, preparedStatement } from "./pg-queryable.js";
import { documentVector } from "./pg-search-document.js";
import { PgStoredFiles, storedFilePath } from "./pg-stored-files.js";
import { PgTermDictionary } from "./pg-term-dictionary.js";

/** Bytes of a file read per transaction (16 chunks). */
export const FILE_PIECE_BYTES = 64 * 1024;
/** A transaction takes no further chunk once its analysis ran this long (the first chunk it always takes). */
const PIECE_TIME_MS = 12;

interface PendingFile {
  file_key: number;
  file_id: string;
  indexed_bytes: number;
  indexed_lines: number;
  storage_path: string;
  explorer: string;
}

/**
 * Files waiting for the index, their bytes not indexed yet, and the highest chunk id in the index (the full-text look-up
 * reads it in its own statement, pg-text-search.ts).
 */
export const BACKLOG_SELECT = `SELECT count(*)::int AS files, sum(l.byte_size - f.indexed_bytes)::float8 AS bytes,
    (SELECT max(chunk_id) FROM file_chunks) AS through
  FROM file_index f JOIN large_files l ON l.file_id = f.file_id WHERE f.state = 'pending'`;

const BACKLOG_SQL = preparedStatement(BACKLOG_SELECT, { plan: "generic" });
/** The highest chunk id: named, so each connection plans it once (a statement without values has one plan). */
const THROUGH_SQL = preparedStatement("SELECT max(chunk_id) AS through FROM file_chunks");

export class PgFileIndex {
  private readonly dictionary: PgTermDictionary;

  constructor(private readonly db: PgDatabase, readonly stored = new PgStoredFiles(db, null)) {
    this.dictionary = new PgTermDictionary(db);
  }

  /** Files waiting for the index, their bytes not indexed yet, and the highest chunk id in the index (`through`). */
  async backlog(): Promise<{ files: number; bytes: number; through: number }> {
    const row = await this.db.row<{ files: number; bytes: number | null; through: number | null }>(BACKLOG_SQL);
    return { files: row?.files ?? 0, bytes: Math.max(0, row?.bytes ?? 0), through: row?.through ?? 0 };
  }

  /** The highest chunk id in the index (chunks are written with their index entries). */
  async through(): Promise<number> {
    return (await this.db.row<{ through: number | null }>(THROUGH_SQL))?.through ?? 0;
  }

  /** Whether this index may be written: false on a read-only pool, whose searches read waiting files directly. */
  get writable(): boolean {
    return !this.db.readOnly;
  }

  /**
   * Indexes waiting files, oldest first, until `maxBytes` of content were read or none waits; a read-only pool
   * indexes nothing. Returns the bytes indexed.
   */
  async indexPending(maxBytes: number): Promise<number> {
    if (this.db.readOnly) return 0;
    let indexed = 0;
    let skipped = 0;
    while (indexed < maxBytes) {
      const file = await this.db.row<PendingFile>(
        `SELECT f.file_key, f.file_id, f.indexed_bytes, f.indexed_lines, l.storage_path, l.explorer
         FROM file_index f JOIN large_files l ON l.file_id = f.file_id
         WHERE f.state = 'pending' ORDER BY f.file_key OFFSET $1 LIMIT 1`,
        [skipped],
      );
      if (!file) break;
      const piece = await this.readPiece(file);
      if (piece.kind === "elsewhere") {
        skipped++; // neither here nor in the database yet: the machine that holds it uploads it, and it is indexed then
        continue;
      }
      const { bytes, added } = await this.db.transaction(async (tx) => {
        if (!(await this.stillAt(tx, file))) return { bytes: -1, added: [] };
        if (piece.kind !== "read") {
          await tx.run("UPDATE file_index SET state = $1, reason = $2 WHERE file_key = $3", [piece.kind, piece.reason, file.file_key]);
          return { bytes: 0, added: [] };
        }
        return this.indexChunks(tx, file, piece.chunks, piece.isEnd);
      });
      this.dictionary.committed(added);
      // Another gateway moved this file on meanwhile: look at the next one (this one is theirs for now).
      if (bytes < 0) skipped++;
      else indexed += bytes;
      await nextLoopTurn();
    }
    return indexed;
  }

  /** Locks the file's row and checks that its indexing still stands where `file` says. */
  private async stillAt(tx: PgQueryable, file: PendingFile): Promise<boolean> {
    const now = await tx.row<{ indexed_bytes: number; state: string }>(
      "SELECT indexed_bytes, state FROM file_index WHERE file_key = $1 FOR UPDATE", [file.file_key],
    );
    return now !== null && now.state === "pending" && now.indexed_bytes === file.indexed_bytes;
  }

  /** The file's next piece: from its file here, else from the database's copy of its content. */
  private async readPiece(file: PendingFile): Promise<
    { kind: "read"; chunks: ContentChunk[]; isEnd: boolean } | { kind: "unavailable" | "binary"; reason: string } | { kind: "elsewhere" }
  > {
    if (file.explorer === BINARY_EXPLORER) return { kind: "binary", reason: "binary content: not text" };
    let piece: { bytes: Buffer; totalBytes: number } | null;
    try {
      piece = await readFilePiece(storedFilePath(file.storage_path), file.indexed_bytes, FILE_PIECE_BYTES);
    } catch (error) {
      piece = await this.keptPiece(file);
      const code = (error as NodeJS.ErrnoException).code;
      if (piece === null && code === "ENOENT") return { kind: "elsewhere" };
      const reason = code === "EACCES" ? "not readable (permission denied)" : (error as Error).message;
      if (piece === null) return { kind: "unavailable", reason: `${reason} at ${file.storage_path}` };
    }
    const isEnd = file.indexed_bytes + piece.bytes.length >= piece.totalBytes;
    return { kind: "read", chunks: chunkContent(piece.bytes, file.indexed_bytes, file.indexed_lines, isEnd).chunks, isEnd };
  }

  /** The piece from the database's copy of the content (`substring` counts bytes from 1); null when it keeps none. */
  private async keptPiece(file: PendingFile): Promise<{ bytes: Buffer; totalBytes: number } | null> {
    const row = await this.db.row<{ bytes: Buffer; total: number }>(
      "SELECT substring(content FROM $2 FOR $3) AS bytes, length(content) AS total FROM large_file_content WHERE file_id = $1",
      [file.file_id, file.indexed_bytes + 1, FILE_PIECE_BYTES],
    );
    return row === null ? null : { bytes: row.bytes, totalBytes: row.total };
  }

  /** Inside the piece's transaction: indexes `chunks` until the time budget, and records how far the file got. */
  private async indexChunks(tx: PgQueryable, file: PendingFile, chunks: readonly ContentChunk[], isEnd: boolean): Promise<{ bytes: number; added: string[] }> {
    const words = new Set<string>();
    const rows: { chunk: ContentChunk; document: string; wordCount: number }[] = [];
    const started = performance.now();
    for (const chunk of chunks) {
      if (rows.length > 0 && performance.now() - started > PIECE_TIME_MS) break;
      const document = analyzeDocument(chunk.text, words);
      rows.push({ chunk, document: documentVector(document.words, document.derived), wordCount: document.wordCount });
    }
    const added = await this.dictionary.list(tx, words);
    if (rows.length > 0) {
      await tx.run(
        `INSERT INTO file_chunks (file_key, byte_start, byte_end, line_start, document, word_count)
         SELECT $1, s, e, l, d, w FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[]::tsvector[], $6::int[])
           WITH ORDINALITY AS t (s, e, l, d, w, o)
         ORDER BY o`,
        [file.file_key, rows.map((row) => row.chunk.byteStart), rows.map((row) => row.chunk.byteEnd), rows.map((row) => row.chunk.lineStart),
          rows.map((row) => row.document), rows.map((row) => row.wordCount)],
      );
    }
    const next = chunks[rows.length];
    const last = rows.at(-1)?.chunk;
    const done = isEnd && next === undefined;
    await tx.run(
      "UPDATE file_index SET indexed_bytes = $1, indexed_lines = $2, state = $3 WHERE file_key = $4",
      [
        last ? last.byteEnd : file.indexed_bytes,
        next ? next.lineStart : last ? last.lineStart + newlines(last.text) : file.indexed_lines,
        done ? "indexed" : "pending",
        file.file_key,
      ],
    );
    return { bytes: last ? last.byteEnd - file.indexed_bytes : 0, added };
  }
}

function newlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++;
  return count;
}
