/**
 * The full-text index of content stored aside (schema 11, specs/019-one-search.md): each stored file is read from
 * disk in pieces, split into chunks of a few KB (text/content-chunks.ts), and each chunk's analysed words go into
 * `files_fts` (rowid = `file_chunks.chunk_id`), with the term dictionary's new words, in one transaction per piece.
 * `file_index` says how far each file got, so a crash or a stop resumes at the next chunk; a file that cannot be
 * read (missing, not a regular file) or is binary is marked so and skipped, and search reports it. Files are
 * indexed oldest first, after the messages, within a byte budget per call (maintenance), with the event loop running
 * between transactions. FTS5's automatic merging is off; segments are merged here in bounded steps.
 */
import type { Database } from "./database.js";
import { resolveRecordedPath } from "./stored-file-path.js";
import { MERGE_STEP_PAGES } from "./wal-checkpointer.js";
import { readFilePiece } from "../text/file-scan.js";
import { BINARY_EXPLORER } from "../text/file-types.js";
import { nextLoopTurn } from "../runtime/time-slice.js";
import { type ContentChunk, chunkContent } from "../text/content-chunks.js";
import { analyzeDocument } from "../text/text-analysis.js";
import { TermDictionary } from "./sqlite-term-dictionary.js";

/** Bytes of a file read per transaction (16 chunks): its analysis stays within a chunk's time budget. */
export const FILE_PIECE_BYTES = 64 * 1024;
/** A transaction takes no further chunk once it has run this long (the first chunk it always takes). */
const PIECE_TIME_MS = 12;
/** Merge steps per indexed piece, at most. */
const MERGE_STEPS_PER_PIECE = 2;

export type FileIndexState = "pending" | "indexed" | "unavailable" | "binary";

/** A stored file waiting for the index, and where its indexing stands. */
interface PendingFile {
  file_key: number;
  file_id: string;
  indexed_bytes: number;
  indexed_lines: number;
  storage_path: string;
  explorer: string;
}

export interface FileIndexBacklog {
  /** Stored files not (fully) indexed yet, and their bytes still to index. */
  files: number;
  bytes: number;
}

export class SqliteFileIndex {
  private readonly dictionary: TermDictionary;

  constructor(private readonly db: Database) {
    this.dictionary = new TermDictionary(db);
  }

  /** Files waiting for the index (pending), and the bytes of them not indexed yet. */
  backlog(): FileIndexBacklog {
    const row = this.db.get<{ files: number; bytes: number }>(
      `SELECT count(*) AS files, total(l.byte_size - f.indexed_bytes) AS bytes
       FROM file_index f JOIN large_files l ON l.file_id = f.file_id WHERE f.state = 'pending'`,
    )!;
    return { files: row.files, bytes: Math.max(0, row.bytes) };
  }

  /** The highest chunk id in the index (every chunk row is indexed: rows and index entries are written together). */
  through(): number {
    return this.db.get<{ through: number | null }>("SELECT max(chunk_id) AS through FROM file_chunks")!.through ?? 0;
  }

  /**
   * Indexes waiting files, oldest first, until `maxBytes` of content were read or none waits; a read-only
   * connection indexes nothing. Returns the bytes indexed.
   */
  async indexPending(maxBytes: number): Promise<number> {
    if (this.db.readOnly) return 0;
    let indexed = 0;
    let pieces = 0;
    while (indexed < maxBytes) {
      const file = this.db.get<PendingFile>(
        `SELECT f.file_key, f.file_id, f.indexed_bytes, f.indexed_lines, l.storage_path, l.explorer
         FROM file_index f JOIN large_files l ON l.file_id = f.file_id
         WHERE f.state = 'pending' ORDER BY f.file_key LIMIT 1`,
      );
      if (!file) break;
      const piece = await this.readPiece(file);
      if (piece.kind !== "read") {
        await this.db.write(() => this.markState(file, piece.kind, piece.reason));
        continue;
      }
      const added: string[] = [];
      this.dictionary.startChunk();
      const bytes = await this.db.write(() => this.indexChunks(file, piece.chunks, piece.isEnd, added));
      this.dictionary.committed(added);
      indexed += bytes;
      pieces++;
      await nextLoopTurn();
    }
    await this.merge(pieces * MERGE_STEPS_PER_PIECE);
    return indexed;
  }

  /** The next piece of a file as chunks, or why it cannot be indexed. */
  private async readPiece(file: PendingFile): Promise<
    { kind: "read"; chunks: ContentChunk[]; isEnd: boolean } | { kind: "unavailable" | "binary"; reason: string }
  > {
    if (file.explorer === BINARY_EXPLORER) return { kind: "binary", reason: "binary content: not text" };
    let piece: { bytes: Buffer; totalBytes: number };
    try {
      piece = await readFilePiece(resolveRecordedPath(this.db.path, file.storage_path), file.indexed_bytes, FILE_PIECE_BYTES);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === "ENOENT" ? "missing (moved or deleted)" : code === "EACCES" ? "not readable (permission denied)" : (error as Error).message;
      return { kind: "unavailable", reason: `${reason} at ${file.storage_path}` };
    }
    const isEnd = file.indexed_bytes + piece.bytes.length >= piece.totalBytes;
    return { kind: "read", chunks: chunkContent(piece.bytes, file.indexed_bytes, file.indexed_lines, isEnd).chunks, isEnd };
  }

  /**
   * Inside a write transaction: indexes `chunks` of `file` (contiguous, from where its indexing stands) until the
   * transaction's time budget; marks the file indexed when the last chunk of its content went in. Re-reads where the
   * file stands first: another process may have indexed these chunks meanwhile (then nothing is written). Returns
   * the bytes indexed.
   */
  private indexChunks(file: PendingFile, chunks: readonly ContentChunk[], isEnd: boolean, added: string[]): number {
    const now = this.db.get<{ indexed_bytes: number; state: FileIndexState }>(
      "SELECT indexed_bytes, state FROM file_index WHERE file_key = ?", file.file_key,
    );
    if (!now || now.state !== "pending" || now.indexed_bytes !== file.indexed_bytes) return 0;
    const words = this.dictionary.chunkWords();
    const started = performance.now();
    let taken = 0;
    for (const chunk of chunks) {
      if (taken > 0 && performance.now() - started + words.unknown * this.dictionary.msPerUnknownWord() > PIECE_TIME_MS) break;
      const document = analyzeDocument(chunk.text, words);
      const { lastInsertRowid: chunkId } = this.db.run(
        "INSERT INTO file_chunks (file_key, byte_start, byte_end, line_start) VALUES (?, ?, ?, ?)",
        file.file_key, chunk.byteStart, chunk.byteEnd, chunk.lineStart,
      );
      this.db.run("INSERT INTO files_fts (rowid, words, derived) VALUES (?, ?, ?)", chunkId, document.words, document.derived);
      taken++;
    }
    const next = chunks[taken];
    const last = chunks[taken - 1];
    const done = isEnd && next === undefined;
    this.db.run(
      "UPDATE file_index SET indexed_bytes = ?, indexed_lines = ?, state = ? WHERE file_key = ?",
      last ? last.byteEnd : file.indexed_bytes,
      next ? next.lineStart : last ? last.lineStart + newlines(last.text) : file.indexed_lines,
      done ? "indexed" : "pending",
      file.file_key,
    );
    this.dictionary.list(words, added, { started, loopMs: performance.now() - started, unknownWords: words.unknown });
    return last ? last.byteEnd - file.indexed_bytes : 0;
  }

  private markState(file: PendingFile, state: "unavailable" | "binary", reason: string): void {
    this.db.run("UPDATE file_index SET state = ?, reason = ? WHERE file_key = ? AND state = 'pending'", state, reason, file.file_key);
  }

  /**
   * Files marked unavailable are tried again (a file restored from a backup, or put back by hand): the doctor's
   * repair. Returns how many.
   */
  async retryUnavailable(): Promise<number> {
    return this.db.write(() => this.db.run("UPDATE file_index SET state = 'pending', reason = NULL WHERE state = 'unavailable'").changes);
  }

  /** Empties the index of stored content and starts it over (the doctor's repair of a damaged index). */
  async rebuild(): Promise<void> {
    await this.db.write(() => {
      this.db.run("INSERT INTO files_fts (files_fts) VALUES ('delete-all')");
      this.db.run("DELETE FROM file_chunks");
      this.db.run("UPDATE file_index SET indexed_bytes = 0, indexed_lines = 1, state = 'pending', reason = NULL WHERE state <> 'binary'");
    });
  }

  /** What is wrong with the index of stored content, or null: FTS5's own check, then rows against chunks. */
  async verify(): Promise<string | null> {
    const problem = await this.db.write(() => {
      try {
        this.db.run("INSERT INTO files_fts (files_fts, rank) VALUES ('integrity-check', 0)");
        return null;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    });
    if (problem !== null) return problem;
    const counts = this.db.get<{ indexed: number; chunks: number }>(
      "SELECT (SELECT count(*) FROM files_fts_docsize) AS indexed, (SELECT count(*) FROM file_chunks) AS chunks",
    )!;
    return counts.indexed === counts.chunks
      ? null
      : `files_fts holds ${counts.indexed} rows but file_chunks ${counts.chunks}; rebuild it (/lcm doctor repair).`;
  }

  private async merge(maxSteps: number): Promise<void> {
    for (let step = 0; step < maxSteps; step++) {
      const worked = await this.db.write(() => {
        const before = this.totalChanges();
        this.db.run("INSERT INTO files_fts (files_fts, rank) VALUES ('merge', ?)", MERGE_STEP_PAGES);
        return this.totalChanges() - before >= 2;
      });
      if (!worked) return;
      await nextLoopTurn();
    }
  }

  private totalChanges(): number {
    return this.db.get<{ changes: number }>("SELECT total_changes() AS changes")!.changes;
  }
}

function newlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++;
  return count;
}
