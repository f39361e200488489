/**
 * The bounded direct expansion used when no helper sub-agent can run: gather excerpts under the candidate
 * summaries within a token budget and present them for one model call (or, with no model, to the agent itself).
 * Source messages, and the content they stored aside, are ranked together across every candidate by how well they
 * match the question (all words, phrase, closeness, BM25 over its rare words: text-ranking.ts), best first, each
 * quoted as a window around its hits rather than from its top; then the candidate summaries, then a shallow walk
 * down the DAG fills what budget is left. An excerpt cut to the budget keeps the window around what matched. Excerpts stay in that order, best first, so a smaller budget keeps the best of them (`bestWithin`).
 */
import type { TokenEstimator } from "../contracts.js";
import type { MessageId, SummaryId, SummaryRecord } from "../records.js";
import { type DocumentMatch, QueryMatcher } from "../text/text-matcher.js";
import type { TextQuery } from "../text/text-query.js";
import type { FileChunkHitRow, RetrievalStore } from "../store/retrieval-store.js";
import { isoTime } from "../search/iso-time.js";
import type { RetrievalEngine } from "./retrieval-engine.js";
import { fitToTokens } from "../tokens/text-within.js";
import { compareScores } from "../search/text-ranking.js";
import { fileChunkReader, messageReader } from "../search/text-readers.js";
import { prepareTogether, searchText, type TextHit } from "../search/text-search.js";
import { textAround } from "../search/stored-content.js";
import { quoteWindow, snippetCenter } from "../search/text-snippet.js";

/** Best-matching source messages read under each candidate summary. */
const MATCHED_MESSAGES_PER_SUMMARY = 8;
/** Longest quote of one message, in characters (about 300 tokens of prose), centred on its hits. */
const QUOTE_CHARACTERS = 1_200;
/** The core of a quote (about three lines), what a small answer shows of an excerpt that does not fit whole. */
const CORE_CHARACTERS = 300;
/** Time for finding the matching messages under all candidates together. */
const SEARCH_BUDGET_MS = 1_500;
/** Stored files not indexed yet read directly when looking for matching content under the candidates. */
const UNINDEXED_FILES = 50;
/** A window cut to the budget is sized by this many characters per token (prose), and holds at least this many. */
const CHARACTERS_PER_TOKEN = 3;
const MIN_WINDOW_CHARACTERS = 200;

export interface Excerpt {
  /** The candidate summary this excerpt was found under. */
  summaryId: SummaryId;
  time: number;
  header: string;
  text: string;
  tokenCount: number;
  /** A shorter window around what matched (about three lines), shown instead when the whole excerpt does not fit. */
  core?: { text: string; tokenCount: number };
}

export interface ExcerptSet {
  /** Best first: matched messages, then the candidate summaries, then what lies below them. */
  excerpts: Excerpt[];
  sourceTokens: number;
  /** The budget stopped collection before everything under the candidates was read. */
  truncated: boolean;
  /** Candidates that contributed at least one excerpt. */
  expandedSummaryIds: SummaryId[];
}

export interface ExcerptDeps {
  store: RetrievalStore;
  retrieval: Pick<RetrievalEngine, "expand">;
  tokens: TokenEstimator;
}

/**
 * The source messages under `candidates` that best match `query`, best first across all of them: one search per
 * conversation over the seq range spanning its candidates, keeping the hits inside a candidate's range.
 */
export async function rankSources(
  store: RetrievalStore,
  candidates: readonly SummaryRecord[],
  query: TextQuery,
  perSummary = MATCHED_MESSAGES_PER_SUMMARY,
): Promise<RankedSource[]> {
  const found: RankedSource[] = [];
  const keep = (source: RankedSource, under: readonly SummaryRecord[]) => {
    const summary = under.find((candidate) => source.message.seq >= candidate.seqStart && source.message.seq <= candidate.seqEnd);
    if (summary) found.push({ ...source, summary });
  };
  for (const conversationId of new Set(candidates.map((summary) => summary.conversationId))) {
    const under = candidates.filter((summary) => summary.conversationId === conversationId);
    const seqRange = { from: Math.min(...under.map((summary) => summary.seqStart)), to: Math.max(...under.map((summary) => summary.seqEnd)) };
    const filter = { conversationIds: [conversationId], since: null, before: null };
    const request = { query, sort: "relevance" as const, limit: perSummary * under.length * 2, budgetMs: SEARCH_BUDGET_MS, alwaysSomeWords: true };
    // Content the messages under the candidates stored aside (a paste, a tool output) is their text too, ranked
    // with them: one collection for how rare a word is.
    const unindexed = (await store.unindexedFiles(filter, UNINDEXED_FILES)).files;
    const messages = messageReader(store, { ...filter, seqRange });
    const stored = fileChunkReader(store, filter, () => unindexed, new Map());
    const [forMessages, forFiles] = await prepareTogether([{ reader: messages }, { reader: stored, passages: true }], query);
    for (const hit of (await searchText(messages, { ...request, ...forMessages })).hits) {
      keep({ hit, message: hit.row, summary: under[0]! }, under);
    }
    const files = await searchText(stored, { ...request, ...forFiles });
    const references = await store.fileReferences(files.hits.map((hit) => hit.row));
    const seenFiles = new Set<string>();
    for (const hit of files.hits) {
      const reference = references.get(hit.row.fileId);
      if (!reference || seenFiles.has(hit.row.fileId)) continue;
      seenFiles.add(hit.row.fileId);
      keep({ hit, message: reference, summary: under[0]!, fileId: hit.row.fileId, stored: hit.row }, under);
    }
  }
  // Best first across messages and stored content, then at most `perSummary` under each candidate.
  found.sort((left, right) => compareScores(left.hit.score, left.message.createdAt, right.hit.score, right.message.createdAt));
  const perCandidate = new Map<SummaryRecord, number>();
  return found.filter((source) => {
    const count = perCandidate.get(source.summary) ?? 0;
    perCandidate.set(source.summary, count + 1);
    return count < perSummary;
  });
}

/** A source that matches the question: a message, or content it stored aside (`fileId`), under a candidate summary. */
export interface RankedSource {
  hit: TextHit<{ text: string }>;
  message: { messageId: MessageId; seq: number; role: string; createdAt: number };
  summary: SummaryRecord;
  fileId?: string;
  /** For stored content: where the matching chunk is, so the quote can be read around the match from the file. */
  stored?: Pick<FileChunkHitRow, "path" | "byteStart" | "text">;
}

export async function collectExcerpts(
  deps: ExcerptDeps,
  candidates: readonly SummaryRecord[],
  query: TextQuery | null,
  budget: number,
): Promise<ExcerptSet> {
  const excerpts: Excerpt[] = [];
  const seen = new Set<string>();
  let used = 0;
  let truncated = false;
  /**
   * Adds an excerpt within the budget; one too long for what is left keeps a window around what matched (`match`),
   * and its core is that window at CORE_CHARACTERS, for an answer too small to show it whole.
   */
  const add = (key: string, excerpt: Omit<Excerpt, "tokenCount" | "core">, match: DocumentMatch | null = null): boolean => {
    if (seen.has(key)) return true;
    const left = budget - used;
    if (left <= 0) {
      truncated = true;
      return false;
    }
    let fitted = fitToTokens(excerpt.text, left, deps.tokens);
    if (fitted.cut && match && match.hits.some((hits) => hits.length > 0)) {
      fitted = fitToTokens(quoteWindow(match, Math.max(MIN_WINDOW_CHARACTERS, left * CHARACTERS_PER_TOKEN)).text, left, deps.tokens);
    }
    if (fitted.text === "") {
      truncated = true;
      return false;
    }
    seen.add(key);
    const core = match && fitted.text.length > CORE_CHARACTERS && match.hits.some((hits) => hits.length > 0)
      ? quoteWindow(match, CORE_CHARACTERS).text
      : null;
    excerpts.push({
      ...excerpt, text: fitted.text, tokenCount: fitted.tokenCount,
      ...(core !== null ? { core: { text: core, tokenCount: deps.tokens.estimate(core) } } : {}),
    });
    used += fitted.tokenCount;
    if (fitted.cut) truncated = true;
    return !fitted.cut;
  };

  const queryMatcher = query ? new QueryMatcher(query.groups.flat()) : null;
  // How telling each term is, from the sources' search: what summaries and walked messages are centred on too.
  let weights: readonly number[] | undefined;
  const match = (text: string): DocumentMatch | null => (queryMatcher ? { ...queryMatcher.match(text), ...(weights ? { weights } : {}) } : null);
  if (query) {
    const sources = await rankSources(deps.store, candidates, query);
    weights = sources[0]?.hit.match.weights;
    for (const { hit, message, summary, fileId, stored } of sources) {
      // Stored content is quoted from its file around the match, across the chunk's ends.
      const center = stored ? snippetCenter(hit.match) : null;
      const around = stored && center ? await textAround(stored, center.start, QUOTE_CHARACTERS) : null;
      const matched = (around !== null ? match(around) : null) ?? hit.match;
      const quoted = quoteWindow(matched, QUOTE_CHARACTERS);
      if (quoted.cut) truncated = true;
      const where = fileId ? ` · in ${fileId}` : "";
      const header = `[message ${message.messageId} · ${message.role} · ${isoTime(message.createdAt)} · under ${summary.summaryId}${where}]`;
      const key = fileId ? `f${fileId}` : `m${message.messageId}`;
      if (!add(key, { summaryId: summary.summaryId, time: message.createdAt, header, text: quoted.text }, matched)) break;
    }
  }
  for (const summary of candidates) {
    const header = `[${summary.summaryId} · ${summary.kind} summary · ${isoTime(summary.earliestAt)} to ${isoTime(summary.latestAt)}]`;
    const matched = match(summary.content);
    const text = matched ? quoteWindow(matched, 4 * QUOTE_CHARACTERS).text : summary.content;
    if (!add(`s${summary.summaryId}`, { summaryId: summary.summaryId, time: summary.earliestAt, header, text })) break;
  }
  for (const summary of candidates) {
    if (used >= budget) break;
    const expanded = await deps.retrieval.expand(summary, { depth: 2, includeMessages: true, tokenCap: budget - used });
    for (const item of expanded.items) {
      const added = item.type === "message"
        ? add(`m${item.messageId}`, {
            summaryId: summary.summaryId, time: Date.parse(item.createdAt),
            header: `[message ${item.messageId} · ${item.role} · ${item.createdAt} · under ${item.summaryId}]`, text: item.content,
          }, match(item.content))
        : add(`s${item.summaryId}`, {
            summaryId: summary.summaryId, time: Date.parse(item.earliestAt),
            header: `[${item.summaryId} · ${item.kind} summary · ${item.earliestAt} to ${item.latestAt}]`, text: item.content,
          });
      if (!added) break;
    }
    if (expanded.truncated) truncated = true;
  }
  return {
    excerpts,
    sourceTokens: used,
    truncated,
    expandedSummaryIds: candidates.map((summary) => summary.summaryId).filter((id) => excerpts.some((excerpt) => excerpt.summaryId === id)),
  };
}

/** The excerpts in the order given (best first), each under its header. */
export function formatExcerpts(excerpts: readonly Excerpt[]): string {
  return excerpts.map((excerpt) => `${excerpt.header}\n${excerpt.text}`).join("\n\n");
}

/**
 * The best excerpts (in collection order) whose headers and texts fit `budget` tokens together; one that does not
 * fit whole is kept as its core (the window around what matched) when that fits.
 */
export function bestWithin(excerpts: readonly Excerpt[], budget: number, tokens: TokenEstimator): Excerpt[] {
  const kept: Excerpt[] = [];
  let used = 0;
  for (const excerpt of excerpts) {
    const header = tokens.estimate(excerpt.header) + 2;
    const shown = used + excerpt.tokenCount + header <= budget ? excerpt
      : excerpt.core && used + excerpt.core.tokenCount + header <= budget ? { ...excerpt, ...excerpt.core }
      : null;
    if (!shown) continue;
    kept.push(shown);
    used += shown.tokenCount + header;
  }
  return kept;
}
