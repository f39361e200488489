/**
 * The SQLite side of LargeFileStore, plus the insert that appendInTransaction runs for messages carrying
 * large files. Lookups are index-driven: `file_id` is the primary key, and UNIQUE (conversation_id,
 * content_hash) serves both the dedupe lookup and the per-conversation listing
 * (EXPLAIN QUERY PLAN: SEARCH large_files USING INDEX sqlite_autoindex_large_files_2 (conversation_id=?)).
 * Paths are recorded relative to the database's folder when inside it (sqlite/stored-file-path.ts); records always
 * carry the absolute path.
 */
import type { Database } from "./database.js";
import { recordedPath, resolveRecordedPath } from "./stored-file-path.js";
import type { ConversationId, FileId, LargeFileOrigin, LargeFileRecord } from "../records.js";
import type { LargeFileStore } from "../store/large-file-store.js";

const LARGE_FILE_COLUMNS =
  "file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path, " +
  "exploration_summary, explorer, origin, tool_name, created_at";

interface LargeFileRow {
  file_id: string;
  conversation_id: number;
  content_hash: string;
  file_name: string | null;
  mime_type: string | null;
  byte_size: number;
  token_count: number;
  storage_path: string;
  exploration_summary: string;
  explorer: string;
  origin: string;
  tool_name: string | null;
  created_at: number;
}

/** The record of a row of `db`, its path resolved against the database's folder. */
function toLargeFile(db: Pick<Database, "path">, row: LargeFileRow): LargeFileRecord {
  return {
    fileId: row.file_id,
    conversationId: row.conversation_id,
    contentHash: row.content_hash,
    fileName: row.file_name,
    mimeType: row.mime_type,
    byteSize: row.byte_size,
    tokenCount: row.token_count,
    storagePath: resolveRecordedPath(db.path, row.storage_path),
    explorationSummary: row.exploration_summary,
    explorer: row.explorer,
    origin: row.origin as LargeFileOrigin,
    toolName: row.tool_name,
    createdAt: row.created_at,
  };
}

export class SqliteLargeFileStore implements LargeFileStore {
  constructor(private readonly db: Database) {}

  async getLargeFile(fileId: FileId): Promise<LargeFileRecord | null> {
    const row = this.db.get<LargeFileRow>(`SELECT ${LARGE_FILE_COLUMNS} FROM large_files WHERE file_id = ?`, fileId);
    return row ? toLargeFile(this.db, row) : null;
  }

  async findLargeFileByHash(conversationId: ConversationId, contentHash: string): Promise<LargeFileRecord | null> {
    const row = this.db.get<LargeFileRow>(
      `SELECT ${LARGE_FILE_COLUMNS} FROM large_files WHERE conversation_id = ? AND content_hash = ?`,
      conversationId, contentHash,
    );
    return row ? toLargeFile(this.db, row) : null;
  }

  async listLargeFiles(conversationId: ConversationId, limit = 1_000): Promise<LargeFileRecord[]> {
    return this.db
      .all<LargeFileRow>(
        `SELECT ${LARGE_FILE_COLUMNS} FROM large_files WHERE conversation_id = ? ORDER BY created_at, file_id LIMIT ?`,
        conversationId, limit,
      )
      .map((row) => toLargeFile(this.db, row));
  }

  /** SQLite keeps the content only on disk, where the row says. */
  async readablePath(file: LargeFileRecord): Promise<string> {
    return file.storagePath;
  }
}

/**
 * Inserts the rows of a message's large files. Must run inside the message's write transaction. A row that
 * exists already (the same content sent again, or a replay) is left as it is: ids derive from the content hash.
 */
export function insertLargeFiles(db: Database, conversationId: ConversationId, files: readonly LargeFileRecord[]): void {
  for (const file of files) {
    db.run(
      `INSERT INTO large_files (${LARGE_FILE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      file.fileId, conversationId, file.contentHash, file.fileName, file.mimeType, file.byteSize, file.tokenCount,
      recordedPath(db.path, file.storagePath), file.explorationSummary, file.explorer, file.origin, file.toolName, file.createdAt,
    );
  }
}
