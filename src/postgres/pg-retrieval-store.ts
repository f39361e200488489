/**
 * The PostgreSQL side of RetrievalStore: full-text candidates from the tsvector indexes (pg-text-search.ts), regex
 * candidates from the index requirement compiled to a tsquery over the words, scans of the rows not indexed yet, and
 * the reads of lcm_describe and lcm_expand. Every search statement runs under a statement timeout
 * (pg-search-reader.ts). Index reads stay at or below the watermark the caller was given (`indexedThrough`, the
 * regex's `below`): rows above it are the caller's to scan, even those indexed out of order, so none is read twice.
 */
import type { ConversationId, ConversationRecord, FileId, MessageId, SummaryId } from "../records.js";
import type { QueryTerm } from "../text/text-query.js";
import { EXPANSION_SESSION_PREFIX } from "../store/grant-store.js";
import type { ArchivedLocation } from "../store/retention-store.js";
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
import { fromPgText, type PgDatabase, toPgText } from "./pg-database.js";
import { PgFileIndex } from "./pg-file-index.js";
import { PgFileRetrieval } from "./pg-file-retrieval.js";
import { PgSearchIndex } from "./pg-search-index.js";
import { PgBacklogBlocks } from "./pg-backlog-blocks.js";
import { argumentSpansSql, toSearchableText } from "./pg-searchable-text.js";
import { PgSearchReader } from "./pg-search-reader.js";
import { PgTextSearch, requirementQuery } from "./pg-text-search.js";
import { PgRecallReads } from "./pg-recall-reads.js";
import { PgMessageCandidates, selectionShare } from "./pg-message-candidates.js";
import {
  candidateIdsSql,
  readCandidates,
  candidatePage,
  containsClause,
  MAX_TIME,
  MESSAGE_HIT,
  messageFilter,
  MIN_TIME,
  newestFirstOrder,
  newestFirstRange,
  LARGE_DOCUMENT_COST,
  probeFor,
  newestFirstSql,
  SqlParams,
  SUMMARY_HIT,
  summaryFilter,
  toMessageHit,
  toSummaryHit,
  type MessageHitSql,
  type SummaryHitSql,
} from "./pg-retrieval-sql.js";

/** A backlog of at most this many rows is indexed by the search that finds it; a larger one is left to maintenance. */
export const SEARCH_INDEXES_UP_TO = 400;

type MessageTextSql = MessageHitSql & { content: string; spans: string | null };

export class PgRetrievalStore implements RetrievalStore {
  /** RetrievalStore.scanWindowMax: a window of 65,536 messages filtered on the server, about 21 MB of text at 1M. */
  readonly scanWindowMax = 65_536;
  private readonly index: PgSearchIndex;
  private readonly reader: PgSearchReader;
  private readonly text: PgTextSearch;
  private readonly files: PgFileRetrieval;
  private readonly recall: PgRecallReads;
  private readonly messages: PgMessageCandidates;
  private readonly blocks: PgBacklogBlocks;

  /** `statementTimeoutMs`: how long one search statement may run (default SEARCH_STATEMENT_TIMEOUT_MS). */
  constructor(db: PgDatabase, options: { statementTimeoutMs?: number; index?: PgSearchIndex } = {}) {
    this.index = options.index ?? new PgSearchIndex(db, new PgFileIndex(db));
    this.reader = new PgSearchReader(db, options.statementTimeoutMs);
    this.text = new PgTextSearch(this.reader);
    this.files = new PgFileRetrieval(this.reader, this.index.files, this.text);
    this.recall = new PgRecallReads(db);
    this.messages = new PgMessageCandidates(this.reader);
    this.blocks = new PgBacklogBlocks(db);
  }

  async prepareText(source: TextSource, terms: QueryTerm[]): Promise<PreparedTextQuery> {
    if (source === "files") return this.files.prepare(terms);
    // The index's state is read with the query's words (one statement). When the search indexes a small backlog
    // itself, the words are looked up again after it (the dictionary is written with the index).
    const first = await this.text.prepare(source, terms, SEARCH_INDEXES_UP_TO);
    const indexed = await this.index.catchUpAfter(source, first.state, SEARCH_INDEXES_UP_TO);
    return indexed ? (await this.text.prepare(source, terms, SEARCH_INDEXES_UP_TO)).prepared : first.prepared;
  }

  async messageTextCandidates(
    prepared: PreparedTextQuery, filter: TextFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<MessageHitRow>> {
    const query = this.text.expression(prepared, selection);
    const indexed = { from: window.from, to: Math.min(window.to, prepared.indexedThrough) };
    const rows = await this.messages.read(query, { share: selectionShare(prepared, selection), documents: prepared.documents }, filter, indexed, limit);
    return { rows, limitReached: rows.length >= limit };
  }

  async summaryTextCandidates(
    prepared: PreparedTextQuery, filter: SearchFilter, selection: TextSelection, window: { from: number; to: number }, limit: number,
  ): Promise<TextCandidates<SummaryHitRow>> {
    const query = this.text.expression(prepared, selection);
    const params = new SqlParams();
    const scope = summaryFilter(params, filter);
    const tsquery = params.add(query);
    const sql = newestFirstSql(params, window.from, Math.min(window.to, prepared.indexedThrough), limit, "id", (from, to, order, wanted) =>
      `SELECT ${SUMMARY_HIT}, s.content, x.word_count
       FROM summary_search x JOIN summaries s ON s.id = x.summary_id
       WHERE x.document @@ ${tsquery}::tsquery AND ${newestFirstRange("x.summary_id", from, to, order)} AND ${scope}
       ORDER BY ${newestFirstOrder("x.summary_id", order)} LIMIT ${wanted}`, probeFor(selectionShare(prepared, selection), limit, 0, LARGE_DOCUMENT_COST));
    const rows = sql === null ? [] : await this.reader.rows<SummaryHitSql & { content: string; word_count: number }>("summary candidates", sql, params.values);
    return {
      rows: rows.map((row) => ({ ...toSummaryHit(row, fromPgText(row.content)), wordCount: row.word_count })),
      limitReached: rows.length >= limit,
    };
  }

  async indexState(): Promise<IndexState> {
    const [messages, summaries] = await Promise.all([this.index.catchUp("messages", SEARCH_INDEXES_UP_TO), this.index.catchUp("summaries", SEARCH_INDEXES_UP_TO)]);
    return {
      messagesThrough: messages.through, summariesThrough: summaries.through, messagesNewest: messages.newest, summariesNewest: summaries.newest,
      ...(messages.blocks > messages.through ? { messagesBlocksThrough: messages.blocks } : {}),
    };
  }

  backlogBlockRows(
    filter: TextFilter, anyOf: readonly string[], contains: ContainsFilter | null, window: { from: number; to: number }, maxRows: number,
  ): Promise<{ rows: MessageHitRow[]; next: number | null } | null> {
    return this.blocks.rows(this.reader, filter, anyOf, contains, window, maxRows);
  }

  async messageCandidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<MessageHitRow>> {
    const query = requirementQuery(requirement);
    if (query === null) return { rows: [], next: null, oldestExamined: null };
    const rows = await readCandidates((below ?? MAX_TIME) - 1, pageSize, async (window) => {
      const params = new SqlParams();
      const scope = messageFilter(params, filter);
      const ids = candidateIdsSql(params, "message_search", "message_id", params.add(query), window);
      return ids === null ? [] : this.reader.rows<MessageHitSql & { candidate: number; in_scope: boolean; content: string | null; spans: string | null }>(
        "message regex candidates",
        `SELECT c.message_id AS candidate, ${MESSAGE_HIT}, (${scope}) AS in_scope,
           CASE WHEN ${scope} THEN m.content END AS content, CASE WHEN ${scope} THEN ${argumentSpansSql("m")} END AS spans
         FROM (${ids}) c JOIN messages m ON m.message_id = c.message_id
         ORDER BY c.message_id DESC`,
        params.values,
      );
    });
    return candidatePage(rows, pageSize, (row) => toMessageHit(row, row.content === null ? "" : toSearchableText(row.content, row.spans)), (row) => row.created_at);
  }

  async summaryCandidates(filter: SearchFilter, requirement: IndexRequirement, below: number | null, pageSize: number): Promise<CandidatePage<SummaryHitRow>> {
    const query = requirementQuery(requirement);
    if (query === null) return { rows: [], next: null, oldestExamined: null };
    const rows = await readCandidates((below ?? MAX_TIME) - 1, pageSize, async (window) => {
      const params = new SqlParams();
      const scope = summaryFilter(params, filter);
      const ids = candidateIdsSql(params, "summary_search", "summary_id", params.add(query), window);
      return ids === null ? [] : this.reader.rows<SummaryHitSql & { candidate: number; in_scope: boolean; content: string | null }>(
        "summary regex candidates",
        `SELECT c.summary_id AS candidate, ${SUMMARY_HIT}, (${scope}) AS in_scope, CASE WHEN ${scope} THEN s.content END AS content
         FROM (${ids}) c JOIN summaries s ON s.id = c.summary_id
         ORDER BY c.summary_id DESC`,
        params.values,
      );
    });
    return candidatePage(rows, pageSize, (row) => toSummaryHit(row, row.content === null ? "" : fromPgText(row.content)), (row) => row.latest_at);
  }

  async messageTermsEndingWith(fragments: readonly string[], limit: number): Promise<Map<string, string[] | null>> {
    const terms = new Map<string, string[] | null>();
    for (const fragment of fragments) {
      // Words ending with the fragment are the reversed keys that start with it reversed: one index range.
      const start = [...fragment].reverse().join("");
      const rows = await this.reader.rows<{ term: string }>(
        "term dictionary", "SELECT term FROM search_terms WHERE reversed LIKE $1 LIMIT $2",
        [`${start.replace(/[\\%_]/g, (character) => `\\${character}`)}%`, limit + 1],
      );
      terms.set(fragment, rows.length > limit ? null : rows.map((row) => row.term));
    }
    return terms;
  }

  async scanMessages(filter: TextFilter, window: ScanWindow, contains: ContainsFilter | null): Promise<MessageHitRow[]> {
    const params = new SqlParams();
    const seqRange = `m.seq BETWEEN ${params.add(filter.seqRange?.from ?? MIN_TIME)} AND ${params.add(filter.seqRange?.to ?? MAX_TIME)}`;
    const sql = window.by === "seq"
      ? `SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans FROM messages m
         WHERE m.conversation_id = ${params.add(window.conversationId)} AND m.seq >= ${params.add(window.from)} AND m.seq < ${params.add(window.to)}
           AND ${seqRange} AND ${messageFilter(params, filter)} ${containsClause(params, "m.content", contains)}
         ORDER BY m.seq DESC`
      : `SELECT ${MESSAGE_HIT}, m.content, ${argumentSpansSql("m")} AS spans FROM messages m
         WHERE m.message_id >= ${params.add(window.from)} AND m.message_id < ${params.add(window.to)}
           AND ${seqRange} AND ${messageFilter(params, filter)} ${containsClause(params, "m.content", contains)}
         ORDER BY m.message_id DESC`;
    const rows = await this.reader.rows<MessageTextSql>("message scan", sql, params.values);
    return rows.map((row) => toMessageHit(row, toSearchableText(row.content, row.spans)));
  }

  async scanSummaries(filter: SearchFilter, window: { from: number; to: number }, contains: ContainsFilter | null): Promise<SummaryHitRow[]> {
    const params = new SqlParams();
    const rows = await this.reader.rows<SummaryHitSql & { content: string }>(
      "summary scan",
      `SELECT ${SUMMARY_HIT}, s.content FROM summaries s
       WHERE s.id >= ${params.add(window.from)} AND s.id < ${params.add(window.to)} AND ${summaryFilter(params, filter)}
         ${containsClause(params, "s.content", contains)}
       ORDER BY s.id DESC`,
      params.values,
    );
    return rows.map((row) => toSummaryHit(row, fromPgText(row.content)));
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

  maxMessageSeq(conversationId: ConversationId): Promise<number> {
    return this.recall.maxMessageSeq(conversationId);
  }

  async maxMessageId(): Promise<number> {
    return (await this.index.through("messages")).newest;
  }

  async maxSummaryRowId(): Promise<number> {
    return (await this.index.through("summaries")).newest;
  }

  coveringSummaryIds(conversationId: ConversationId, seqs: number[]): Promise<Map<number, SummaryId | null>> {
    return this.recall.coveringSummaryIds(conversationId, seqs);
  }

  summaryLineage(summaryRowId: number, conversationId: ConversationId, messageLimit: number): Promise<SummaryLineage> {
    return this.recall.summaryLineage(summaryRowId, conversationId, messageLimit);
  }

  summaryLineageById(summaryId: SummaryId, messageLimit: number): Promise<SummaryLineage | null> {
    return this.recall.summaryLineageById(summaryId, messageLimit);
  }

  getMessageTexts(messageIds: MessageId[]): Promise<MessageText[]> {
    return this.recall.getMessageTexts(messageIds);
  }

  listRecallConversationIds(agentId: string | null): Promise<ConversationId[]> {
    return this.recall.listRecallConversationIds(agentId === null ? null : toPgText(agentId), EXPANSION_SESSION_PREFIX);
  }

  findConversationBySessionKey(agentId: string, sessionKey: string): Promise<ConversationRecord | null> {
    return this.recall.findConversationBySessionKey(agentId, sessionKey);
  }

  /** PostgreSQL's autovacuum keeps the planner's statistics (ANALYZE after enough changed rows): nothing to do here. */
  async refreshStatistics(): Promise<void> {}

  archivedIdLocation(id: string): Promise<ArchivedLocation | null> {
    return this.recall.archivedIdLocation(id);
  }

  archivesOf(conversationIds: ConversationId[], limit: number): Promise<ArchivedLocation[]> {
    return this.recall.archivesOf(conversationIds, limit);
  }
}
