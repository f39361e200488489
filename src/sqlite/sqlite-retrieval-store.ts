/**
 * The SQLite side of RetrievalStore. Full-text plans are driven from the FTS5 index by construction: the FTS
 * table is the outer loop (CROSS JOIN fixes the join order) and the conversation filter is written
 * `+conversation_id IN (...)` so the planner can never flip to "scan a conversation, probe the index per row"
 * (the plan that cost the peer seconds without statistics). EXPLAIN QUERY PLAN of the recency search:
 *   SCAN messages_fts VIRTUAL TABLE INDEX 192:M1 | SEARCH m USING INTEGER PRIMARY KEY (rowid=?) | (json_each list)
 * with no temp B-tree: the index yields rowids newest first and LIMIT stops it. Relevance ranks a bounded set.
 * Window scans examine at most the window's width: SEARCH m USING INDEX sqlite_autoindex_messages_2
 * (conversation_id=? AND seq>? AND seq<?) for one conversation, SEARCH m USING INTEGER PRIMARY KEY (rowid>? AND
 * rowid<?) across conversations.
 */
import { isBusyError, reverseText, type Database } from "./database.js";
import type { ConversationId, ConversationRecord, FileId, MessageId, SummaryId } from "../records.js";
import type { QueryTerm } from "../text/text-query.js";
import { EXPANSION_SESSION_PREFIX } from "../store/grant-store.js";
import type { ArchivedLocation } from "../store/retention-store.js";
import { SqliteExportStore } from "./sqlite-export-store.js";
import type {
  CandidatePage,
  ContainsFilter,
  FileChunkHitRow,
  FileReference,
  IndexRequirement,
  IndexState,
  MessageHitRow,
  MessageText,
  PreparedTextQuery,
  RetrievalStore,
  ScanWindow,
  SearchFilter,
  SummaryHitRow,
  SummaryLineage,
  TextCandidates,
  TextFilter,
  TextSelection,
  TextSource,
  UnindexedFile,
  UnsearchableFile,
} from "../store/retrieval-store.js";
import { type ConversationRow, toConversation } from "./rows.js";
import { SqliteFileRetrieval } from "./sqlite-file-retrieval.js";
import { type IndexTable, SqliteSearchIndex } from "./sqlite-search-index.js";
import { argumentSpansSql, toSearchableText } from "./sqlite-searchable-text.js";
import { BacklogBlocks } from "./sqlite-backlog-blocks.js";
import { BACKLOG_BLOCK_ROWS } from "../text/backlog-blocks.js";
import { BacklogTrigram, trigramExpression } from "./sqlite-backlog-trigram.js";
import { windowRows } from "./fts-window.js";
import { readVarints, requirementExpression, SqliteTextSearch } from "./sqlite-text-search.js";
import {
  matchingShare, SCOPED_REGEX_SHARE, scopedFrom, scopedReads, scopeExpression, scopePays, scopeRows, scopeShare,
} from "./search-scope.js";
import {
  candidatePage,
  containsClause,
  filterParams,
  MAX_TIME,
  MESSAGE_FILTER,
  MESSAGE_HIT,
  MIN_TIME,
  SUMMARY_FILTER,
  SUMMARY_HIT,
  toMessageHit,
  toSummaryHit,
  type Candidate,
  type MessageHitSql,
  type SummaryHitSql,
} from "./sqlite-retrieval-sql.js";

/** When each connection last refreshed its planner statistics (per process; a reloaded module just refreshes again). */
const statisticsRefreshedAt = new WeakMap<Database, number>();

/** Bound on the climb from a leaf to its root (depths stay far below this). */
const MAX_DAG_DEPTH = 64;
/**
 * A backlog of at most this many rows is indexed by the search that finds it (4 chunks, a few ms each, with the
 * event loop running between them); a larger one is left to maintenance and read directly by the caller.
 */
export const SEARCH_INDEXES_UP_TO = 400;

const INDEX_OF: Record<Exclude<TextSource, "files">, IndexTable> = { messages: "messages_fts", summaries: "summaries_fts" };

/** A message row with its stored text, tool-call spans and length in words. */
type MessageTextSql = MessageHitSql & { content: string; spans: string | null; size: Uint8Array | null };
type SummaryTextSql = SummaryHitSql & { content: string; size: Uint8Array | null };

export class SqliteRetrievalStore implements RetrievalStore {
  private readonly index: SqliteSearchIndex;
  /** The backlog's trigram index (spec 030, 2b), read while the worker indexes a large backlog. */
  private readonly backlog: BacklogTrigram;
  private readonly blocks: BacklogBlocks;
  private readonly text: SqliteTextSearch;
  private readonly files: SqliteFileRetrieval;
  /** Where retention's archives hold what recall cannot show (read with the export's reads). */
  private readonly archives: SqliteExportStore;

  constructor(private readonly db: Database) {
    this.archives = new SqliteExportStore(db);
    this.index = new SqliteSearchIndex(db);
    this.backlog = new BacklogTrigram(db);
    this.blocks = new BacklogBlocks(db);
    this.text = new SqliteTextSearch(db);
    this.files = new SqliteFileRetrieval(db, this.index.files, this.text, () => this.index.through("messages_fts"));
  }

  async prepareText(source: TextSource, terms: QueryTerm[]): Promise<PreparedTextQuery> {
    if (source === "files") return this.files.prepare(terms);
    const table = INDEX_OF[source];
    await this.index.indexIfAtMost(table, SEARCH_INDEXES_UP_TO);
    const newest = source === "messages" ? await this.maxMessageId() : await this.maxSummaryRowId();
    const prepared = this.text.prepare(table, terms, this.index.through(table), newest);
    return source === "messages" ? { ...prepared, backlogThrough: this.backlog.through(), backlogBlocksThrough: this.blocks.through() } : prepared;
  }

  async messageTextCandidates(
    prepared: PreparedTextQuery, filter: TextFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<MessageHitRow>> {
    // The window's matches come from windowIds (no lower bound given to FTS5: fts-window.ts), a chunk at a time.
    const read = (match: string, part: { from: number; to: number }, partLimit: number) => windowRows(
      this.db, "messages_fts", match, part, partLimit, (ids, wanted) => this.db.rows<MessageTextSql>(
        `SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans, d.sz AS size
         FROM json_each(?) c CROSS JOIN messages m ON m.message_id = c.value
           CROSS JOIN messages_fts_docsize d ON d.id = c.value
         WHERE ${MESSAGE_FILTER} AND m.seq BETWEEN ? AND ?
         ORDER BY c.key LIMIT ?`,
        ids, ...filterParams(filter), filter.seqRange?.from ?? MIN_TIME, filter.seqRange?.to ?? MAX_TIME, wanted,
      ),
    );
    const rows = this.scopedTextReads("messages_fts", prepared, filter, selection, window, limit, read);
    return {
      rows: rows.map((row) => ({ ...toMessageHit(row), text: toSearchableText(row.content, row.spans), rank: 0, wordCount: readVarints(row.size, 1)[0]! })),
      limitReached: rows.length >= limit,
    };
  }

  async summaryTextCandidates(
    prepared: PreparedTextQuery, filter: SearchFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<SummaryHitRow>> {
    const read = (match: string, part: { from: number; to: number }, partLimit: number) => windowRows(
      this.db, "summaries_fts", match, part, partLimit, (ids, wanted) => this.db.rows<SummaryTextSql>(
        `SELECT ${SUMMARY_HIT}, s.content, d.sz AS size
         FROM json_each(?) c CROSS JOIN summaries s ON s.id = c.value
           CROSS JOIN summaries_fts_docsize d ON d.id = c.value
         WHERE ${SUMMARY_FILTER}
         ORDER BY c.key LIMIT ?`,
        ids, ...filterParams(filter), wanted,
      ),
    );
    const rows = this.scopedTextReads("summaries_fts", prepared, filter, selection, window, limit, read);
    return {
      rows: rows.map((row) => ({ ...toSummaryHit(row), text: row.content, rank: 0, wordCount: readVarints(row.size, 1)[0]! })),
      limitReached: rows.length >= limit,
    };
  }

  /**
   * A full-text window's candidates of `table` through `read`: with the conversations' tokens above their mark when
   * that pays (search-scope.ts), without below it or when it does not.
   */
  private scopedTextReads<Row>(
    table: IndexTable, prepared: PreparedTextQuery, filter: SearchFilter, selection: TextSelection, window: { from: number; to: number },
    limit: number, read: (match: string, part: { from: number; to: number }, partLimit: number) => Row[],
  ): Row[] {
    const scope = scopeExpression(filter.conversationIds);
    const pays = scope !== null
      && scopePays(scopeShare(this.db, table, filter.conversationIds, prepared.indexedThrough), matchingShare(prepared, selection));
    return scopedReads(
      this.text.expression(prepared, selection), pays ? scope : null, scopedFrom(this.db, table),
      { from: window.from, to: Math.min(window.to, prepared.indexedThrough) }, limit, read,
    );
  }

  async indexState(): Promise<IndexState> {
    await this.index.indexIfAtMost("messages_fts", SEARCH_INDEXES_UP_TO);
    await this.index.indexIfAtMost("summaries_fts", SEARCH_INDEXES_UP_TO);
    return {
      messagesThrough: this.index.through("messages_fts"), summariesThrough: this.index.through("summaries_fts"),
      messagesNewest: await this.maxMessageId(), summariesNewest: await this.maxSummaryRowId(),
      messagesBacklogThrough: this.backlog.through(),
      messagesBlocksThrough: this.blocks.through(),
    };
  }

  async backlogMessages(
    filter: TextFilter, anyOf: readonly string[], window: { from: number; to: number }, limit: number,
  ): Promise<CandidatePage<MessageHitRow> | null> {
    const expression = trigramExpression(anyOf);
    // Read in one transaction: the watermarks and the trigram entries they vouch for (the worker may empty it).
    return readTogether(this.db, () => {
      if (expression === null || window.from <= this.index.through("messages_fts") || window.to > this.backlog.through()) return null;
      const ids = this.backlog.candidates(expression, window, limit);
      const rows = this.db.rows<Candidate<MessageHitSql> & { content: string | null; spans: string | null }>(
        `SELECT c.value AS candidate, ${MESSAGE_HIT}, 0 AS rank, (${MESSAGE_FILTER} AND m.seq BETWEEN ? AND ?) AS in_scope,
           m.content, ${argumentSpansSql("m")} AS spans
         FROM json_each(?) c CROSS JOIN messages m ON m.message_id = c.value
         ORDER BY c.value DESC`,
        ...filterParams(filter), filter.seqRange?.from ?? MIN_TIME, filter.seqRange?.to ?? MAX_TIME, JSON.stringify(ids),
      );
      const page = candidatePage(
        rows.map((row) => ({ ...row, text: row.content === null ? null : toSearchableText(row.content, row.spans) })),
        limit, toMessageHit, (row) => row.created_at,
      );
      // A missing row (deleted since) leaves no candidate behind: page on from the lowest id the index gave.
      return { ...page, next: ids.length < limit ? null : ids.at(-1)! };
    });
  }

  async backlogBlockRows(
    filter: TextFilter, anyOf: readonly string[], contains: ContainsFilter | null, window: { from: number; to: number }, maxRows: number,
  ): Promise<{ rows: MessageHitRow[]; next: number | null } | null> {
    // The watermark, the blocks it vouches for and their rows in one read (the worker may empty them).
    return readTogether(this.db, () => {
      const found = this.blocks.rangesThatMayHold(anyOf, window, Math.max(1, Math.floor(maxRows / BACKLOG_BLOCK_ROWS)));
      if (found === null) return null;
      if (found.ranges.length === 0) return { rows: [], next: found.next };
      const [clause, containsParams] = containsClause("m.content", contains);
      const rows = this.db.rows<MessageHitSql & { content: string; spans: string | null }>(
        `SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans, 0 AS rank
         FROM json_each(?) r CROSS JOIN messages m ON m.message_id BETWEEN r.value ->> 0 AND r.value ->> 1
         WHERE ${MESSAGE_FILTER} AND m.seq BETWEEN ? AND ? ${clause}
         ORDER BY m.message_id DESC`,
        JSON.stringify(found.ranges.map((range) => [range.from, range.to])), ...filterParams(filter),
        filter.seqRange?.from ?? MIN_TIME, filter.seqRange?.to ?? MAX_TIME, ...containsParams,
      );
      return { rows: rows.map((row) => ({ ...toMessageHit(row), text: toSearchableText(row.content, row.spans) })), next: found.next };
    });
  }

  async messageCandidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<MessageHitRow>> {
    const match = requirementExpression(requirement);
    if (match === null) return { rows: [], next: null, oldestExamined: null };
    const part = scopedPart(this.db, "messages_fts", this.index.through("messages_fts"), match, filter, below);
    const rows = this.db.rows<Candidate<MessageHitSql> & { content: string | null; spans: string | null }>(
      `SELECT c.rowid AS candidate, ${MESSAGE_HIT}, 0 AS rank, (${MESSAGE_FILTER}) AS in_scope,
         CASE WHEN ${MESSAGE_FILTER} THEN m.content END AS content,
         CASE WHEN ${MESSAGE_FILTER} THEN ${argumentSpansSql("m")} END AS spans
       FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid < ? ${part.lowerBound} ORDER BY rowid DESC LIMIT ?) c
       CROSS JOIN messages m ON m.message_id = c.rowid
       ORDER BY c.rowid DESC`,
      ...filterParams(filter), ...filterParams(filter), ...filterParams(filter), part.match, below ?? MAX_TIME, pageSize,
    );
    return part.page(candidatePage(
      rows.map((row) => ({ ...row, text: row.content === null ? null : toSearchableText(row.content, row.spans) })),
      pageSize, toMessageHit, (row) => row.created_at,
    ));
  }

  async messageTermsEndingWith(fragments: readonly string[], limit: number): Promise<Map<string, string[] | null>> {
    const terms = new Map<string, string[] | null>();
    for (const fragment of fragments) {
      // Words ending with the fragment are the reversed keys that start with it reversed: one index range.
      const start = reverseText(fragment);
      const end = start.slice(0, -1) + String.fromCharCode(start.charCodeAt(start.length - 1) + 1);
      const rows = this.db.tuples<[string]>(
        "SELECT term FROM search_terms WHERE reversed >= ? AND reversed < ? LIMIT ?", start, end, limit + 1,
      );
      terms.set(fragment, rows.length > limit ? null : rows.map(([term]) => term));
    }
    return terms;
  }

  async summaryCandidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<SummaryHitRow>> {
    const match = requirementExpression(requirement);
    if (match === null) return { rows: [], next: null, oldestExamined: null };
    const part = scopedPart(this.db, "summaries_fts", this.index.through("summaries_fts"), match, filter, below);
    const rows = this.db.all<Candidate<SummaryHitSql>>(
      `SELECT c.rowid AS candidate, ${SUMMARY_HIT}, 0 AS rank, (${SUMMARY_FILTER}) AS in_scope,
         CASE WHEN ${SUMMARY_FILTER} THEN s.content END AS text
       FROM (SELECT rowid FROM summaries_fts WHERE summaries_fts MATCH ? AND rowid < ? ${part.lowerBound} ORDER BY rowid DESC LIMIT ?) c
       CROSS JOIN summaries s ON s.id = c.rowid
       ORDER BY c.rowid DESC`,
      ...filterParams(filter), ...filterParams(filter), part.match, below ?? MAX_TIME, pageSize,
    );
    return part.page(candidatePage(rows, pageSize, toSummaryHit, (row) => row.latest_at));
  }

  async scanMessages(filter: TextFilter, window: ScanWindow, contains: ContainsFilter | null): Promise<MessageHitRow[]> {
    const [clause, containsParams] = containsClause("m.content", contains);
    const seqFrom = filter.seqRange?.from ?? MIN_TIME;
    const seqTo = filter.seqRange?.to ?? MAX_TIME;
    const rows = window.by === "seq"
      ? this.db.rows<MessageHitSql & { content: string; spans: string | null }>(
          `SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans, 0 AS rank FROM messages m
           WHERE m.conversation_id = ? AND m.seq >= ? AND m.seq < ? AND m.seq BETWEEN ? AND ?
             AND m.created_at >= ? AND m.created_at < ? ${clause}
           ORDER BY m.seq DESC`,
          window.conversationId, window.from, window.to, seqFrom, seqTo, filter.since ?? MIN_TIME, filter.before ?? MAX_TIME,
          ...containsParams,
        )
      : this.db.rows<MessageHitSql & { content: string; spans: string | null }>(
          `SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans, 0 AS rank FROM messages m
           WHERE m.message_id >= ? AND m.message_id < ? AND ${MESSAGE_FILTER} AND m.seq BETWEEN ? AND ? ${clause}
           ORDER BY m.message_id DESC`,
          window.from, window.to, ...filterParams(filter), seqFrom, seqTo, ...containsParams,
        );
    return rows.map((row) => ({ ...toMessageHit(row), text: toSearchableText(row.content, row.spans) }));
  }

  async scanSummaries(filter: SearchFilter, window: { from: number; to: number }, contains: ContainsFilter | null): Promise<SummaryHitRow[]> {
    const [clause, containsParams] = containsClause("s.content", contains);
    // Scopes with fewer summaries than the window has ids are read from their own (summaries_conversation_seq: the
    // filter without its `+`), others by the window's ids. By the ids alone a regex in a conversation with no summary
    // read every summary of the window (4,589 of another conversation at 10M, 7.6 ms); by the conversation alone the
    // conversation with 4,589 read all of them for each window of 1,000 ids (2.7 ms a window against 1.2).
    const fromOwnSummaries = scopeRows(this.db, "summaries_fts", filter.conversationIds) < window.to - window.from;
    return this.db
      .all<SummaryHitSql>(
        `SELECT ${SUMMARY_HIT}, s.content AS text, 0 AS rank FROM summaries s
         WHERE s.id >= ? AND s.id < ? AND ${fromOwnSummaries ? SUMMARY_FILTER.slice(1) : SUMMARY_FILTER} ${clause}
         ORDER BY s.id DESC`,
        window.from, window.to, ...filterParams(filter), ...containsParams,
      )
      .map(toSummaryHit);
  }

  fileTextCandidates(
    prepared: PreparedTextQuery, filter: SearchFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<FileChunkHitRow>> {
    return this.files.textCandidates(prepared, filter, selection, window, limit);
  }

  fileCandidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<FileChunkHitRow>> {
    return this.files.candidates(filter, requirement, below, pageSize);
  }

  scanFileChunks(filter: SearchFilter, window: { from: number; to: number }): Promise<FileChunkHitRow[]> {
    return this.files.scan(filter, window);
  }

  maxFileChunkId(): Promise<number> {
    return this.files.maxChunkId();
  }

  unindexedFiles(filter: SearchFilter, limit: number): Promise<{ files: UnindexedFile[]; unsearchable: UnsearchableFile[] }> {
    return this.files.unindexed(filter, limit);
  }

  fileReferences(files: readonly { fileId: FileId; conversationId: ConversationId; messageId: MessageId | null }[]): Promise<Map<FileId, FileReference | null>> {
    return this.files.references(files);
  }

  async maxMessageSeq(conversationId: ConversationId): Promise<number> {
    return this.db.get<{ top: number | null }>("SELECT max(seq) AS top FROM messages WHERE conversation_id = ?", conversationId)?.top ?? 0;
  }

  async maxMessageId(): Promise<number> {
    return this.db.get<{ top: number | null }>("SELECT max(message_id) AS top FROM messages")?.top ?? 0;
  }

  async maxSummaryRowId(): Promise<number> {
    return this.db.get<{ top: number | null }>("SELECT max(id) AS top FROM summaries")?.top ?? 0;
  }

  /**
   * Cost per seq: one probe of summaries_conversation_seq for the nearest leaf, then one probe of
   * summary_parents_parent per level climbed (a handful). It never reads the context items, whose count grows
   * with the raw history.
   */
  async coveringSummaryIds(conversationId: ConversationId, seqs: number[]): Promise<Map<number, SummaryId | null>> {
    const covering = new Map<number, SummaryId | null>();
    for (const seq of new Set(seqs)) {
      const leaf = this.db.get<{ id: number; seq_end: number }>(
        `SELECT id, seq_end FROM summaries WHERE conversation_id = ? AND seq_start <= ? AND kind = 'leaf'
         ORDER BY seq_start DESC LIMIT 1`,
        conversationId, seq,
      );
      if (!leaf || leaf.seq_end < seq) {
        covering.set(seq, null);
        continue;
      }
      let rowId = leaf.id;
      for (let level = 0; level < MAX_DAG_DEPTH; level++) {
        const parent = this.db.get<{ summary_id: number }>("SELECT summary_id FROM summary_parents WHERE parent_summary_id = ? LIMIT 1", rowId);
        if (!parent) break;
        rowId = parent.summary_id;
      }
      covering.set(seq, this.db.get<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE id = ?", rowId)?.summary_id ?? null);
    }
    return covering;
  }

  async summaryLineage(summaryRowId: number, conversationId: ConversationId, messageLimit: number): Promise<SummaryLineage> {
    const children = this.db.all<{ summary_id: string }>(
      `SELECT s.summary_id FROM summary_parents p JOIN summaries s ON s.id = p.summary_id
       WHERE p.parent_summary_id = ? ORDER BY s.id`,
      summaryRowId,
    );
    const messages = this.db.all<{ message_id: number }>(
      "SELECT message_id FROM summary_messages WHERE summary_id = ? ORDER BY ordinal LIMIT ?", summaryRowId, messageLimit,
    );
    const parents = this.db.all<{ parent_summary_id: number }>(
      "SELECT parent_summary_id FROM summary_parents WHERE summary_id = ? ORDER BY ordinal", summaryRowId,
    );
    const inContext = this.db.get(
      "SELECT 1 AS found FROM context_items WHERE conversation_id = ? AND summary_id = ? LIMIT 1", conversationId, summaryRowId,
    );
    return {
      childSummaryIds: children.map((row) => row.summary_id),
      sourceMessageIds: messages.map((row) => row.message_id),
      parentRowIds: parents.map((row) => row.parent_summary_id),
      inContext: inContext !== undefined,
      archivedSources: await this.archives.archivedSourcesOf(summaryRowId),
    };
  }

  async summaryLineageById(summaryId: SummaryId, messageLimit: number): Promise<SummaryLineage | null> {
    const summary = this.db.get<{ id: number; conversation_id: number }>("SELECT id, conversation_id FROM summaries WHERE summary_id = ?", summaryId);
    return summary ? this.summaryLineage(summary.id, summary.conversation_id, messageLimit) : null;
  }

  async archivedIdLocation(id: string): Promise<ArchivedLocation | null> {
    return this.archives.archivedIdLocation(id);
  }

  async archivesOf(conversationIds: ConversationId[], limit: number): Promise<ArchivedLocation[]> {
    return this.archives.archivesOf(conversationIds, limit);
  }

  async getMessageTexts(messageIds: MessageId[]): Promise<MessageText[]> {
    if (messageIds.length === 0) return [];
    const rows = this.db.all<MessageHitSql & { content: string; token_count: number; archive_path: string | null }>(
      `SELECT ${MESSAGE_HIT}, m.content, m.token_count, a.path AS archive_path FROM messages m
       LEFT JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE m.message_id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(messageIds),
    );
    const byId = new Map(rows.map((row) => [row.message_id, row]));
    return messageIds.flatMap((id) => {
      const row = byId.get(id);
      return row
        ? [{ messageId: row.message_id, conversationId: row.conversation_id, seq: row.seq, role: row.role,
            createdAt: row.created_at, ...textOf(row) }]
        : [];
    });
  }

  async listRecallConversationIds(agentId: string | null): Promise<ConversationId[]> {
    // Neither expansion helpers' sessions nor conversations retention is deleting (their archive says where they went).
    const notExpansion = "(session_key IS NULL OR instr(session_key, ?) = 0) AND coalesce(archive_reason, '') <> 'lcm-retention:deleting'";
    const rows = agentId === null
      ? this.db.all<{ conversation_id: number }>(
          `SELECT conversation_id FROM conversations WHERE ${notExpansion} ORDER BY conversation_id`, EXPANSION_SESSION_PREFIX,
        )
      : this.db.all<{ conversation_id: number }>(
          `SELECT conversation_id FROM conversations WHERE agent_id = ? AND ${notExpansion} ORDER BY conversation_id`,
          agentId, EXPANSION_SESSION_PREFIX,
        );
    return rows.map((row) => row.conversation_id);
  }

  async findConversationBySessionKey(agentId: string, sessionKey: string): Promise<ConversationRecord | null> {
    const row = this.db.get<ConversationRow>(
      "SELECT * FROM conversations WHERE agent_id = ? AND session_key = ? ORDER BY archived_at IS NOT NULL, updated_at DESC LIMIT 1",
      agentId, sessionKey,
    );
    return row ? toConversation(row) : null;
  }

  async refreshStatistics(now: number, maxAgeMs: number): Promise<void> {
    if (this.db.readOnly) return; // optimize may write statistics; plans do not depend on them (below)
    const last = statisticsRefreshedAt.get(this.db);
    if (last !== undefined && now - last < maxAgeMs) return;
    statisticsRefreshedAt.set(this.db, now);
    try {
      // analysis_limit bounds the work of any ANALYZE that optimize decides to run.
      this.db.raw.exec("PRAGMA analysis_limit = 1000; PRAGMA optimize;");
    } catch (error) {
      // Another writer holds the lock: statistics stay as they are and the next search after maxAgeMs retries.
      // Plans do not depend on them (the FTS index drives every search), so searching on is safe.
      if (!isBusyError(error)) throw error;
      statisticsRefreshedAt.delete(this.db);
    }
  }
}

/** A message's text, or for one retention archived (a stub since schema 10) where its text is. */
function textOf(row: { message_id: number; conversation_id: number; seq: number; content: string; token_count: number; archive_path: string | null }): { content: string; tokenCount: number } {
  if (row.archive_path === null) return { content: row.content, tokenCount: row.token_count };
  const content = `[archived by retention: message ${row.message_id} (seq ${row.seq}) of conversation ${row.conversation_id} is in ` +
    `${row.archive_path} (gzip JSONL, the line with "messageId":${row.message_id}); only the summaries above it remain here]`;
  return { content, tokenCount: Math.ceil(content.length / 4) };
}

/** Runs `body`'s reads on one snapshot of the file (a deferred transaction, unless one is open already). */
function readTogether<T>(db: Database, body: () => T): T {
  if (db.raw.isTransaction) return body();
  db.raw.exec("BEGIN");
  try {
    return body();
  } finally {
    db.raw.exec("COMMIT");
  }
}

/**
 * A page of regex candidates below `below` (`through`: the index's watermark): through the conversations' tokens (search-scope.ts) when the filter names
 * few enough conversations and their rows are under SCOPED_REGEX_SHARE of the index's, then, from where the tokens
 * start down, without; `page` makes a scoped page that ran out continue below the tokens. A scoped read of a file
 * indexed with tokens from row 1 needs no lower bound, and gets none: a lower bound costs FTS5 the terms' whole doclists
 * (fts-window.ts). Below the mark of an upgraded file, rows indexed again after a deletion may carry tokens: there it
 * is kept, so no row is read twice.
 */
function scopedPart(
  db: Database, table: IndexTable, through: number, match: string, filter: SearchFilter, below: number | null,
): { match: string; lowerBound: string; page: <Row>(page: CandidatePage<Row>) => CandidatePage<Row> } {
  const unscoped = { match, lowerBound: "", page: <Row>(page: CandidatePage<Row>) => page };
  const scope = scopeExpression(filter.conversationIds);
  const scopedFromId = scopedFrom(db, table);
  const top = Math.min((below ?? MAX_TIME) - 1, through);
  if (scope === null || top < scopedFromId || scopeShare(db, table, filter.conversationIds, through) >= SCOPED_REGEX_SHARE) return unscoped;
  return {
    match: `(${match}) AND ${scope}`,
    // An integer read from the file, not user input.
    lowerBound: scopedFromId > 1 ? `AND rowid >= ${Math.trunc(scopedFromId)}` : "",
    page: (page) => (page.next === null && scopedFromId > 1 ? { ...page, next: scopedFromId } : page),
  };
}
