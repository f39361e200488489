/**
 * Regex search over ALL history in scope, newest first, bounded in time and memory. Rows come from the cheapest
 * source that cannot miss a match (regex-prefilter.ts): the full-text index when the pattern has a required
 * word (for messages, also a word that may end a longer one, through the term dictionary), else fixed-width
 * windows of history filtered by a required substring in SQL, else plain windows. Each
 * batch is matched in a worker with the remaining time budget (regex-runner.ts); between batches the event loop
 * runs. When the budget runs out the search stops and says so instead of pretending it saw everything.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type {
  CandidatePage, ContainsFilter, FileChunkHitRow, IndexRequirement, IndexState, MessageHitRow, RetrievalStore, SearchFilter, SummaryHitRow, UnindexedFile,
} from "../store/retrieval-store.js";
import type { SearchRegex } from "./regex-policy.js";
import { planPrefilter, type RegexPrefilter, suffixMatch } from "./regex-prefilter.js";
import { RegexRunner } from "./regex-runner.js";
import { regexSnippet } from "./regex-snippet.js";
import { type UnreadableFiles, unindexedChunks, withChunkTexts } from "./stored-content.js";
import { widerScan } from "./text-search.js";

/** Rows per history window: bounds the rows (and memory) one SQL call and one worker batch handle. */
const WINDOW_ROWS = 2_000;
/** Rows of the backlog's blocks examined per batch (only those that may hold a literal, and pass it in SQL, are read). */
const BLOCK_WINDOW_ROWS = 8_192;
/** Full-text index entries examined per candidate page. */
const CANDIDATE_PAGE = 1_000;
/** Chunks of stored content per window or page when their text is read (~2 MB of reads). */
const FILE_CHUNK_PAGE = 500;
/** Index terms one required word end may stand for; past this it narrows too little to be worth an OR of them. */
const MAX_TERMS_PER_SUFFIX = 200;

export type SearchScope = "messages" | "summaries" | "both";
export type RegexStrategy = "index" | "substring" | "scan";

export interface RegexSearchRequest {
  regex: SearchRegex;
  filter: SearchFilter;
  scope: SearchScope;
  limit: number;
  budgetMs: number;
  /**
   * Content stored aside to search with the messages: the files not indexed yet (read directly), and where to note
   * files that could not be read. Absent: stored content is not searched.
   */
  storedContent?: { unindexed: readonly UnindexedFile[]; unreadable: UnreadableFiles };
}

/** A row the regex matched, `text` replaced by a snippet; `at` is where the first match starts in the row's text. */
export type RegexHit<Row> = Row & { at: number };

export interface RegexSearchResult {
  /** Hits with `text` replaced by a snippet around the first match. */
  messages: RegexHit<MessageHitRow>[];
  summaries: RegexHit<SummaryHitRow>[];
  /** Chunks of content stored aside; `at` locates the match in the chunk's text (before the snippet replaced it). */
  files: (RegexHit<FileChunkHitRow> & { chunkText: string })[];
  strategy: RegexStrategy;
  /** Rows the regex was run on. */
  testedRows: number;
  /** True when the search stopped before covering all history in scope. */
  truncated: boolean;
  stopReason: string | null;
}

interface SearchState {
  deadline: number;
  testedRows: number;
  stopReason: string | null;
}

export async function regexSearch(
  store: RetrievalStore,
  request: RegexSearchRequest,
  now: () => number = () => performance.now(),
): Promise<RegexSearchResult> {
  const prefilter = planPrefilter(request.regex);
  const runner = new RegexRunner(request.regex.source, request.regex.flags);
  const state: SearchState = { deadline: now() + request.budgetMs, testedRows: 0, stopReason: null };
  const run = <Row extends { text: string }>(batches: AsyncIterable<Row[]>) =>
    collectMatches(batches, runner, request.limit, state, now, request.budgetMs);
  const runKeepingText = async <Row extends { text: string }>(batches: AsyncIterable<Row[]>) =>
    (await collectMatches(batches, runner, request.limit, state, now, request.budgetMs, true)) as (RegexHit<Row> & { chunkText: string })[];
  try {
    // The strategy reported is the messages' when they are searched (theirs can use the term dictionary).
    const searchesMessages = request.scope !== "summaries" && request.filter.conversationIds.length > 0;
    // Index a small backlog first: the term dictionary is written with the index.
    const indexed = await store.indexState();
    const requirement = searchesMessages ? await messageRequirement(store, prefilter) : prefilter.requirement;
    const summaries = request.scope === "messages" ? [] : await run(summaryBatches(store, request.filter, prefilter, indexed));
    const messages = searchesMessages ? await run(messageBatches(store, request.filter, prefilter, requirement, indexed)) : [];
    const stored = request.storedContent;
    const files = searchesMessages && stored
      ? await runKeepingText(fileBatches(store, request.filter, requirement, stored.unindexed, stored.unreadable))
      : [];
    return {
      messages,
      summaries,
      files,
      strategy: requirement !== null ? "index" : prefilter.containsAny ? "substring" : "scan",
      testedRows: state.testedRows,
      truncated: state.stopReason !== null,
      stopReason: state.stopReason,
    };
  } finally {
    runner.close();
  }
}

async function collectMatches<Row extends { text: string }>(
  batches: AsyncIterable<Row[]>,
  runner: RegexRunner,
  limit: number,
  state: SearchState,
  now: () => number,
  budgetMs: number,
  keepText = false,
): Promise<RegexHit<Row>[]> {
  const hits: RegexHit<Row>[] = [];
  if (state.stopReason) return hits;
  for await (const batch of batches) {
    const remaining = state.deadline - now();
    if (remaining <= 0) {
      state.stopReason = stoppedText(budgetMs, state.testedRows);
      break;
    }
    if (batch.length > 0) {
      const outcome = await runner.match(batch.map((row) => row.text), remaining);
      if (outcome.kind !== "matched") {
        state.stopReason = outcome.kind === "timeout"
          ? stoppedText(budgetMs, state.testedRows)
          : `The regex worker failed (${outcome.reason}) after testing ${state.testedRows} rows; simplify the pattern.`;
        break;
      }
      state.testedRows += batch.length;
      for (const [index, start, end] of outcome.matches) {
        const row = batch[index]!;
        hits.push({ ...row, text: regexSnippet(row.text, start, end), at: start, ...(keepText ? { chunkText: row.text } : {}) });
        if (hits.length >= limit) return hits;
      }
    }
    await yieldToEventLoop();
  }
  return hits;
}

function stoppedText(budgetMs: number, testedRows: number): string {
  return (
    `Stopped early: the ${budgetMs} ms search budget ran out after testing ${testedRows} rows, newest first, so older ` +
    `history was not searched. Narrow it with "before"/"since", make the pattern more specific (a distinctive whole ` +
    `word lets the index do the work), or use mode "full_text".`
  );
}

/**
 * What the index must list for every message that can match: the prefilter's own requirement, or, when some
 * alternative has no word known to start a word, one built from the indexed words that end with its required
 * words ("none": no message can match). Null: no index lookup narrows this pattern.
 */
async function messageRequirement(store: RetrievalStore, prefilter: RegexPrefilter): Promise<IndexRequirement | "none" | null> {
  if (prefilter.requirement) return prefilter.requirement;
  const suffixes = [...new Set(prefilter.branches.flatMap((branch) => (branch.terms.length === 0 ? branch.suffixes : [])))];
  if (suffixes.length === 0) return null;
  return suffixMatch(prefilter.branches, await store.messageTermsEndingWith(suffixes, MAX_TERMS_PER_SUFFIX));
}

/** The substring filter of a scan (the prefilter's, when it has one). */
function containsOf(prefilter: RegexPrefilter): ContainsFilter | null {
  return prefilter.containsAny ? { anyOf: prefilter.containsAny, keepNonAscii: false } : null;
}

/**
 * Messages in scope, newest first: with an index requirement, the rows not indexed yet (above `through`: those the
 * backlog's trigram index covers, up to `backlogThrough`, through it; the rest read in windows) and then the index's
 * candidates; otherwise windows over all history.
 */
async function* messageBatches(
  store: RetrievalStore,
  filter: SearchFilter,
  prefilter: RegexPrefilter,
  requirement: IndexRequirement | "none" | null,
  indexed: IndexState,
): AsyncGenerator<MessageHitRow[]> {
  const through = indexed.messagesThrough;
  if (requirement !== null) {
    let to = indexed.messagesNewest + 1;
    // The trigram index holds rows folded: it answers for ASCII literals only (a folded row holds them all the same).
    const literals = prefilter.containsAny?.every((literal) => /^[\x20-\x7e]+$/.test(literal)) ? prefilter.containsAny : null;
    const backlogThrough = indexed.messagesBacklogThrough ?? 0;
    const floor = store.backlogMessages && literals && backlogThrough > through ? Math.min(backlogThrough, to - 1) : through;
    const blocksThrough = store.backlogBlockRows && literals ? indexed.messagesBlocksThrough ?? 0 : 0;
    const contains = containsOf(prefilter);
    let width = WINDOW_ROWS;
    while (to > floor + 1) {
      // Where the backlog's blocks cover the rows, only those of blocks that may hold a literal are read.
      const page = to - 1 <= blocksThrough
        ? await store.backlogBlockRows!(filter, literals!, contains, { from: floor + 1, to: to - 1 }, BLOCK_WINDOW_ROWS)
        : null;
      if (page) {
        yield page.rows;
        to = (page.next ?? floor) + 1;
        continue;
      }
      const from = Math.max(floor + 1, to - width);
      const rows = await store.scanMessages(filter, { by: "messageId", from, to }, contains);
      yield rows;
      to = from;
      width = widerScan(width, rows.length, contains === null ? undefined : store.scanWindowMax);
    }
    while (to > through + 1) {
      const page = await store.backlogMessages!(filter, literals!, { from: through + 1, to: to - 1 }, CANDIDATE_PAGE);
      if (page === null) {
        // Not covered after all (a short literal, the index emptied meanwhile): read directly.
        const from = Math.max(through + 1, to - WINDOW_ROWS);
        yield await store.scanMessages(filter, { by: "messageId", from, to }, contains);
        to = from;
        continue;
      }
      yield page.rows;
      to = page.next ?? through + 1;
    }
    if (requirement !== "none") yield* candidatePages(through + 1, (below) => store.messageCandidates(filter, requirement, below, CANDIDATE_PAGE));
    return;
  }
  const single = filter.conversationIds.length === 1 ? filter.conversationIds[0]! : null;
  let to = (single !== null ? await store.maxMessageSeq(single) : indexed.messagesNewest) + 1;
  while (to > 1) {
    const from = Math.max(1, to - WINDOW_ROWS);
    yield single !== null
      ? await store.scanMessages(filter, { by: "seq", conversationId: single, from, to }, containsOf(prefilter))
      : await store.scanMessages(filter, { by: "messageId", from, to }, containsOf(prefilter));
    to = from;
  }
}

async function* summaryBatches(store: RetrievalStore, filter: SearchFilter, prefilter: RegexPrefilter, indexed: IndexState): AsyncGenerator<SummaryHitRow[]> {
  if (filter.conversationIds.length === 0) return;
  const through = indexed.summariesThrough;
  let to = indexed.summariesNewest + 1;
  const requirement = prefilter.requirement;
  const floor = requirement ? through + 1 : 1;
  while (to > floor) {
    const from = Math.max(floor, to - WINDOW_ROWS);
    yield await store.scanSummaries(filter, { from, to }, containsOf(prefilter));
    to = from;
  }
  if (requirement) yield* candidatePages(through + 1, (below) => store.summaryCandidates(filter, requirement, below, CANDIDATE_PAGE));
}

/** The index's candidates below `start`, a page at a time, newest first, until it has none left. */
async function* candidatePages<Row>(start: number, page: (below: number) => Promise<CandidatePage<Row>>): AsyncGenerator<Row[]> {
  let below: number | null = start;
  do {
    const next: CandidatePage<Row> = await page(below);
    yield next.rows;
    below = next.next;
  } while (below !== null);
}

/**
 * Content stored aside, newest first: the content of files not indexed yet (read directly), then the index's
 * candidate chunks (with a requirement; the term dictionary lists the words of stored content too, so "none" holds
 * for them as for messages), or every indexed chunk in windows when the index cannot narrow the pattern. Each
 * batch's text is read from the files.
 */
async function* fileBatches(
  store: RetrievalStore,
  filter: SearchFilter,
  requirement: IndexRequirement | "none" | null,
  unindexed: readonly UnindexedFile[],
  unreadable: UnreadableFiles,
): AsyncGenerator<FileChunkHitRow[]> {
  yield* unindexedChunks(unindexed, unreadable);
  if (requirement === "none") return;
  if (requirement !== null) {
    let below: number | null = null;
    do {
      const page = await store.fileCandidates(filter, requirement, below, FILE_CHUNK_PAGE);
      yield await withChunkTexts(page.rows, unreadable);
      below = page.next;
    } while (below !== null);
    return;
  }
  let to = (await store.maxFileChunkId()) + 1;
  while (to > 1) {
    const from = Math.max(1, to - FILE_CHUNK_PAGE);
    yield await withChunkTexts(await store.scanFileChunks(filter, { from, to }), unreadable);
    to = from;
  }
}
