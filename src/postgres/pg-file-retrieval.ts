/**
 * The PostgreSQL retrieval store's reads of content stored aside: chunks of stored files from `file_chunks` (their
 * tsvector, GIN-indexed), stored files not indexed yet, and the message that holds each file's reference. Rows carry
 * where the chunk is in its file, and a path on this machine to read it from (pg-stored-files.ts: the database's copy is
 * written into this gateway's files directory when the file is not here); the caller reads the text.
 */
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
import { analyzeDocument } from "../text/text-analysis.js";
import { fromPgText, fromPgTextOrNull, toPgText } from "./pg-database.js";
import { BACKLOG_SELECT, type PgFileIndex } from "./pg-file-index.js";
import { type StoredFileRef, storedFilePath } from "./pg-stored-files.js";
import { preparedStatement } from "./pg-queryable.js";
import { BACKLOG_BLOCKS_TABLE } from "./pg-backlog-blocks.js";
import { substringBits } from "../text/backlog-blocks.js";
import { anyOrAlways, phraseQuery } from "./pg-search-document.js";
import type { PgSearchReader } from "./pg-search-reader.js";
import {
  candidateIdsSql, candidatePage, LARGE_DOCUMENT_COST, MAX_TIME, newestFirstOrder, newestFirstRange, newestFirstSql, PROBE_IDS, probeFor, readCandidates, SqlParams,
} from "./pg-retrieval-sql.js";
import { selectionShare } from "./pg-message-candidates.js";
import { type PgTextSearch, requirementQuery } from "./pg-text-search.js";

/** A backlog of stored content at most this large is indexed by the search that finds it (four pieces). */
export const SEARCH_INDEXES_FILE_BYTES_UP_TO = 256 * 1024;

const CHUNK_HIT = `c.chunk_id, f.file_id, l.file_name, f.conversation_id, f.message_id, f.created_at, c.byte_start, c.byte_end,
  c.line_start, l.storage_path, l.byte_size`;
const CHUNK_JOINS = "JOIN file_index f ON f.file_key = c.file_key JOIN large_files l ON l.file_id = f.file_id";

function fileFilter(params: SqlParams, filter: SearchFilter): string {
  return `f.conversation_id = ANY(${params.add(filter.conversationIds)}::bigint[])
    AND f.created_at >= ${params.add(filter.since ?? Number.MIN_SAFE_INTEGER)} AND f.created_at < ${params.add(filter.before ?? MAX_TIME)}`;
}

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
  byte_size: number;
}

interface MessageRefSql {
  message_id: number;
  conversation_id: number;
  seq: number;
  role: string;
  created_at: number;
}

/**
 * The message holding each file's reference (`references`), and with `correct` the recorded one corrected where it is
 * wrong (a read-only pool only reads: the same rows are found, the correction waits for a writer).
 */
/** Where the rows outside the backlog's blocks start and end when there are none (every row is below them). */
const NO_BLOCKS = "9223372036854775807";

function referencesSql(correct: boolean): string {
  return `WITH wanted AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[])
    AS w (file_id, named, conversation_id, recorded_id, query, bits)
), located AS (
  SELECT w.file_id, coalesce(r.message_id, i.message_id, least(below.message_id, b.message_id, above.message_id)) AS message_id, r.message_id IS NOT NULL AS recorded
  FROM wanted w
  LEFT JOIN messages r ON r.message_id = w.recorded_id AND r.conversation_id = w.conversation_id AND strpos(r.content, w.named) > 0
  LEFT JOIN LATERAL (
    SELECT m.message_id FROM message_search s JOIN messages m ON m.message_id = s.message_id
    WHERE r.message_id IS NULL AND w.query IS NOT NULL AND s.document @@ w.query::tsquery
      AND m.conversation_id = w.conversation_id AND strpos(m.content, w.named) > 0
    ORDER BY s.message_id + 0 LIMIT 1) i ON true
  LEFT JOIN LATERAL (
    SELECT m.message_id FROM (
      SELECT k.first_id, k.last_id FROM ${BACKLOG_BLOCKS_TABLE} k
      WHERE r.message_id IS NULL AND i.message_id IS NULL AND NOT EXISTS (SELECT 1 FROM unnest(w.bits::int[]) bit WHERE get_bit(k.bloom, bit) = 0)
      ORDER BY k.last_id OFFSET 0) k
    CROSS JOIN LATERAL (
      SELECT m.message_id FROM messages m
      WHERE m.message_id BETWEEN k.first_id AND k.last_id AND m.conversation_id = w.conversation_id AND strpos(m.content, w.named) > 0
        AND EXISTS (SELECT 1 FROM message_search_pending q WHERE q.message_id = m.message_id)
      ORDER BY m.message_id LIMIT 1) m
    ORDER BY k.last_id LIMIT 1) b ON true
  ${[["below", "<", `(SELECT first_id FROM ${BACKLOG_BLOCKS_TABLE} ORDER BY last_id LIMIT 1)`], ["above", ">", `(SELECT max(last_id) FROM ${BACKLOG_BLOCKS_TABLE})`]]
    .map(([name, compare, bound]) => `LEFT JOIN LATERAL (
    SELECT m.message_id FROM message_search_pending q JOIN messages m ON m.message_id = q.message_id
    WHERE r.message_id IS NULL AND i.message_id IS NULL AND m.message_id ${compare} coalesce(${bound}, ${NO_BLOCKS})
      AND m.conversation_id = w.conversation_id AND strpos(m.content, w.named) > 0
    ORDER BY m.message_id LIMIT 1) ${name} ON true`).join("\n  ")}
)${correct ? `, healed AS (
  UPDATE file_index f SET message_id = l.message_id FROM located l
  WHERE f.file_id = l.file_id AND NOT l.recorded AND l.message_id IS NOT NULL
    AND f.file_id IN (SELECT file_id FROM file_index WHERE file_id = ANY($1::text[]) FOR UPDATE SKIP LOCKED)
)` : ""}
SELECT l.file_id, l.recorded, m.message_id, m.conversation_id, m.seq, m.role, m.created_at
FROM located l JOIN messages m ON m.message_id = l.message_id`;
}

const REFERENCES_SQL = preparedStatement(referencesSql(true), { plan: "generic" });
const REFERENCES_READ_SQL = preparedStatement(referencesSql(false), { plan: "generic" });

/**
 * The backlog of stored content ($1-$3: the scope as `fileFilter` writes it) and, newest first, at most $4 stored files
 * in scope waiting for the index and $4 that could not be read; a prepared statement (its text never changes).
 */
const UNINDEXED_SQL = (() => {
  const params = new SqlParams();
  const scope = fileFilter(params, { conversationIds: [], since: null, before: null });
  const wanted = params.add(0);
  return preparedStatement(`SELECT b.files AS backlog_files, b.bytes AS backlog_bytes, b.through AS backlog_through, u.* FROM (${BACKLOG_SELECT}) b
    LEFT JOIN LATERAL (
      (SELECT f.state, f.file_id, l.file_name, f.conversation_id, f.message_id, f.created_at, l.storage_path, l.byte_size, f.indexed_bytes, f.indexed_lines, f.reason
       FROM file_index f JOIN large_files l ON l.file_id = f.file_id
       WHERE f.state = 'pending' AND ${scope} ORDER BY f.file_key DESC LIMIT ${wanted})
      UNION ALL
      (SELECT f.state, f.file_id, l.file_name, f.conversation_id, f.message_id, f.created_at, l.storage_path, l.byte_size, f.indexed_bytes, f.indexed_lines, f.reason
       FROM file_index f JOIN large_files l ON l.file_id = f.file_id
       WHERE f.state = 'unavailable' AND ${scope} ORDER BY f.file_key DESC LIMIT ${wanted})) u ON true`, { plan: "generic" });
})();

export class PgFileRetrieval {
  constructor(private readonly reader: PgSearchReader, private readonly index: PgFileIndex, private readonly text: PgTextSearch) {}

  /**
   * The query's words looked up in the chunks' index with its backlog (one statement); when the search indexes a
   * small backlog itself, they are looked up again after it (the dictionary is written with the index).
   */
  async prepare(terms: PreparedTextQuery["terms"]): Promise<PreparedTextQuery> {
    const first = await this.text.prepare("files", terms, 0);
    const backlog = { files: first.state.waiting, bytes: first.state.bytes, through: first.state.through };
    if (!this.indexesItself(backlog)) return first.prepared;
    await this.caughtUp(backlog);
    return (await this.text.prepare("files", terms, 0)).prepared;
  }

  async textCandidates(
    prepared: PreparedTextQuery, filter: SearchFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<FileChunkHitRow>> {
    const query = this.text.expression(prepared, selection);
    const probe = probeFor(selectionShare(prepared, selection), limit, 0, LARGE_DOCUMENT_COST);
    const params = new SqlParams();
    const scope = fileFilter(params, filter);
    const tsquery = params.add(query);
    const sql = newestFirstSql(params, window.from, Math.min(window.to, prepared.indexedThrough), limit, "chunk_id", (from, to, order, wanted) =>
      `SELECT ${CHUNK_HIT}, c.word_count FROM file_chunks c ${CHUNK_JOINS}
       WHERE c.document @@ ${tsquery}::tsquery AND ${newestFirstRange("c.chunk_id", from, to, order)} AND ${scope}
       ORDER BY ${newestFirstOrder("c.chunk_id", order)} LIMIT ${wanted}`, probe);
    const rows = sql === null ? [] : await this.reader.rows<ChunkHitSql & { word_count: number }>("stored-content candidates", sql, params.values);
    return { rows: await this.readable(rows.map((row) => ({ ...toHit(row), wordCount: row.word_count })), rows), limitReached: rows.length >= limit };
  }

  async candidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<FileChunkHitRow>> {
    const query = requirementQuery(requirement);
    if (query === null) return { rows: [], next: null, oldestExamined: null };
    const top = below === null ? await this.index.through() : below - 1;
    const rows = await readCandidates(top, pageSize, async (window) => {
      const params = new SqlParams();
      const scope = fileFilter(params, filter);
      const ids = candidateIdsSql(params, "file_chunks", "chunk_id", params.add(query), window);
      return ids === null ? [] : this.reader.rows<ChunkHitSql & { candidate: number; in_scope: boolean }>(
        "stored-content regex candidates",
        `SELECT c.chunk_id AS candidate, ${CHUNK_HIT}, (${scope}) AS in_scope
         FROM (${ids}) h JOIN file_chunks c ON c.chunk_id = h.chunk_id ${CHUNK_JOINS}
         ORDER BY c.chunk_id DESC`,
        params.values,
      );
    }, PROBE_IDS / LARGE_DOCUMENT_COST);
    const page = candidatePage(rows, pageSize, toHit, (row) => row.created_at);
    return { ...page, rows: await this.readable(page.rows, rows) };
  }

  async scan(filter: SearchFilter, window: { from: number; to: number }): Promise<FileChunkHitRow[]> {
    const params = new SqlParams();
    const rows = await this.reader.rows<ChunkHitSql>(
      "stored-content scan",
      `SELECT ${CHUNK_HIT} FROM file_chunks c ${CHUNK_JOINS}
       WHERE c.chunk_id >= ${params.add(window.from)} AND c.chunk_id < ${params.add(window.to)} AND ${fileFilter(params, filter)}
       ORDER BY c.chunk_id DESC`,
      params.values,
    );
    return this.readable(rows.map(toHit), rows);
  }

  /** Each row's path where its file can be read on this machine (`readablePaths`: one look per file); the recorded one when nowhere. */
  private async readable<Row extends { fileId: FileId; conversationId: ConversationId; path: string }>(
    rows: Row[], sizes: readonly { file_id: string; byte_size: number }[],
  ): Promise<Row[]> {
    const byteSizes = new Map(sizes.map((row) => [row.file_id, row.byte_size]));
    const files = new Map<FileId, StoredFileRef>();
    for (const row of rows) {
      if (!files.has(row.fileId)) {
        files.set(row.fileId, { fileId: row.fileId, conversationId: row.conversationId, storagePath: row.path, byteSize: byteSizes.get(row.fileId) ?? -1 });
      }
    }
    const located = await this.index.stored.readablePaths([...files.values()]);
    return rows.map((row) => ({ ...row, path: located.get(row.fileId) ?? row.path }));
  }

  maxChunkId(): Promise<number> {
    return this.index.through();
  }

  /**
   * Stored files in scope not indexed yet and those that could not be read, with the backlog in the same statement;
   * listed again after the search indexed a small backlog itself.
   */
  async unindexed(filter: SearchFilter, limit: number): Promise<{ files: UnindexedFile[]; unsearchable: UnsearchableFile[] }> {
    let listed = await this.listUnindexed(filter, limit);
    if (this.indexesItself(listed.backlog)) {
      await this.caughtUp(listed.backlog);
      listed = await this.listUnindexed(filter, limit);
    }
    return { files: listed.files, unsearchable: listed.unsearchable };
  }

  private async listUnindexed(filter: SearchFilter, limit: number) {
    const rows = await this.reader.rows<Omit<ChunkHitSql, "chunk_id" | "byte_start" | "byte_end" | "line_start"> & {
      state: "pending" | "unavailable" | null; indexed_bytes: number; indexed_lines: number; reason: string | null;
      backlog_files: number; backlog_bytes: number | null; backlog_through: number | null;
    }>(
      "stored files not indexed",
      UNINDEXED_SQL,
      [filter.conversationIds, filter.since ?? Number.MIN_SAFE_INTEGER, filter.before ?? MAX_TIME, limit],
    );
    const first = rows[0];
    const backlog: FileBacklog = { files: first?.backlog_files ?? 0, bytes: Math.max(0, first?.backlog_bytes ?? 0), through: first?.backlog_through ?? 0 };
    const files = await this.readable(rows.filter((row) => row.state === "pending").map((row) => ({
      ...row, fileId: row.file_id, conversationId: row.conversation_id, path: storedFilePath(row.storage_path),
    })), rows);
    const unsearchable = rows.filter((row) => row.state === "unavailable");
    return {
      backlog,
      files: files.map((row) => ({
        fileId: row.file_id, fileName: fromPgTextOrNull(row.file_name), conversationId: row.conversation_id, messageId: row.message_id,
        createdAt: row.created_at, path: row.path, indexedBytes: row.indexed_bytes, indexedLines: row.indexed_lines,
      })),
      unsearchable: unsearchable.map((row) => ({ fileId: row.file_id, fileName: fromPgTextOrNull(row.file_name), reason: row.reason ?? "could not be read" })),
    };
  }

  /**
   * For each file, in one statement: the message recorded for it when its text names the file id, else the earliest
   * message of its conversation that does, found through the message index (the id's words as a phrase, read from the
   * GIN index: `+ 0` keeps the planner off the primary key's order, which reads every row for an id found late), else
   * among the messages waiting for the index (where the backlog's blocks cover them, only in blocks that may hold the
   * id: a 1M backlog's rows read one by one took 2 s). A recorded message that did not name the file (a history copied by
   * `lcm migrate` records its conversation's newest message) is corrected in the same statement, so the next search
   * checks one row; rows another statement holds are left for later (SKIP LOCKED: a search never waits). A read-only
   * pool finds the same messages and corrects nothing.
   */
  async references(files: readonly { fileId: FileId; conversationId: ConversationId; messageId: MessageId | null }[]): Promise<Map<FileId, FileReference | null>> {
    const found = new Map<FileId, FileReference | null>();
    const unique = [...new Map(files.map((file) => [file.fileId, file])).values()];
    if (unique.length === 0) return found;
    const queries = unique.map((file) => {
      const words = analyzeDocument(file.fileId).words.split(" ").filter(Boolean);
      return words.length === 0 ? null : anyOrAlways([phraseQuery(words, { weight: "A" })]);
    });
    const rows = await this.reader.rows<MessageRefSql & { file_id: string; recorded: boolean }>(
      "file references",
      this.reader.pool.readOnly ? REFERENCES_READ_SQL : REFERENCES_SQL,
      [
        unique.map((file) => file.fileId), unique.map((file) => toPgText(file.fileId)), unique.map((file) => file.conversationId),
        unique.map((file) => file.messageId), queries,
        // The bits a backlog block must have to hold the file id (pg-backlog-blocks.ts); none: every block may.
        unique.map((file) => `{${(substringBits([file.fileId])?.[0] ?? []).join(",")}}`),
      ],
    );
    const byFile = new Map(rows.map((row) => [row.file_id, row]));
    for (const file of unique) {
      const row = byFile.get(file.fileId);
      found.set(file.fileId, row ? {
        messageId: row.message_id, conversationId: row.conversation_id, seq: row.seq, role: fromPgText(row.role), createdAt: row.created_at,
      } : null);
    }
    return found;
  }

  /** After `backlog` was read: indexes it when small (a search's own catch-up); returns the highest chunk id indexed. */
  private async caughtUp(backlog: FileBacklog): Promise<number> {
    if (!this.indexesItself(backlog)) return backlog.through;
    await this.index.indexPending(backlog.bytes + 1);
    return (await this.index.backlog()).through;
  }

  /**
   * Whether a search indexes the stored content waiting itself: some, at most SEARCH_INDEXES_FILE_BYTES_UP_TO, and
   * never on a read-only pool (its searches read the waiting files directly, as SQLite's read-only ones do).
   */
  private indexesItself(backlog: FileBacklog): boolean {
    return this.index.writable && backlog.files > 0 && backlog.bytes <= SEARCH_INDEXES_FILE_BYTES_UP_TO;
  }
}

type FileBacklog = Awaited<ReturnType<PgFileIndex["backlog"]>>;

function toHit(row: ChunkHitSql): FileChunkHitRow {
  return {
    chunkId: row.chunk_id, fileId: row.file_id, fileName: fromPgTextOrNull(row.file_name), conversationId: row.conversation_id,
    messageId: row.message_id, createdAt: row.created_at, byteStart: row.byte_start, byteEnd: row.byte_end,
    lineStart: row.line_start, path: storedFilePath(row.storage_path), text: "", rank: 0,
  };
}
