/**
 * The retrieval store's reads of content stored aside (schema 11): chunks of stored files from `files_fts` (driven
 * from the FTS index, like the message reads: the FTS table is the outer loop), stored files not indexed yet, and
 * the message that holds each file's reference. Rows carry where the chunk is in its file; the caller reads the
 * text. EXPLAIN QUERY PLAN of a candidate read:
 *   SCAN files_fts VIRTUAL TABLE INDEX 0:M… | SEARCH c USING INTEGER PRIMARY KEY (rowid=?)
 *   | SEARCH f USING INTEGER PRIMARY KEY (rowid=?) | SEARCH l USING INDEX sqlite_autoindex_large_files_1 (file_id=?)
 */
import type { Database } from "./database.js";
import { windowRows } from "./fts-window.js";
import type { ConversationId, FileId, MessageId } from "../records.js";
import type {
  CandidatePage,
  FileChunkHitRow,
  FileReference,
  IndexRequirement,
  PreparedTextQuery,
  SearchFilter,
  TextCandidates,
  TextSelection,
  UnindexedFile,
  UnsearchableFile,
} from "../store/retrieval-store.js";
import { resolveRecordedPath } from "./stored-file-path.js";
import type { SqliteFileIndex } from "./sqlite-file-index.js";
import { filterParams, MAX_TIME } from "./sqlite-retrieval-sql.js";
import { readVarints, requirementExpression, type SqliteTextSearch } from "./sqlite-text-search.js";

/** A backlog of stored content at most this large is indexed by the search that finds it (four pieces). */
export const SEARCH_INDEXES_FILE_BYTES_UP_TO = 256 * 1024;

const CHUNK_HIT = `c.chunk_id, f.file_id, l.file_name, f.conversation_id, f.message_id, f.created_at, c.byte_start, c.byte_end,
  c.line_start, l.storage_path`;
const FILE_FILTER = "+f.conversation_id IN (SELECT value FROM json_each(?)) AND f.created_at >= ? AND f.created_at < ?";
const CHUNK_JOINS = "CROSS JOIN file_index f ON f.file_key = c.file_key CROSS JOIN large_files l ON l.file_id = f.file_id";

interface ChunkHitSql {
  chunk_id: number;
  file_id: string;
  file_name: string | null;
  conversation_id: number;
  message_id: number | null;
  created_at: number;
  byte_start: number;
  byte_end: number;
  line_start: number;
  storage_path: string;
}

interface MessageRefSql {
  message_id: number;
  conversation_id: number;
  seq: number;
  role: string;
  created_at: number;
}

export class SqliteFileRetrieval {
  constructor(
    private readonly db: Database,
    private readonly index: SqliteFileIndex,
    private readonly text: SqliteTextSearch,
    /** The messages' index reaches this id: messages above it are read directly when looking for a reference. */
    private readonly messagesThrough: () => number,
  ) {}

  async prepare(terms: PreparedTextQuery["terms"]): Promise<PreparedTextQuery> {
    await this.indexSmallBacklog();
    const through = this.index.through();
    return this.text.prepare("files_fts", terms, through, through);
  }

  async textCandidates(
    prepared: PreparedTextQuery, filter: SearchFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<FileChunkHitRow>> {
    // No lower bound given to FTS5 (fts-window.ts): the window's matches a chunk at a time.
    const bounded = { from: window.from, to: Math.min(window.to, prepared.indexedThrough) };
    const rows = windowRows(this.db, "files_fts", this.text.expression(prepared, selection), bounded, limit, (ids, wanted) =>
      this.db.rows<ChunkHitSql & { size: Uint8Array | null }>(
        `SELECT ${CHUNK_HIT}, d.sz AS size
         FROM json_each(?) h CROSS JOIN file_chunks c ON c.chunk_id = h.value ${CHUNK_JOINS}
           CROSS JOIN files_fts_docsize d ON d.id = h.value
         WHERE ${FILE_FILTER}
         ORDER BY h.key LIMIT ?`,
        ids, ...filterParams(filter), wanted,
      ));
    return { rows: rows.map((row) => ({ ...this.toHit(row), wordCount: readVarints(row.size, 1)[0]! })), limitReached: rows.length >= limit };
  }

  async candidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<FileChunkHitRow>> {
    const match = requirementExpression(requirement);
    if (match === null) return { rows: [], next: null, oldestExamined: null };
    const rows = this.db.rows<ChunkHitSql & { candidate: number; in_scope: number }>(
      `SELECT h.rowid AS candidate, ${CHUNK_HIT}, (${FILE_FILTER}) AS in_scope
       FROM (SELECT rowid FROM files_fts WHERE files_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?) h
       CROSS JOIN file_chunks c ON c.chunk_id = h.rowid ${CHUNK_JOINS}
       ORDER BY h.rowid DESC`,
      ...filterParams(filter), match, below ?? MAX_TIME, pageSize,
    );
    const last = rows.at(-1);
    return {
      rows: rows.filter((row) => row.in_scope === 1).map((row) => this.toHit(row)),
      next: rows.length < pageSize || !last ? null : last.candidate,
      oldestExamined: last ? last.created_at : null,
    };
  }

  async scan(filter: SearchFilter, window: { from: number; to: number }): Promise<FileChunkHitRow[]> {
    return this.db.rows<ChunkHitSql>(
      `SELECT ${CHUNK_HIT} FROM file_chunks c ${CHUNK_JOINS}
       WHERE c.chunk_id >= ? AND c.chunk_id < ? AND ${FILE_FILTER} ORDER BY c.chunk_id DESC`,
      window.from, window.to, ...filterParams(filter),
    ).map((row) => this.toHit(row));
  }

  async maxChunkId(): Promise<number> {
    return this.index.through();
  }

  async unindexed(filter: SearchFilter, limit: number): Promise<{ files: UnindexedFile[]; unsearchable: UnsearchableFile[] }> {
    await this.indexSmallBacklog();
    const files = this.db.rows<Omit<ChunkHitSql, "chunk_id" | "byte_start" | "byte_end" | "line_start"> & { indexed_bytes: number; indexed_lines: number }>(
      `SELECT f.file_id, l.file_name, f.conversation_id, f.message_id, f.created_at, l.storage_path, f.indexed_bytes, f.indexed_lines
       FROM file_index f JOIN large_files l ON l.file_id = f.file_id
       WHERE f.state = 'pending' AND ${FILE_FILTER} ORDER BY f.file_key DESC LIMIT ?`,
      ...filterParams(filter), limit,
    );
    const unsearchable = this.db.rows<{ file_id: string; file_name: string | null; reason: string | null }>(
      `SELECT f.file_id, l.file_name, f.reason FROM file_index f JOIN large_files l ON l.file_id = f.file_id
       WHERE f.conversation_id IN (SELECT value FROM json_each(?)) AND f.state = 'unavailable'
         AND f.created_at >= ? AND f.created_at < ? ORDER BY f.file_key DESC LIMIT ?`,
      ...filterParams(filter), limit,
    );
    return {
      files: files.map((row) => ({
        fileId: row.file_id, fileName: row.file_name, conversationId: row.conversation_id, messageId: row.message_id,
        createdAt: row.created_at, path: resolveRecordedPath(this.db.path, row.storage_path), indexedBytes: row.indexed_bytes,
        indexedLines: row.indexed_lines,
      })),
      unsearchable: unsearchable.map((row) => ({ fileId: row.file_id, fileName: row.file_name, reason: row.reason ?? "could not be read" })),
    };
  }

  /**
   * Checks the message recorded for each file (its text names the file id), else finds the earliest message of the
   * file's conversation that does: through the message index (the id's words as a phrase), then among the messages
   * not indexed yet.
   */
  async references(files: readonly { fileId: FileId; conversationId: ConversationId; messageId: MessageId | null }[]): Promise<Map<FileId, FileReference | null>> {
    const found = new Map<FileId, FileReference | null>();
    for (const file of files) {
      if (found.has(file.fileId)) continue;
      const recorded = file.messageId === null ? undefined : this.db.get<MessageRefSql>(
        `SELECT message_id, conversation_id, seq, role, created_at FROM messages
         WHERE message_id = ? AND conversation_id = ? AND instr(content, ?) > 0`,
        file.messageId, file.conversationId, file.fileId,
      );
      const row = recorded ?? this.db.get<MessageRefSql>(
        `SELECT m.message_id, m.conversation_id, m.seq, m.role, m.created_at
         FROM messages_fts CROSS JOIN messages m ON m.message_id = messages_fts.rowid
         WHERE messages_fts MATCH ? AND +m.conversation_id = ? AND instr(m.content, ?) > 0
         ORDER BY messages_fts.rowid LIMIT 1`,
        `words : "${file.fileId.replace("_", " ")}"`, file.conversationId, file.fileId,
      ) ?? this.db.get<MessageRefSql>(
        `SELECT message_id, conversation_id, seq, role, created_at FROM messages
         WHERE message_id > ? AND +conversation_id = ? AND instr(content, ?) > 0 ORDER BY message_id LIMIT 1`,
        this.messagesThrough(), file.conversationId, file.fileId,
      );
      found.set(file.fileId, row ? {
        messageId: row.message_id, conversationId: row.conversation_id, seq: row.seq, role: row.role, createdAt: row.created_at,
      } : null);
    }
    return found;
  }

  private async indexSmallBacklog(): Promise<void> {
    if (this.db.readOnly) return;
    const backlog = this.index.backlog();
    if (backlog.files > 0 && backlog.bytes <= SEARCH_INDEXES_FILE_BYTES_UP_TO) await this.index.indexPending(backlog.bytes + 1);
  }

  private toHit(row: ChunkHitSql): FileChunkHitRow {
    return {
      chunkId: row.chunk_id, fileId: row.file_id, fileName: row.file_name, conversationId: row.conversation_id,
      messageId: row.message_id, createdAt: row.created_at, byteStart: row.byte_start, byteEnd: row.byte_end,
      lineStart: row.line_start, path: resolveRecordedPath(this.db.path, row.storage_path), text: "", rank: 0,
    };
  }
}
