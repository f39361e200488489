/**
 * grep: full-text or regex search over everything stored for an authorized set of conversations: messages, the
 * content stored aside from them (pastes, tool outputs, file blocks: a hit there is reported on the message that
 * holds the reference, with where in the file it is), and summaries; or inside stored files only (scope "files",
 * file-search.ts). Sources come before their copies: a summary that matches because it repeats a matching message
 * it covers is folded under that message (grep-ranking.ts). Each message hit names the summary that now covers it
 * in the context, so the agent can go straight to lcm_describe or lcm_expand_query.
 */
import { LcmError } from "../errors.js";
import type { ConversationId, SummaryId } from "../records.js";
import { positionInChunk } from "../text/content-chunks.js";
import { parseTextQuery, type QueryTerm } from "../text/text-query.js";
import type {
  FileChunkHitRow, FileReference, MessageHitRow, RetrievalStore, SearchFilter, SearchSort, SummaryHitRow, UnindexedFile,
} from "../store/retrieval-store.js";
import { searchFiles, type FileMatch, type FileSearchResult, type FileSearchSource } from "./file-search.js";
import type { GrepMatch, MessageMatch } from "./grep-matches.js";
import { type Candidate, orderSourcesFirst } from "./grep-ranking.js";
import { isoTime } from "./iso-time.js";
import { compileSearchRegex } from "./regex-policy.js";
import { regexSearch, type RegexStrategy, type SearchScope } from "./regex-search.js";
import type { UnreadableFiles } from "./stored-content.js";
import { compareScores } from "./text-ranking.js";
import { fileChunkReader, messageReader, summaryReader } from "./text-readers.js";
import { prepareTogether, searchText, type TextHit } from "./text-search.js";
import { snippetCenter, textSnippet } from "./text-snippet.js";

export type GrepMode = "regex" | "full_text";
/** History (messages with their stored content, summaries, both) or the content of stored files alone. */
export type GrepScope = SearchScope | "files";

/** Stored files not indexed yet that one search reads directly, at most (newest first). */
const UNINDEXED_FILES = 200;
/** A file hit's hint starts reading this many lines above it. */
const HINT_LINES_BEFORE = 10;

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

export type { GrepMatch, MessageMatch } from "./grep-matches.js";
export type { FileMatch } from "./file-search.js";

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
  /** Scope "files": stored files in scope, how many were opened. */
  filesInScope?: number;
  searchedFiles?: number;
  /** Stored files in scope whose content could not be searched, with the reason. */
  unavailableFiles?: FileSearchResult["unavailableFiles"];
}

export async function grep(
  store: RetrievalStore,
  request: GrepRequest,
  options: { now: number; regexBudgetMs: number; files: FileSearchSource },
): Promise<GrepResult> {
  if (request.scope === "files") return grepFiles(options.files, request, options.regexBudgetMs);
  const filter: SearchFilter = { conversationIds: request.conversationIds, since: request.since, before: request.before };
  const unreadable: UnreadableFiles = new Map();
  // Read while a full-text search prepares its query (it needs the list only once it reads stored content).
  const storedFiles = request.scope !== "summaries" && filter.conversationIds.length > 0
    ? store.unindexedFiles(filter, UNINDEXED_FILES)
    : Promise.resolve({ files: [], unsearchable: [] });
  const unindexedFiles = storedFiles.then((stored) => stored.files);
  // Both handled here too, so a search that fails first (a pattern with no words) leaves no unhandled rejection behind.
  for (const pending of [storedFiles, unindexedFiles]) pending.catch(() => undefined);
  const result = request.mode === "full_text"
    ? await grepText(store, request, filter, unindexedFiles, unreadable, options.regexBudgetMs)
    : await grepRegex(store, request, filter, (await storedFiles).files, unreadable, options.regexBudgetMs);
  const stored = await storedFiles;
  const unavailable = [
    ...stored.unsearchable.map((file) => ({ fileId: file.fileId, fileName: file.fileName, status: "unreadable" as const, reason: file.reason })),
    ...[...unreadable].map(([fileId, reason]) => ({ fileId, fileName: null, status: "unreadable" as const, reason })),
  ];
  if (unavailable.length === 0) return result;
  const note = `${unavailable.length} stored file(s) in scope could not be searched; see unavailableFiles.`;
  return { ...result, unavailableFiles: unavailable, note: result.note ? `${result.note} ${note}` : note };
}

async function grepRegex(
  store: RetrievalStore, request: GrepRequest, filter: SearchFilter, unindexed: readonly UnindexedFile[], unreadable: UnreadableFiles, budgetMs: number,
): Promise<GrepResult> {
  const regex = compileSearchRegex(request.pattern);
  const scope = request.scope as SearchScope;
  const found = await regexSearch(store, { regex, filter, scope, limit: request.limit, budgetMs, storedContent: { unindexed, unreadable } });
  const references = await store.fileReferences(found.files);
  const candidates: Candidate[] = [
    ...found.messages.map((row) => messageCandidate(row, row.createdAt)),
    ...found.files.map((row) => fileCandidate(row, references.get(row.fileId) ?? null, row.at, row.chunkText, row.createdAt)),
    ...found.summaries.map((row) => summaryCandidate(row, row.latestAt)),
  ];
  candidates.sort((left, right) => right.time - left.time);
  const matches = await finish(store, candidates, request.limit);
  return {
    mode: request.mode,
    scope,
    sort: "recency",
    matches,
    limitReached: matches.length >= request.limit,
    truncated: found.truncated,
    note: recencyNote(found.stopReason, request, 'Regex matches have no relevance score; they are listed newest first (use mode "full_text" for relevance).'),
    strategy: found.strategy,
  };
}

/** Full-text search over messages, their stored content and/or summaries, merged in the requested order. */
async function grepText(
  store: RetrievalStore, request: GrepRequest, filter: SearchFilter, storedFiles: Promise<readonly UnindexedFile[]>, unreadable: UnreadableFiles,
  budgetMs: number,
): Promise<GrepResult> {
  const query = parseTextQuery(request.pattern);
  if (!query) {
    throw new LcmError("invalid_input", 'Parameter "pattern" has no searchable words (only punctuation or operators); give at least one word or number.', { parameter: "pattern" });
  }
  const scope = request.scope as SearchScope;
  const textRequest = { query, sort: request.sort, limit: request.limit, budgetMs };
  const started = performance.now();
  const remaining = () => Math.max(1, budgetMs - (performance.now() - started));
  // The sources are ranked together: one collection for how rare a word is (text-search.ts prepareTogether).
  const readers = {
    messages: scope === "summaries" ? null : messageReader(store, filter),
    files: scope === "summaries" ? null : fileChunkReader(store, filter, () => unindexed, unreadable),
    summaries: scope === "messages" ? null : summaryReader(store, filter),
  };
  const inScope = (["messages", "files", "summaries"] as const).filter((source) => readers[source] !== null);
  let unindexed: readonly UnindexedFile[] = [];
  const [together] = await Promise.all([
    prepareTogether(inScope.map((source) => ({ reader: readers[source]!, passages: source === "files" })), query),
    storedFiles.then((files) => { unindexed = files; }),
  ]);
  const requestFor = (source: (typeof inScope)[number]) => ({ ...textRequest, budgetMs: remaining(), ...together[inScope.indexOf(source)]! });
  // The sources are read at once, each within the budget (a server's backend answers them on separate connections).
  const [messages, files, summaries] = await Promise.all([
    readers.messages ? searchText(readers.messages, requestFor("messages")) : null,
    readers.files ? searchText(readers.files, requestFor("files")) : null,
    readers.summaries ? searchText(readers.summaries, requestFor("summaries")) : null,
  ]);
  const references = await store.fileReferences((files?.hits ?? []).map((hit) => hit.row));
  const terms = messages?.terms ?? summaries?.terms ?? files?.terms ?? [];
  const scored = (hit: TextHit<unknown>, candidate: Candidate): Candidate => ({
    ...candidate, score: hit.score, match: { ...candidate.match, matchedTerms: termsAsTyped(terms, hit.score.matchedTerms) },
  });
  const candidates: Candidate[] = [
    ...(messages?.hits ?? []).map((hit) => scored(hit, messageCandidate({ ...hit.row, text: textSnippet(hit.match) }, hit.row.createdAt))),
    ...(files?.hits ?? []).map((hit) => scored(hit, fileCandidate(
      { ...hit.row, text: textSnippet(hit.match) }, references.get(hit.row.fileId) ?? null, snippetCenter(hit.match)?.start ?? 0, hit.row.text, hit.row.createdAt,
    ))),
    ...(summaries?.hits ?? []).map((hit) => scored(hit, summaryCandidate({ ...hit.row, text: textSnippet(hit.match) }, hit.row.latestAt))),
  ];
  const holdsAll = (candidate: Candidate) => candidate.score!.allTerms === 1;
  const byRelevance = request.sort === "relevance" || !candidates.some(holdsAll);
  candidates.sort((left, right) => (byRelevance ? compareScores(left.score!, left.time, right.score!, right.time) : right.time - left.time));
  const matches = await finish(store, candidates, request.limit);
  const shown = new Set(matches);
  const withAll = candidates.filter((candidate) => shown.has(candidate.match) && holdsAll(candidate)).length;
  const notes = [messages?.note ?? null, files?.note ?? null, summaries?.note ?? null].filter((note): note is string => note !== null);
  return {
    mode: request.mode,
    scope,
    sort: request.sort,
    matches,
    limitReached: matches.length >= request.limit,
    truncated: (messages?.truncated ?? false) || (files?.truncated ?? false) || (summaries?.truncated ?? false),
    note: notes.length > 0 ? [...new Set(notes)].join(" ") : null,
    matched: matches.length === 0 ? "none" : withAll === matches.length ? "all words" : withAll === 0 ? "some words" : "all words, then some words",
  };
}

/** The ranked candidates as matches: copies folded under their sources, each message's covering summary named, at most `limit`. */
async function finish(store: RetrievalStore, candidates: Candidate[], limit: number): Promise<GrepMatch[]> {
  const ordered = orderSourcesFirst(candidates).slice(0, limit);
  const messages = ordered.filter((match): match is MessageMatch => match.type === "message");
  const covering = await coveringSummaries(store, messages);
  for (const match of messages) match.coveringSummaryId = covering.get(`${match.conversationId}:${match.seq}`) ?? null;
  return ordered;
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
  return {
    mode: request.mode,
    scope: "files",
    sort: "recency",
    matches: found.matches,
    limitReached: found.matches.length >= request.limit,
    truncated: found.truncated,
    note: recencyNote(found.note, request, "File matches have no relevance score; they are listed newest file first, lines in order."),
    filesInScope: found.filesInScope,
    searchedFiles: found.searchedFiles,
    unavailableFiles: found.unavailableFiles,
  };
}

/** A search listed newest first: why it stopped early, and `unranked` when relevance was asked for; null when neither. */
function recencyNote(stopped: string | null, request: GrepRequest, unranked: string): string | null {
  const notes = [stopped, request.sort === "relevance" ? unranked : null].filter((note): note is string => note !== null);
  return notes.length > 0 ? notes.join(" ") : null;
}

/** For each message match (by conversation and seq): the summary that now stands for it in the context. */
async function coveringSummaries(store: RetrievalStore, messages: readonly MessageMatch[]): Promise<Map<string, SummaryId | null>> {
  const result = new Map<string, SummaryId | null>();
  // One read per conversation, all at once (a server's backend answers them on separate connections).
  const conversationIds = [...new Set(messages.map((match) => match.conversationId))];
  const covering = await Promise.all(conversationIds.map((conversationId) =>
    store.coveringSummaryIds(conversationId, messages.filter((match) => match.conversationId === conversationId).map((match) => match.seq))));
  for (const [index, conversationId] of conversationIds.entries()) {
    for (const [seq, summaryId] of covering[index]!) result.set(`${conversationId}:${seq}`, summaryId);
  }
  return result;
}

function messageCandidate(row: MessageHitRow, time: number): Candidate {
  return {
    time,
    match: {
      type: "message", id: row.messageId, conversationId: row.conversationId, seq: row.seq, role: row.role,
      createdAt: isoTime(row.createdAt), snippet: row.text, coveringSummaryId: null,
    },
  };
}

/**
 * A hit in a chunk of stored content, on the message holding the file's reference; `at` is where the match is in
 * the chunk's `chunkText`. A file no stored message names is reported as a file match.
 */
function fileCandidate(row: FileChunkHitRow, reference: FileReference | null, at: number, chunkText: string, time: number): Candidate {
  const position = positionInChunk({ byteStart: row.byteStart, lineStart: row.lineStart, text: chunkText }, at);
  const read = `lcm_describe(id: ${row.fileId}, startLine: ${Math.max(1, position.line - HINT_LINES_BEFORE)})`;
  if (!reference) {
    const lineStart = chunkText.lastIndexOf("\n", at - 1) + 1;
    const match: FileMatch = {
      type: "file", id: row.fileId, fileId: row.fileId, fileName: row.fileName, conversationId: row.conversationId,
      lineNumber: position.line, column: at - lineStart + 1, createdAt: isoTime(row.createdAt), snippet: row.text, hint: read,
    };
    return { time, match, fileId: row.fileId };
  }
  return {
    time: reference.createdAt,
    fileId: row.fileId,
    match: {
      type: "message", id: reference.messageId, conversationId: reference.conversationId, seq: reference.seq, role: reference.role,
      createdAt: isoTime(reference.createdAt), snippet: row.text, coveringSummaryId: null,
      inFile: { fileId: row.fileId, fileName: row.fileName, line: position.line, byteOffset: position.byteOffset, read },
    },
  };
}

function summaryCandidate(row: SummaryHitRow, time: number): Candidate {
  return {
    time,
    covers: { from: row.seqStart, to: row.seqEnd },
    match: {
      type: "summary", id: row.summaryId, summaryId: row.summaryId, conversationId: row.conversationId, kind: row.kind, depth: row.depth,
      createdAt: isoTime(row.latestAt), earliestAt: isoTime(row.earliestAt), latestAt: isoTime(row.latestAt), snippet: row.text,
    },
  };
}
