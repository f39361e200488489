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
import { isBusyError, reverseText, type Database } from "../../db/database.js";
import type { ConversationId, ConversationRecord, MessageId, SummaryId, SummaryKind } from "../../records.js";
import { EXPANSION_SESSION_PREFIX } from "../grant-store.js";
import type {
  CandidatePage,
  FullTextQuery,
  MessageHitRow,
  MessageText,
  RetrievalStore,
  ScanWindow,
  SearchFilter,
  SummaryHitRow,
  SummaryLineage,
} from "../retrieval-store.js";
import { type ConversationRow, toConversation } from "./rows.js";
import { SqliteSearchIndex } from "./sqlite-search-index.js";
import { bm25Scores, type CorpusStats, matchTerms, termMatch, type MatchTerm } from "../../retrieval/relevance.js";
import {
  candidatePage,
  containsClause,
  filterParams,
  MAX_TIME,
  MESSAGE_FILTER,
  MESSAGE_HIT,
  MESSAGES_BY_RECENCY,
  MESSAGES_BY_RELEVANCE,
  MESSAGE_CANDIDATES_WITH_TEXT,
  COMMON_TERM_DOCUMENTS,
  TERM_FREQUENCY,
  MESSAGE_INDEX_AVERAGES,
  readVarints,
  MIN_TIME,
  SNIPPET,
  SUMMARIES_BY_RECENCY,
  SUMMARIES_BY_RELEVANCE,
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
/** Indexed messages a regex search adds to the term dictionary itself before using it (~25 ms at 1M messages). */
const TERMS_CAUGHT_UP_BY_SEARCH = 1_000;

/** What ranking a query with a very common word needs: its terms, their document frequencies, the corpus. */
interface CommonTermStats extends CorpusStats {
  terms: MatchTerm[];
  frequencies: number[];
}

export class SqliteRetrievalStore implements RetrievalStore {
  private readonly index: SqliteSearchIndex;

  constructor(private readonly db: Database) {
    this.index = new SqliteSearchIndex(db);
  }

  async searchMessages(query: FullTextQuery): Promise<MessageHitRow[]> {
    // Messages reach the full-text index in batches: index the newest ones first so no stored message is missed.
    await this.index.indexPending();
    if (query.sort === "relevance") {
      const common = this.commonTermStats(query.match);
      if (common) return this.rankCommonTermMatches(query, common);
    }
    const rows = this.db.all<MessageHitSql>(
      query.sort === "relevance" ? MESSAGES_BY_RELEVANCE : MESSAGES_BY_RECENCY, query.match, ...filterParams(query),
      query.seqRange?.from ?? MIN_TIME, query.seqRange?.to ?? MAX_TIME, query.limit,
    );
    if (query.sort === "relevance") this.addSnippets("messages_fts", query.match, rows, (row) => row.message_id);
    return rows.map(toMessageHit);
  }

  async searchSummaries(query: FullTextQuery): Promise<SummaryHitRow[]> {
    const rows = this.db.all<SummaryHitSql>(
      query.sort === "relevance" ? SUMMARIES_BY_RELEVANCE : SUMMARIES_BY_RECENCY, query.match, ...filterParams(query), query.limit,
    );
    if (query.sort === "relevance") this.addSnippets("summaries_fts", query.match, rows, (row) => row.id);
    return rows.map(toSummaryHit);
  }

  /**
   * Document frequencies of the query's terms, read from at most the newest COMMON_TERM_DOCUMENTS matches of
   * each; null unless some term is found in more messages than that (FTS5's bm25() then serves well).
   */
  private commonTermStats(match: string): CommonTermStats | null {
    const terms = matchTerms(match);
    const [documents, totalTokens] = readVarints(this.db.get<{ block: Uint8Array | null }>(MESSAGE_INDEX_AVERAGES)?.block ?? null, 2) as [number, number];
    const frequencies: number[] = [];
    let isCommon = false;
    for (const term of terms) {
      const row = this.db.get<{ count: number; oldest: number | null }>(TERM_FREQUENCY, termMatch(term))!;
      if (row.count < COMMON_TERM_DOCUMENTS || row.oldest === null) {
        frequencies.push(row.count);
        continue;
      }
      // Found in the whole window: scale its density over the newest ids to the whole index.
      isCommon = true;
      frequencies.push(Math.min(documents, Math.round((row.count * documents) / Math.max(1, documents - row.oldest + 1))));
    }
    return isCommon ? { terms, frequencies, documents, averageLength: totalTokens / Math.max(1, documents) } : null;
  }

  /**
   * Relevance over the newest COMMON_RELEVANCE_CANDIDATES matches, BM25 computed here (retrieval/relevance.ts).
   * With alternatives (OR), the newest matches of each less common term are candidates too: otherwise a rare
   * word's messages, the likeliest to rank first, would be crowded out of the window by a common word's.
   */
  private rankCommonTermMatches(query: FullTextQuery, common: CommonTermStats): MessageHitRow[] {
    const candidates = (match: string) =>
      this.db.rows<MessageHitSql & { size: Uint8Array | null }>(
        MESSAGE_CANDIDATES_WITH_TEXT, match, ...filterParams(query), query.seqRange?.from ?? MIN_TIME, query.seqRange?.to ?? MAX_TIME,
      );
    const byId = new Map(candidates(query.match).map((row) => [row.message_id, row]));
    if (query.match.includes(" OR ")) {
      common.terms.forEach((term, index) => {
        if (common.frequencies[index]! >= COMMON_TERM_DOCUMENTS) return;
        for (const row of candidates(`(${query.match}) AND ${termMatch(term)}`)) byId.set(row.message_id, row);
      });
    }
    const rows = [...byId.values()];
    const documents = rows.map((row) => ({ text: row.text ?? "", length: readVarints(row.size, 1)[0]! }));
    const scores = bm25Scores(documents, common.terms, common.frequencies, common);
    const ranked = rows
      .map((_, index) => index)
      .sort((left, right) => scores[right]! - scores[left]! || rows[right]!.message_id - rows[left]!.message_id)
      .slice(0, query.limit)
      .map((index) => ({ ...rows[index]!, text: null as string | null, rank: -scores[index]! }));
    this.addSnippets("messages_fts", query.match, ranked, (row) => row.message_id);
    return ranked.map(toMessageHit);
  }

  /** Snippets for the few ranked winners only (a snippet reads and tokenizes the row's content). */
  private addSnippets<Row extends { text: string | null }>(table: "messages_fts" | "summaries_fts", match: string, rows: Row[], idOf: (row: Row) => number): void {
    if (rows.length === 0) return;
    const snippets = this.db.all<{ id: number; text: string }>(
      `SELECT rowid AS id, snippet(${table}, 0, ${SNIPPET}) AS text FROM ${table}
       WHERE ${table} MATCH ? AND rowid IN (SELECT value FROM json_each(?))`,
      match, JSON.stringify(rows.map(idOf)),
    );
    const byId = new Map(snippets.map((snippet) => [snippet.id, snippet.text]));
    for (const row of rows) row.text = byId.get(idOf(row)) ?? "";
  }

  async messageCandidates(filter: SearchFilter, match: string, below: number | null, pageSize: number): Promise<CandidatePage<MessageHitRow>> {
    if (below === null) await this.index.indexPending();
    const rows = this.db.all<Candidate<MessageHitSql>>(
      `SELECT c.rowid AS candidate, ${MESSAGE_HIT}, 0 AS rank, (${MESSAGE_FILTER}) AS in_scope,
         CASE WHEN ${MESSAGE_FILTER} THEN m.content END AS text
       FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?) c
       CROSS JOIN messages m ON m.message_id = c.rowid
       ORDER BY c.rowid DESC`,
      ...filterParams(filter), ...filterParams(filter), match, below ?? MAX_TIME, pageSize,
    );
    return candidatePage(rows, pageSize, toMessageHit, (row) => row.created_at);
  }

  async messageTermsEndingWith(fragments: readonly string[], limit: number): Promise<Map<string, string[] | null> | null> {
    await this.index.indexPending();
    // Maintenance keeps the dictionary up with the index; a search closes a small gap itself (a few chunks) and
    // otherwise does without it rather than wait.
    if (this.index.uncoveredNow() <= TERMS_CAUGHT_UP_BY_SEARCH) await this.index.extendTerms(TERMS_CAUGHT_UP_BY_SEARCH);
    if (!this.index.termDictionaryComplete()) return null;
    const terms = new Map<string, string[] | null>();
    for (const fragment of fragments) {
      // Terms ending with the fragment are the reversed keys that start with it reversed: one index range.
      const start = reverseText(fragment);
      const end = start.slice(0, -1) + String.fromCharCode(start.charCodeAt(start.length - 1) + 1);
      const rows = this.db.tuples<[string]>(
        "SELECT term FROM search_terms WHERE reversed >= ? AND reversed < ? LIMIT ?", start, end, limit + 1,
      );
      terms.set(fragment, rows.length > limit ? null : rows.map(([term]) => term));
    }
    return terms;
  }

  async summaryCandidates(filter: SearchFilter, match: string, below: number | null, pageSize: number): Promise<CandidatePage<SummaryHitRow>> {
    const rows = this.db.all<Candidate<SummaryHitSql>>(
      `SELECT c.rowid AS candidate, ${SUMMARY_HIT}, 0 AS rank, (${SUMMARY_FILTER}) AS in_scope,
         CASE WHEN ${SUMMARY_FILTER} THEN s.content END AS text
       FROM (SELECT rowid FROM summaries_fts WHERE summaries_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?) c
       CROSS JOIN summaries s ON s.id = c.rowid
       ORDER BY c.rowid DESC`,
      ...filterParams(filter), ...filterParams(filter), match, below ?? MAX_TIME, pageSize,
    );
    return candidatePage(rows, pageSize, toSummaryHit, (row) => row.latest_at);
  }

  async scanMessages(filter: SearchFilter, window: ScanWindow, containsAny: string[] | null): Promise<MessageHitRow[]> {
    const [contains, containsParams] = containsClause("m.content", containsAny);
    if (window.by === "seq") {
      return this.db
        .all<MessageHitSql>(
          `SELECT ${MESSAGE_HIT}, m.content AS text, 0 AS rank FROM messages m
           WHERE m.conversation_id = ? AND m.seq >= ? AND m.seq < ? AND m.created_at >= ? AND m.created_at < ? ${contains}
           ORDER BY m.seq DESC`,
          window.conversationId, window.from, window.to, filter.since ?? MIN_TIME, filter.before ?? MAX_TIME, ...containsParams,
        )
        .map(toMessageHit);
    }
    return this.db
      .all<MessageHitSql>(
        `SELECT ${MESSAGE_HIT}, m.content AS text, 0 AS rank FROM messages m
         WHERE m.message_id >= ? AND m.message_id < ? AND ${MESSAGE_FILTER} ${contains}
         ORDER BY m.message_id DESC`,
        window.from, window.to, ...filterParams(filter), ...containsParams,
      )
      .map(toMessageHit);
  }

  async scanSummaries(filter: SearchFilter, window: { from: number; to: number }, containsAny: string[] | null): Promise<SummaryHitRow[]> {
    const [contains, containsParams] = containsClause("s.content", containsAny);
    return this.db
      .all<SummaryHitSql>(
        `SELECT ${SUMMARY_HIT}, s.content AS text, 0 AS rank FROM summaries s
         WHERE s.id >= ? AND s.id < ? AND ${SUMMARY_FILTER} ${contains}
         ORDER BY s.id DESC`,
        window.from, window.to, ...filterParams(filter), ...containsParams,
      )
      .map(toSummaryHit);
  }

  async maxMessageSeq(conversationId: ConversationId): Promise<number> {
    return this.db.get<{ top: number | null }>("SELECT max(seq) AS top FROM messages WHERE conversation_id = ?", conversationId)?.top ?? 0;
  }

  async maxMessageRowId(): Promise<number> {
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
    };
  }

  async getMessageTexts(messageIds: MessageId[]): Promise<MessageText[]> {
    if (messageIds.length === 0) return [];
    const rows = this.db.all<MessageHitSql & { content: string; token_count: number }>(
      `SELECT ${MESSAGE_HIT}, m.content, m.token_count FROM messages m
       WHERE m.message_id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(messageIds),
    );
    const byId = new Map(rows.map((row) => [row.message_id, row]));
    return messageIds.flatMap((id) => {
      const row = byId.get(id);
      return row
        ? [{ messageId: row.message_id, conversationId: row.conversation_id, seq: row.seq, role: row.role,
            createdAt: row.created_at, content: row.content, tokenCount: row.token_count }]
        : [];
    });
  }

  async listRecallConversationIds(agentId: string | null): Promise<ConversationId[]> {
    const notExpansion = "(session_key IS NULL OR instr(session_key, ?) = 0)";
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
      "SELECT * FROM conversations WHERE agent_id = ? AND session_key = ? ORDER BY updated_at DESC LIMIT 1", agentId, sessionKey,
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
