/**
 * Stored files' content on PostgreSQL (migration 8, `large_file_content`). Gateways on several machines share the
 * database but not a disk: a file is written to the files directory of the machine that received it, and its content
 * goes into the database in the transaction that records the row (`contentsOf` reads it before that transaction).
 * Rows recorded before migration 8 are uploaded by the maintain of the machine that holds their file (`uploadHeld`).
 * A gateway that finds a file missing at its recorded path writes the database's copy into its own files directory,
 * at the same layout, and reads that (`readablePath`); the file indexer and search read through it too.
 */
import { readFile, stat } from "node:fs/promises";
import { extname, isAbsolute, resolve } from "node:path";
import type { ConversationId, FileId } from "../records.js";
import type { LocalFilesDirectory } from "../store/large-file-store.js";
import { processShared } from "../runtime/process-shared.js";
import type { PgDatabase } from "./pg-database.js";
import type { PgQueryable } from "./pg-queryable.js";

/** Where a recorded storage path is: absolute as recorded; a relative one against the process's folder. */
export function storedFilePath(recorded: string): string {
  return isAbsolute(recorded) ? recorded : resolve(recorded);
}

/** A file as the readers name it: enough to find it here, or to copy it from the database. */
export interface StoredFileRef {
  fileId: FileId;
  conversationId: ConversationId;
  /** As recorded (absolute on PostgreSQL; a relative one is taken against the process's folder). */
  storagePath: string;
  byteSize: number;
}

/** Rows without content checked per maintain, and the bytes uploaded at most (a turn's pastes fit easily). */
export const UPLOAD_CHECKS_PER_PASS = 64;
export const UPLOAD_BYTES_PER_PASS = 16 * 1024 * 1024;

export class PgStoredFiles {
  constructor(private readonly db: PgDatabase, private readonly directory: LocalFilesDirectory | null) {}

  /**
   * Where to read `file` on this machine: its recorded path when the file is there whole, else this gateway's copy in
   * its files directory (written from the database when not there yet); null when the content is neither here nor in
   * the database (or this backend was opened without a files directory to copy it into).
   */
  async readablePath(file: StoredFileRef): Promise<string | null> {
    const here = await this.pathHere(file);
    return here !== undefined ? here : this.copyFromDatabase(file);
  }

  /**
   * `readablePath` of several files at once (a search's hits, the files it lists as not indexed): the files found on
   * this machine, then one statement for which of the others the database keeps, and only those read and copied. A
   * file held nowhere costs its two stats and a share of that statement, not a read of its content each time a
   * search lists it (200 such reads, ~30 ms, under every search of a history whose files were lost).
   */
  async readablePaths(files: readonly StoredFileRef[]): Promise<Map<FileId, string | null>> {
    const paths = new Map<FileId, string | null>();
    const elsewhere: StoredFileRef[] = [];
    await Promise.all(files.map(async (file) => {
      const here = await this.pathHere(file);
      if (here !== undefined) paths.set(file.fileId, here);
      else elsewhere.push(file);
    }));
    const kept = await this.kept(elsewhere.map((file) => file.fileId));
    await Promise.all(elsewhere.map(async (file) => paths.set(file.fileId, kept.has(file.fileId) ? await this.copyFromDatabase(file) : null)));
    return paths;
  }

  /** Where `file` is whole on this machine; null when it cannot be copied here; undefined: look in the database. */
  private async pathHere(file: StoredFileRef): Promise<string | null | undefined> {
    const recorded = storedFilePath(file.storagePath);
    if ((await sizeOf(recorded)) === file.byteSize) return recorded;
    const copy = this.copyPathOf(file);
    if (copy === null) return null;
    if (copy !== recorded && (await sizeOf(copy)) === file.byteSize) return copy;
    return undefined;
  }

  /** The database's copy of `file` written into this gateway's files directory; null when it keeps none whole. */
  private async copyFromDatabase(file: StoredFileRef): Promise<string | null> {
    const content = await this.contentOf(file.fileId);
    if (content === null || content.length !== file.byteSize) return null;
    return this.directory!.write(file.conversationId, file.fileId, extensionOf(storedFilePath(file.storagePath)), content);
  }

  /** The content the database keeps for a file; null when it keeps none (yet). */
  async contentOf(fileId: FileId, queryable: PgQueryable = this.db): Promise<Buffer | null> {
    return (await queryable.row<{ content: Buffer }>("SELECT content FROM large_file_content WHERE file_id = $1", [fileId]))?.content ?? null;
  }

  /** Whether the database keeps the content of each of `fileIds`. */
  async kept(fileIds: readonly FileId[]): Promise<Set<FileId>> {
    if (fileIds.length === 0) return new Set();
    const rows = await this.db.rows<{ file_id: string }>("SELECT file_id FROM large_file_content WHERE file_id = ANY($1::text[])", [fileIds]);
    return new Set(rows.map((row) => row.file_id));
  }

  /**
   * Uploads the content of files the database lacks (rows recorded before migration 8, or whose file could not be
   * read when recorded) and this machine holds whole: at most UPLOAD_CHECKS_PER_PASS rows looked at, in key order
   * from where the last pass of this process stopped (wrapping around), at most UPLOAD_BYTES_PER_PASS uploaded. Files
   * that are not here are skipped: another machine holds them and uploads them on its own maintain.
   */
  async uploadHeld(): Promise<{ checked: number; uploaded: number; bytes: number }> {
    const cursors = processShared("pg-file-upload-cursors.v1", () => new Map<string, string>());
    const after = cursors.get(this.db.location) ?? "";
    const rows = await this.db.rows<{ file_id: string; conversation_id: number; storage_path: string; byte_size: number }>(
      `SELECT l.file_id, l.conversation_id, l.storage_path, l.byte_size FROM large_files l
       WHERE l.file_id > $1 AND NOT EXISTS (SELECT 1 FROM large_file_content c WHERE c.file_id = l.file_id)
       ORDER BY l.file_id LIMIT $2`,
      [after, UPLOAD_CHECKS_PER_PASS],
    );
    cursors.set(this.db.location, rows.length < UPLOAD_CHECKS_PER_PASS ? "" : rows.at(-1)!.file_id);
    let uploaded = 0;
    let bytes = 0;
    for (const row of rows) {
      if (bytes + row.byte_size > UPLOAD_BYTES_PER_PASS && uploaded > 0) break;
      const path = storedFilePath(row.storage_path);
      const content = await contentAt(path, row.byte_size);
      if (content === null) continue;
      // The row may be gone since (retention, a deletion): nothing is inserted then.
      const inserted = await this.db.run(
        `INSERT INTO large_file_content (file_id, content) SELECT file_id, $2 FROM large_files WHERE file_id = $1 ON CONFLICT DO NOTHING`,
        [row.file_id, content],
      );
      if (inserted > 0) {
        uploaded++;
        bytes += content.length;
      }
    }
    return { checked: rows.length, uploaded, bytes };
  }

  private copyPathOf(file: StoredFileRef): string | null {
    if (this.directory === null) return null;
    try {
      return this.directory.pathFor(file.conversationId, file.fileId, extensionOf(file.storagePath));
    } catch {
      return null; // an id or a conversation that names no place in the files directory: no copy is made
    }
  }
}

/**
 * The content of files about to be recorded, read from where they were just written (outside the transaction that
 * records them); a file that cannot be read whole is left out, and uploaded later by the machine that holds it.
 */
export async function contentsOf(files: readonly { fileId: FileId; storagePath: string; byteSize: number }[]): Promise<Map<FileId, Buffer>> {
  const contents = new Map<FileId, Buffer>();
  for (const file of files) {
    if (contents.has(file.fileId)) continue;
    const content = await contentAt(storedFilePath(file.storagePath), file.byteSize);
    if (content !== null) contents.set(file.fileId, content);
  }
  return contents;
}

/** Inside the transaction that records the rows: their content, where read (a row's content already kept stays). */
export async function insertContents(tx: PgQueryable, contents: ReadonlyMap<FileId, Buffer>, fileIds: readonly FileId[]): Promise<void> {
  for (const fileId of fileIds) {
    const content = contents.get(fileId);
    if (content === undefined) continue;
    await tx.run("INSERT INTO large_file_content (file_id, content) VALUES ($1, $2) ON CONFLICT DO NOTHING", [fileId, content]);
  }
}

/** The file's bytes when a regular file of `byteSize` bytes is at `path`; null otherwise. */
async function contentAt(path: string, byteSize: number): Promise<Buffer | null> {
  if ((await sizeOf(path)) !== byteSize) return null;
  try {
    const content = await readFile(path);
    return content.length === byteSize ? content : null;
  } catch {
    return null; // unreadable here (permissions, removed meanwhile): the content stays where it is, uploaded later
  }
}

/** The size of a regular file at `path`; null when there is none. */
async function sizeOf(path: string): Promise<number | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : null;
  } catch {
    return null; // nothing at that path here: the caller looks for the content elsewhere
  }
}

function extensionOf(path: string): string {
  const extension = extname(path).slice(1);
  return /^[a-z0-9]{1,10}$/.test(extension) ? extension : "bin";
}
