/**
 * grep: full-text or regex search over messages and/or summaries of an authorized set of conversations, or inside
 * their stored large files (scope "files", file-search.ts). Each message hit names the summary that now covers it
 * in the context (found from the context's summary seq ranges, one read per conversation with hits), so the agent
 * can go straight to lcm_describe or lcm_expand_query.
 */
import { LcmError } from "../errors.js";
import type { ConversationId, SummaryId, SummaryKind } from "../records.js";
import type { MessageHitRow, RetrievalStore, SearchFilter, SearchSort, SummaryHitRow } from "../store/retrieval-store.js";
import { searchFiles, type FileMatch, type FileSearchResult, type FileSearchSource } from "./file-search.js";
import { parseTextQuery, type QueryTerm } from "../search/text-query.js";
import { isoTime } from "./iso-time.js";
import { compileSearchRegex } from "./regex-policy.js";
import { regexSearch, type RegexStrategy, type SearchScope } from "./regex-search.js";
import { compareScores, type DocumentScore } from "./text-ranking.js";
import { messageReader, summaryReader } from "./text-readers.js";
import { searchText, type TextHit } from "./text-search.js";
import { textSnippet } from "./text-snippet.js";

export type GrepMode = "regex" | "full_text";
/** History (messages, summaries, both) or the content of stored large files. */
export type GrepScope = SearchScope | "files";

export interface GrepRequest {
  pattern: string;
  mode: GrepMode;
  scope: GrepScope;
  conversationIds: ConversationId[];
  since: number | null;
  before: number | null;
  limit: number;
  sort: SearchSort;
}

export interface MessageMatch {
  type: "message";
  id: number;
  conversationId: ConversationId;
  seq: number;
  role: string;
  createdAt: string;
  snippet: string;
  /** The summary that now stands for this message in the context; null while the message itself is there. */
  coveringSummaryId: SummaryId | null;
  /** Full text: the query's terms this message holds, as typed. */
  matchedTerms?: string[];
}

export interface SummaryMatch {
  type: "summary";
  id: SummaryId;
  summaryId: SummaryId;
  conversationId: ConversationId;
  kind: SummaryKind;
  depth: number;
  /** When the newest content it covers happened (same as latestAt). */
  createdAt: string;
  earliestAt: string;
  latestAt: string;
  snippet: string;
  /** Full text: the query's terms this summary holds, as typed. */
  matchedTerms?: string[];
}

export type { FileMatch } from "./file-search.js";
export type GrepMatch = MessageMatch | SummaryMatch | FileMatch;

export interface GrepResult {
  mode: GrepMode;
  scope: GrepScope;
  sort: SearchSort;
  matches: GrepMatch[];
  /** `limit` matches were returned; more may exist. */
  limitReached: boolean;
  /** The search stopped before covering all history (or files) in scope: the time budget ran out; see `note`. */
  truncated: boolean;
  note: string | null;
  /** Regex only: how candidates were found (index, substring prefilter, or a plain scan). */
  strategy?: RegexStrategy;
  /**
   * Full text: whether the matches hold every word of the query ("all words"), only some ("some words": no
   * document holds them all), or both, every-word matches first ("all words, then some words").
   */
  matched?: "all words" | "some words" | "all words, then some words" | "none";
  /** Scope "files": stored files in scope, how many were opened, and those that could not be searched. */
  filesInScope?: number;
  searchedFiles?: number;
  unavailableFiles?: FileSearchResult["unavailableFiles"];
}

export async function grep(
  store: RetrievalStore,
  request: GrepRequest,
  options: { now: number; regexBudgetMs: number; files: FileSearchSource },
): Promise<GrepResult> {
  if (request.scope === "files") return grepFiles(options.files, request, options.regexBudgetMs);
  const scope = request.scope;
  const filter: SearchFilter = { conversationIds: request.conversationIds, since: request.since, before: request.before };
  if (request.mode === "full_text") return grepText(store, request, scope, filter, options.regexBudgetMs);
  const regex = compileSearchRegex(request.pattern);
  const found = await regexSearch(store, { regex, filter, scope, limit: request.limit, budgetMs: options.regexBudgetMs });
  const matches = await combine(store, found.messages, found.summaries, { ...request, sort: "recency" });
  const notes = [
    found.stopReason,
    request.sort === "relevance" ? 'Regex matches have no relevance score; they are listed newest first (use mode "full_text" for relevance).' : null,
  ].filter((note): note is string => note !== null);
  return {
    mode: request.mode,
    scope: request.scope,
    sort: "recency",
    matches,
    limitReached: matches.length >= request.limit,
    truncated: found.truncated,
    note: notes.length > 0 ? notes.join(" ") : null,
    strategy: found.strategy,
  };
}

/** Full-text search over messages and/or summaries, merged in the requested order. */
async function grepText(store: RetrievalStore, request: GrepRequest, scope: SearchScope, filter: SearchFilter, budgetMs: number): Promise<GrepResult> {
  const query = parseTextQuery(request.pattern);
  if (!query) {
    throw new LcmError("invalid_input", 'Parameter "pattern" has no searchable words (only punctuation or operators); give at least one word or number.', { parameter: "pattern" });
  }
  const textRequest = { query, sort: request.sort, limit: request.limit, budgetMs };
  const started = performance.now();
  const messages = scope === "summaries" ? null : await searchText(messageReader(store, filter), textRequest);
  const summaries = scope === "messages" ? null : await searchText(summaryReader(store, filter), {
    ...textRequest, budgetMs: Math.max(1, budgetMs - (performance.now() - started)),
  });
  const covering = await coveringSummaries(store, messages?.hits.map((hit) => hit.row) ?? []);
  const ranked = [
    ...(messages?.hits ?? []).map((hit) => ({ hit, time: hit.row.createdAt, match: toMessageMatch({ ...hit.row, text: textSnippet(hit.match) }, covering) })),
    ...(summaries?.hits ?? []).map((hit) => ({ hit, time: hit.row.latestAt, match: toSummaryMatch({ ...hit.row, text: textSnippet(hit.match) }) })),
  ] as { hit: TextHit<unknown>; time: number; match: MessageMatch | SummaryMatch }[];
  const holdsAll = (score: DocumentScore) => score.allTerms === 1;
  const byRelevance = request.sort === "relevance" || !ranked.some((entry) => holdsAll(entry.hit.score));
  ranked.sort((left, right) => (byRelevance ? compareScores(left.hit.score, left.time, right.hit.score, right.time) : right.time - left.time));
  const terms = messages?.terms ?? summaries?.terms ?? [];
  const matches = ranked.slice(0, request.limit).map(({ hit, match }) => ({ ...match, matchedTerms: termsAsTyped(terms, hit.score.matchedTerms) }));
  const withAll = ranked.slice(0, request.limit).filter((entry) => holdsAll(entry.hit.score)).length;
  const notes = [messages?.note ?? null, summaries?.note ?? null].filter((note): note is string => note !== null);
  return {
    mode: request.mode,
    scope,
    sort: request.sort,
    matches,
    limitReached: matches.length >= request.limit,
    truncated: (messages?.truncated ?? false) || (summaries?.truncated ?? false),
    note: notes.length > 0 ? [...new Set(notes)].join(" ") : null,
    matched: matches.length === 0 ? "none" : withAll === matches.length ? "all words" : withAll === 0 ? "some words" : "all words, then some words",
  };
}

/** The terms found, as typed (without surrounding punctuation); function words only in a query made of them. */
function termsAsTyped(terms: readonly QueryTerm[], indexes: readonly number[]): string[] {
  const meaningful = terms.some((term) => !term.isStopword);
  return indexes
    .filter((index) => !meaningful || !terms[index]!.isStopword)
    .map((index) => terms[index]!.original.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ""));
}

async function grepFiles(files: FileSearchSource, request: GrepRequest, budgetMs: number): Promise<GrepResult> {
  const found = await searchFiles(files, { ...request, budgetMs });
  const notes = [
    found.note,
    request.sort === "relevance" ? "File matches have no relevance score; they are listed newest file first, lines in order." : null,
  ].filter((note): note is string => note !== null);
  return {
    mode: request.mode,
    scope: "files",
    sort: "recency",
    matches: found.matches,
    limitReached: found.matches.length >= request.limit,
    truncated: found.truncated,
    note: notes.length > 0 ? notes.join(" ") : null,
    filesInScope: found.filesInScope,
    searchedFiles: found.searchedFiles,
    unavailableFiles: found.unavailableFiles,
  };
}

async function combine(
  store: RetrievalStore,
  messages: MessageHitRow[],
  summaries: SummaryHitRow[],
  request: Pick<GrepRequest, "sort" | "limit">,
): Promise<GrepMatch[]> {
  const covering = await coveringSummaries(store, messages);
  const ranked = [
    ...messages.map((row) => ({ time: row.createdAt, rank: row.rank, match: toMessageMatch(row, covering) })),
    ...summaries.map((row) => ({ time: row.latestAt, rank: row.rank, match: toSummaryMatch(row) })),
  ];
  ranked.sort((left, right) => (request.sort === "relevance" ? left.rank - right.rank : 0) || right.time - left.time);
  return ranked.slice(0, request.limit).map((entry) => entry.match);
}

/** For each message hit: the summary that now stands for it in the context (null while it is raw context). */
async function coveringSummaries(store: RetrievalStore, messages: MessageHitRow[]): Promise<Map<number, SummaryId | null>> {
  const result = new Map<number, SummaryId | null>();
  for (const conversationId of new Set(messages.map((row) => row.conversationId))) {
    const inConversation = messages.filter((row) => row.conversationId === conversationId);
    const bySeq = await store.coveringSummaryIds(conversationId, inConversation.map((row) => row.seq));
    for (const row of inConversation) result.set(row.messageId, bySeq.get(row.seq) ?? null);
  }
  return result;
}

function toMessageMatch(row: MessageHitRow, covering: Map<number, SummaryId | null>): MessageMatch {
  return {
    type: "message",
    id: row.messageId,
    conversationId: row.conversationId,
    seq: row.seq,
    role: row.role,
    createdAt: isoTime(row.createdAt),
    snippet: row.text,
    coveringSummaryId: covering.get(row.messageId) ?? null,
  };
}

function toSummaryMatch(row: SummaryHitRow): SummaryMatch {
  return {
    type: "summary",
    id: row.summaryId,
    summaryId: row.summaryId,
    conversationId: row.conversationId,
    kind: row.kind,
    depth: row.depth,
    createdAt: isoTime(row.latestAt),
    earliestAt: isoTime(row.earliestAt),
    latestAt: isoTime(row.latestAt),
    snippet: row.text,
  };
}
