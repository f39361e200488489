/**
 * Full-text search over messages or summaries, the same for every backend: the store lists candidates from its
 * index (newest first, in widening windows of row ids, so no read grows with the history), rows the index has
 * not reached yet are read directly (newest first, within the time budget), and every candidate is matched and
 * ranked on its text here (text/text-matcher.ts, text-ranking.ts). A query's meaningful words must all occur
 * ("all words"); when too few documents hold them all, relevance order adds the best documents holding some of
 * them ("some words"), found through each of the query's rarer words and pairs of them.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { type DocumentMatch, QueryMatcher, stemKey, stemStart } from "../text/text-matcher.js";
import { queryTerms, termKey, type QueryTerm, type TextQuery } from "../text/text-query.js";
import type {
  CandidatePage,
  ContainsFilter,
  PreparedTextQuery,
  SearchSort,
  TextCandidates,
  TextSelection,
} from "../store/retrieval-store.js";
import { analyzeDocument } from "../text/text-analysis.js";
import { compareScores, type CorpusStatistics, type DocumentScore, inverseDocumentFrequency, scoreDocument } from "./text-ranking.js";

/** Relevance adds documents holding some of the words when fewer than this hold them all. */
const SOME_WORDS_BELOW = 10;
/** Candidates ranked for "all words" in relevance order. */
const ALL_WORDS_CANDIDATES = 120;
/** Newest matches read per rare word, and per pair of rare words, for "some words". */
const TERM_CANDIDATES = 25;
const PAIR_CANDIDATES = 20;
/** Share of the documents above which a word is read for "some words" only when it is among the two rarest. */
const COMMON_SHARE = 0.02;
/** Rare words (and pairs among the rarest of them) read for "some words". */
const RARE_TERMS = 4;
const PAIRED_TERMS = 3;
/** The first window of row ids read from the index; each next one is four times wider. */
const FIRST_WINDOW = 50_000;
/** Rows per direct read of rows not indexed yet (a read and its matching take a few ms). */
const SCAN_ROWS = 1_000;
/** Rows of the backlog's blocks examined per read (those that may hold the query's cores, filtered in SQL). */
const BLOCK_SCAN_ROWS = 4_096;
/** Candidates scored between two turns of the event loop. */
const SCORE_BATCH = 100;
/** Index reads stop widening after this long (the rest of the budget is for rows not indexed yet). */
const INDEX_TIME_MS = 40;
/**
 * Candidates held at most before the weakest are dropped (issue 30): a common word read directly from a backlog of a
 * million rows matched a seventh of them, and holding every match (its text, its match, its score) took the process
 * from 406 MB to 1,446 MB. Scores do not change during a search, so the best and the newest are all that can be
 * returned.
 */
const HELD_CANDIDATES = 4_000;

/** The reads of one kind of document a search needs (adapters over RetrievalStore). */
export interface TextSourceReader<Row extends { text: string }> {
  prepare(terms: QueryTerm[]): Promise<PreparedTextQuery>;
  candidates(prepared: PreparedTextQuery, selection: TextSelection, window: { from: number; to: number }, limit: number): Promise<TextCandidates<Row>>;
  /** Rows with id in [from, to), newest first, passing `contains`. */
  scan(window: { from: number; to: number }, contains: ContainsFilter | null): Promise<Row[]>;
  /** The widest window `scan` may examine with a `contains` (RetrievalStore.scanWindowMax); absent: SCAN_ROWS. */
  scanWindowMax?: number;
  /**
   * Rows above the index in [from, to] that may hold one of `anyOf`, through the backlog's trigram index (messages on
   * SQLite, spec 030 2b; RetrievalStore.backlogMessages), newest first; null when it does not cover the window.
   */
  backlog?(window: { from: number; to: number }, anyOf: readonly string[], limit: number): Promise<CandidatePage<Row> | null>;
  /**
   * Rows in [from, to] that may hold one of `anyOf` by the backlog's blocks and pass `contains`, newest first, about
   * `maxRows` rows of blocks examined (messages, spec 030 2c; RetrievalStore.backlogBlockRows); the rows of
   * the window above `next` not returned hold none. Null when the blocks do not cover `to`.
   */
  blockRows?(
    window: { from: number; to: number }, anyOf: readonly string[], contains: ContainsFilter | null, maxRows: number,
  ): Promise<{ rows: Row[]; next: number | null } | null>;
  /**
   * Rows that are in no index at all (content stored aside, not indexed yet), newest first, in batches; read and
   * matched before the index, within the search's time budget.
   */
  unindexed?(): AsyncIterable<Row[]>;
  idOf(row: Row): number;
  timeOf(row: Row): number;
  /**
   * The length in words a row is scored with, given where the query matched (default: the row's own). A chunk of
   * stored content is scored by the passage around its hits: its cut is an artifact of storage, not of what was said.
   */
  lengthOf?(row: Row, match: DocumentMatch): number;
}

export interface TextSearchRequest {
  query: TextQuery;
  sort: SearchSort;
  limit: number;
  /** Time allowed for the whole search, reading rows not indexed yet included. */
  budgetMs: number;
  /** Relevance: also documents holding only some terms, even when enough hold them all (expansion sources). */
  alwaysSomeWords?: boolean;
  /** The query already prepared for this reader (see `prepareTogether`), instead of preparing it again. */
  prepared?: PreparedTextQuery;
  /**
   * Statistics to score with instead of the reader's own index: when several sources are ranked together, one
   * collection for the inverse document frequencies, so a word is not rarer in one source's index than in another's.
   */
  statistics?: CorpusStatistics;
}

export interface TextHit<Row> {
  row: Row;
  match: DocumentMatch;
  score: DocumentScore;
}

export interface TextSearchResult<Row> {
  /** Best first (relevance), or newest first (recency). */
  hits: TextHit<Row>[];
  terms: QueryTerm[];
  /** The search stopped before covering all history in scope; `note` says how far it got. */
  truncated: boolean;
  note: string | null;
}

interface Scored<Row> extends TextHit<Row> {
  id: number;
  time: number;
}

export async function searchText<Row extends { text: string }>(
  reader: TextSourceReader<Row>,
  request: TextSearchRequest,
  now: () => number = () => performance.now(),
): Promise<TextSearchResult<Row>> {
  const started = now();
  const terms = queryTerms(request.query);
  const indexOf = new Map(terms.map((term, index) => [termKey(term), index]));
  const groups = request.query.groups.map((group) => meaningful(group).map((term) => indexOf.get(termKey(term))!));
  const prepared = request.prepared ?? await reader.prepare(terms);
  const statistics = request.statistics ?? prepared;
  const weights = termWeights(terms, statistics);
  const matcher = new QueryMatcher(terms);
  const found = new Map<number, Scored<Row>>();
  let scored = 0;
  const consider = async (row: Row, wordCount: number | null, requireMatch: boolean) => {
    const id = reader.idOf(row);
    if (found.has(id)) return;
    // Scoring reads each text: let the event loop run between batches of them.
    if (++scored % SCORE_BATCH === 0) await yieldToEventLoop();
    const match = { ...matcher.match(row.text), weights };
    const length = reader.lengthOf?.(row, match) ?? wordCount ?? estimateWords(row.text);
    const score = scoreDocument(match, terms, groups, length, statistics);
    if (requireMatch && score.matchedTerms.length === 0) return;
    found.set(id, { row, match, score, id, time: reader.timeOf(row) });
    if (found.size >= HELD_CANDIDATES) keepBest(found, Math.max(request.limit, ALL_WORDS_CANDIDATES));
  };

  const notes: string[] = [];
  let truncated = false;
  // Rows the backlog's trigram index covers are read as the index's candidates are (below); only newer ones directly.
  const deadline = started + request.budgetMs;
  const backlog = backlogReads(reader, prepared, terms, groups, matcher, () => now() > deadline);
  const top = backlog?.top ?? prepared.indexedThrough;
  const candidates = backlog?.candidates ?? ((selection, window, limit) => reader.candidates(prepared, selection, window, limit));
  // Newest first: rows not indexed yet are the newest of all.
  const tail = await scanTail(reader, prepared, top, terms, groups, matcher, deadline, now, (row) => consider(row, null, true));
  const unindexed = tail.stoppedAt === null ? await scanUnindexed(reader, groups, matcher, deadline, now, (row) => consider(row, null, true)) : "read";
  if (tail.stoppedAt !== null) {
    truncated = true;
    notes.push(
      `${prepared.newest - prepared.indexedThrough} of the newest rows are not in the full-text index yet (maintenance adds them); ` +
        `the search read them directly down to row ${tail.stoppedAt} before its ${request.budgetMs} ms budget ran out, and did not search older history.`,
    );
  } else if (unindexed === "stopped") {
    truncated = true;
    notes.push(
      `Content stored aside that is not in the full-text index yet (maintenance adds it) was read directly until the ${request.budgetMs} ms ` +
        "budget ran out; older stored content and the indexed history were not searched. Narrow with since/before, or search again shortly.",
    );
  } else {
    const wantAll = request.sort === "relevance" ? Math.max(ALL_WORDS_CANDIDATES, request.limit) : request.limit;
    // The trigram read is one query whatever the range (tens of ms over a 1M backlog's segments): made before the
    // widening windows' time starts, which it would otherwise use up before the second window.
    await backlog?.readAhead({ groups }, wantAll);
    const indexDeadline = Math.min(started + request.budgetMs, now() + INDEX_TIME_MS);
    // Few matches in all the index (and no backlog's trigram index in front of it, whose rows the frequencies do not
    // count): one read instead of the widening windows.
    const oneRead = !backlog && fewMatches(prepared, { groups }, wantAll) ? (row: Row) => reader.idOf(row) : null;
    const all = await readIndexed(candidates, top, { groups }, wantAll, request.limit, indexDeadline, now, (row) => consider(row, row.wordCount, false), oneRead);
    if (all.stoppedAt !== null) {
      truncated = true;
      notes.push(`Only matches from row ${all.stoppedAt} on were ranked (the search stops widening after ${INDEX_TIME_MS} ms); use "since"/"before" to reach older history.`);
    }
    const holdingAll = [...found.values()].filter((hit) => hit.score.allTerms === 1).length;
    // "Some words" fills in when few documents hold them all (a question, typically); with ten or more, those
    // are the answer and the reads it takes (a few per rare word) are saved.
    const someWords = request.sort === "relevance"
      ? request.alwaysSomeWords === true || holdingAll < Math.min(request.limit, SOME_WORDS_BELOW)
      : holdingAll === 0;
    if (someWords && meaningful(terms).length > 1) {
      await readSomeWords(candidates, top, prepared, terms, (row) => consider(row, row.wordCount, false));
    }
    const unread = backlog?.stoppedAt() ?? null;
    if (unread !== null) {
      truncated = true;
      notes.push(
        `${prepared.newest - prepared.indexedThrough} of the newest rows are not in the full-text index yet; the search read them through the ` +
          `backlog's trigram index down to row ${unread} before its ${request.budgetMs} ms budget ran out, and did not search older history.`,
      );
    }
  }

  const ranked = [...found.values()];
  const byRelevance = request.sort === "relevance" || !ranked.some((hit) => hit.score.allTerms === 1);
  if (byRelevance) ranked.sort((left, right) => compareScores(left.score, left.time, right.score, right.time));
  else ranked.splice(0, ranked.length, ...ranked.filter((hit) => hit.score.allTerms === 1).sort((left, right) => right.time - left.time || right.id - left.id));
  if (request.sort === "recency" && byRelevance && ranked.length > 0) {
    notes.push("No document holds every word, so these hold some of them, best first (not newest first).");
  }
  return { hits: ranked.slice(0, request.limit), terms, truncated, note: notes.length > 0 ? notes.join(" ") : null };
}

/**
 * Drops all but the `keep` best candidates by relevance and the `keep` newest holding every word (what either order
 * returns), so a search's memory does not grow with the rows it reads. Keeping at least `keep` of those holding every
 * word keeps the count that decides "some words" (fewer than SOME_WORDS_BELOW) the same.
 */
function keepBest<Row>(found: Map<number, Scored<Row>>, keep: number): void {
  const all = [...found.values()];
  const best = [...all].sort((left, right) => compareScores(left.score, left.time, right.score, right.time)).slice(0, keep);
  const newest = all.filter((hit) => hit.score.allTerms === 1).sort((left, right) => right.time - left.time || right.id - left.id).slice(0, keep);
  found.clear();
  for (const hit of [...best, ...newest]) found.set(hit.id, hit);
}

/** The terms that carry meaning (all of them when the query is only function words). */
function meaningful(terms: readonly QueryTerm[]): QueryTerm[] {
  const kept = terms.filter((term) => !term.isStopword);
  return kept.length > 0 ? kept : [...terms];
}

/**
 * Reads indexed candidates of `selection` newest first, in widening windows, until `want` rows, or `enough` rows
 * at the end of a window, or the deadline. With `oneRead` (the ids of rows, given when few documents match), one read
 * of the whole range instead, cut where the windows would have stopped.
 */
async function readIndexed<Row extends { text: string }>(
  candidates: CandidateRead<Row>,
  top: number,
  selection: TextSelection,
  want: number,
  enough: number,
  deadline: number,
  now: () => number,
  take: (row: Row & { wordCount: number }) => Promise<void>,
  oneRead: ((row: Row) => number) | null,
): Promise<{ stoppedAt: number | null }> {
  let to = top;
  let width = FIRST_WINDOW;
  let read = 0;
  if (to > FIRST_WINDOW && oneRead) {
    // So few matches in all the index that one read of it costs what the first window would: one read instead of
    // several (on a server's backend, round trips saved), cut where the windows would have stopped (same rows).
    const page = await candidates(selection, { from: 1, to }, want);
    for (const row of windowedPrefix(page.rows, oneRead, to, enough)) await take(row);
    await yieldToEventLoop();
    return { stoppedAt: null };
  }
  while (to >= 1 && read < want) {
    if (read > 0 && now() > deadline) return { stoppedAt: to + 1 };
    const from = Math.max(1, to - width + 1);
    const page = await candidates(selection, { from, to }, want - read);
    for (const row of page.rows) await take(row);
    read += page.rows.length;
    await yieldToEventLoop();
    // A window that gave a page of results is enough to rank: the next, four times wider, would cost four times
    // as much for a common word (an AND of three words found in a seventh of the messages: ~10 ms per 50,000).
    if (page.limitReached || read >= enough) break;
    to = from - 1;
    width *= 4;
  }
  return { stoppedAt: null };
}

/**
 * Whether the index holds at most `want` documents matching `selection` by the prepared frequencies: a group cannot
 * match more documents than its rarest term does, so the groups' rarest terms added up bound the matches.
 */
function fewMatches(prepared: PreparedTextQuery, selection: TextSelection, want: number): boolean {
  let bound = 0;
  for (const group of selection.groups) {
    if (group.length === 0) return false;
    bound += Math.min(...group.map((index) => prepared.frequencies[index] ?? Number.POSITIVE_INFINITY));
  }
  return bound <= want;
}

/**
 * Of the newest matches in all the index (newest first), those `readIndexed`'s widening windows from `to` down would
 * have read: up to the end of the first window by which `enough` were read.
 */
function windowedPrefix<Row>(rows: readonly Row[], idOf: (row: Row) => number, to: number, enough: number): Row[] {
  let from = to - FIRST_WINDOW + 1;
  for (let width = FIRST_WINDOW; from > 1; width *= 4, from -= width) {
    const read = rows.findIndex((row) => idOf(row) < from);
    if (read === -1) return [...rows];
    if (read >= enough) return rows.slice(0, read);
  }
  return [...rows];
}

/**
 * "Some words": the newest matches of each of the rarer meaningful terms, and of pairs among the rarest, so the
 * documents sharing the most telling words with the query are among the candidates.
 */
async function readSomeWords<Row extends { text: string }>(
  candidates: CandidateRead<Row>,
  top: number,
  prepared: PreparedTextQuery,
  terms: readonly QueryTerm[],
  take: (row: Row & { wordCount: number }) => Promise<void>,
): Promise<void> {
  const rare = terms.map((_, index) => index)
    .filter((index) => !terms[index]!.isStopword && (prepared.frequencies[index] ?? 0) > 0)
    .sort((left, right) => prepared.frequencies[left]! - prepared.frequencies[right]!)
    .slice(0, RARE_TERMS);
  const whole = { from: 1, to: top };
  const reads: { selection: TextSelection; limit: number }[] = [];
  for (let first = 0; first < Math.min(PAIRED_TERMS, rare.length); first++) {
    for (let second = first + 1; second < Math.min(PAIRED_TERMS, rare.length); second++) {
      reads.push({ selection: { groups: [[rare[first]!, rare[second]!]] }, limit: PAIR_CANDIDATES });
    }
  }
  // A word in more than COMMON_SHARE of the documents adds only its newest mentions: the pairs cover it.
  for (const [position, index] of rare.entries()) {
    if (position >= 2 && prepared.frequencies[index]! > COMMON_SHARE * prepared.documents) break;
    reads.push({ selection: { groups: [[index]] }, limit: TERM_CANDIDATES });
  }
  // The reads do not depend on each other: all at once (a server's backend answers them on several connections),
  // taken in the order above.
  const pages = reads.map((read) => candidates(read.selection, whole, read.limit));
  for (const page of pages) page.catch(() => undefined);
  for (const page of pages) {
    for (const row of (await page).rows) await take(row);
    await yieldToEventLoop();
  }
}

/**
 * Reads the rows above `floor` (the index, or the backlog's trigram index), newest first, in windows filtered in SQL
 * by substrings every match contains, and matches them here. Stops at the deadline (`stoppedAt`: the lowest row id
 * not read).
 */
async function scanTail<Row extends { text: string }>(
  reader: TextSourceReader<Row>,
  prepared: PreparedTextQuery,
  floor: number,
  terms: readonly QueryTerm[],
  groups: readonly number[][],
  matcher: QueryMatcher,
  deadline: number,
  now: () => number,
  take: (row: Row) => Promise<void>,
): Promise<{ stoppedAt: number | null }> {
  if (prepared.newest <= floor) return { stoppedAt: null };
  const contains = tailFilter(terms, groups);
  let to = prepared.newest + 1;
  let width = SCAN_ROWS;
  while (to > floor + 1) {
    if (now() > deadline) return { stoppedAt: to };
    const from = Math.max(floor + 1, to - width);
    const rows = await reader.scan({ from, to }, contains);
    for (const row of rows) {
      if (QueryMatcher.holdsGroup(matcher.match(row.text), groups.length > 0 ? groups : [[]])) await take(row);
    }
    to = from;
    width = widerScan(width, rows.length, contains === null ? undefined : reader.scanWindowMax);
    await yieldToEventLoop();
  }
  return { stoppedAt: null };
}

/** Reads and matches the rows in no index (TextSourceReader.unindexed) until the deadline: "stopped" when it ran out. */
async function scanUnindexed<Row extends { text: string }>(
  reader: TextSourceReader<Row>,
  groups: readonly number[][],
  matcher: QueryMatcher,
  deadline: number,
  now: () => number,
  take: (row: Row) => Promise<void>,
): Promise<"read" | "stopped"> {
  if (!reader.unindexed) return "read";
  const batches = reader.unindexed()[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await batches.next();
      if (next.done) return "read";
      if (now() > deadline) return "stopped";
      for (const row of next.value) {
        if (QueryMatcher.holdsGroup(matcher.match(row.text), groups.length > 0 ? groups : [[]])) await take(row);
      }
      await yieldToEventLoop();
    }
  } finally {
    await batches.return?.();
  }
}

/**
 * The next scan window's width: four times wider, up to `max`, after a window whose filter passed fewer than a tenth
 * of SCAN_ROWS (a server's backend filters a window in SQL and sends only what passes, RetrievalStore.scanWindowMax);
 * unchanged without a `max`.
 */
export function widerScan(width: number, passed: number, max: number | undefined): number {
  return max !== undefined && passed < SCAN_ROWS / 10 ? Math.min(max, width * 4) : width;
}

/** A read of candidates for `selection` in a window of ids, newest first, at most `limit` (TextSourceReader.candidates). */
type CandidateRead<Row> = (selection: TextSelection, window: { from: number; to: number }, limit: number) => Promise<TextCandidates<Row>>;

/** Entries of the backlog's trigram index examined per read (its candidates are matched here). */
const BACKLOG_PAGE = 1_000;

/**
 * While the backlog's trigram index covers rows above the full-text index (spec 030, 2b): reads of candidates over
 * every row, as if the index reached the newest (`top`). Rows above what the trigram index covers are read directly,
 * newest first, and matched; below it and above the full-text index, a selection's candidates are the rows the trigram index
 * gives for its terms' cores that the matcher finds holding one of its groups (what the full-text index lists for
 * them), with their length in words from the same analysis the index stores. A read stops when `isPastBudget`
 * (`stoppedAt`). Null when it covers nothing here or a core of the query is shorter than a trigram: the rows above
 * the index are then read directly, as before.
 */
function backlogReads<Row extends { text: string }>(
  reader: TextSourceReader<Row>,
  prepared: PreparedTextQuery,
  terms: readonly QueryTerm[],
  groups: readonly number[][],
  matcher: QueryMatcher,
  isPastBudget: () => boolean,
): {
  top: number;
  candidates: CandidateRead<Row>;
  readAhead: (selection: TextSelection, limit: number) => Promise<unknown>;
  /** The newest row a read left unread when the budget ran out (null: none stopped). */
  stoppedAt: () => number | null;
} | null {
  const covered = Math.max(prepared.indexedThrough, Math.min(prepared.backlogThrough ?? 0, prepared.newest));
  const blockRows = reader.blockRows?.bind(reader);
  const blocksThrough = blockRows ? Math.min(prepared.backlogBlocksThrough ?? 0, prepared.newest) : 0;
  const backlog = reader.backlog?.bind(reader);
  if ((!backlog && !blockRows) || Math.max(covered, blocksThrough) <= prepared.indexedThrough || coresOf(terms, groups) === null) return null;
  // Rows above what the trigram index covers (arrived during the run, or not reached yet by its fill) are read
  // directly, newest first, a window of SCAN_ROWS at a time, in the same reads: the windows start at the newest row.
  // The backlog's blocks, where they cover those rows, say which runs of them cannot hold the selection's cores:
  // those are passed over unread.
  const top = prepared.newest;
  // Per selection, what was read so far, newest first, contiguous from `top` down: a query of the trigram index
  // costs about the same for any range (one probe per trigram and segment), so the widening windows of readIndexed
  // are answered from what one read gave where they can.
  const reads = new Map<string, {
    anyOf: string[]; contains: ContainsFilter | null; matched: { row: Row; wordCount: number | null }[]; unreadTo: number | null;
  }>();
  let stoppedAt: number | null = null;
  const above = async (selection: TextSelection, window: { from: number; to: number }, limit: number) => {
    const key = JSON.stringify(selection.groups);
    let read = reads.get(key);
    if (!read) {
      const anyOf = coresOf(terms, selection.groups);
      if (anyOf === null) return { rows: [], limitReached: false };
      read = { anyOf, contains: tailFilter(terms, selection.groups), matched: [], unreadTo: top };
      reads.set(key, read);
    }
    const inWindow = () => read.matched.filter((hit) => reader.idOf(hit.row) >= window.from && reader.idOf(hit.row) <= window.to);
    while (read.unreadTo !== null && read.unreadTo >= window.from && inWindow().length < limit) {
      if (isPastBudget()) {
        stoppedAt = Math.max(stoppedAt ?? 0, read.unreadTo);
        break;
      }
      if (read.unreadTo > covered) {
        const page = blockRows && read.unreadTo <= blocksThrough
          ? await blockRows({ from: covered + 1, to: read.unreadTo }, read.anyOf, read.contains, BLOCK_SCAN_ROWS)
          : null;
        if (page) {
          for (const row of page.rows) {
            if (QueryMatcher.holdsGroup(matcher.match(row.text), selection.groups)) read.matched.push({ row, wordCount: null });
          }
          read.unreadTo = page.next ?? covered;
          await yieldToEventLoop();
          continue;
        }
        const from = Math.max(covered + 1, read.unreadTo - SCAN_ROWS + 1);
        for (const row of await reader.scan({ from, to: read.unreadTo + 1 }, read.contains)) {
          if (QueryMatcher.holdsGroup(matcher.match(row.text), selection.groups)) read.matched.push({ row, wordCount: null });
        }
        read.unreadTo = from - 1;
        await yieldToEventLoop();
        continue;
      }
      // Below `covered` and above the index: only where a trigram index covers rows (`covered` is the index otherwise).
      const page = backlog ? await backlog({ from: prepared.indexedThrough + 1, to: read.unreadTo }, read.anyOf, BACKLOG_PAGE) : null;
      if (page === null) throw new Error(`The backlog's trigram index no longer covers rows up to ${read.unreadTo}; search again.`);
      for (const row of page.rows) {
        if (QueryMatcher.holdsGroup(matcher.match(row.text), selection.groups)) read.matched.push({ row, wordCount: null });
      }
      read.unreadTo = page.next === null || page.next - 1 <= prepared.indexedThrough ? null : page.next - 1;
      await yieldToEventLoop();
    }
    const rows = inWindow().slice(0, limit).map((hit) => ({ ...hit.row, wordCount: (hit.wordCount ??= wordsOf(hit.row.text)) }));
    return { rows, limitReached: rows.length >= limit };
  };
  const candidates: CandidateRead<Row> = async (selection, window, limit) => {
    if (window.to <= prepared.indexedThrough) return reader.candidates(prepared, selection, window, limit);
    const upper = await above(selection, { from: Math.max(window.from, prepared.indexedThrough + 1), to: window.to }, limit);
    if (upper.limitReached || window.from > prepared.indexedThrough) return upper;
    const lower = await reader.candidates(prepared, selection, { from: window.from, to: prepared.indexedThrough }, limit - upper.rows.length);
    return { rows: [...upper.rows, ...lower.rows], limitReached: lower.limitReached };
  };
  return {
    top, candidates, stoppedAt: () => stoppedAt,
    readAhead: (selection, limit) => above(selection, { from: prepared.indexedThrough + 1, to: top }, limit),
  };
}

/** The trigram index's substrings for `groups` (tailFilter's cores, any script), or null when one is too short. */
function coresOf(terms: readonly QueryTerm[], groups: readonly number[][]): string[] | null {
  const anyOf = groupCores(terms, groups);
  if (anyOf === null || anyOf.length === 0 || anyOf.some((core) => [...core].length < MIN_TRIGRAM_CORE)) return null;
  return anyOf;
}

/** Shortest core the backlog's trigram index can look for. */
const MIN_TRIGRAM_CORE = 3;

/** A row's length in words as the full-text index stores it (the words of its analysis). */
function wordsOf(text: string): number {
  const words = analyzeDocument(text).words;
  return words === "" ? 0 : words.split(" ").length;
}

/**
 * Substrings every row holding one of `groups` contains: per group, the cores of its term with the longest core
 * (a term is found through its words, a form starting like its stem, or its fragments). Null when some core is
 * not plain ASCII (SQL LIKE folds ASCII case only).
 */
function tailFilter(terms: readonly QueryTerm[], groups: readonly number[][]): ContainsFilter | null {
  const anyOf = groupCores(terms, groups);
  if (anyOf === null || anyOf.some((core) => !/^[a-z0-9]+$/.test(core))) return null;
  return anyOf.length > 0 ? { anyOf, keepNonAscii: true } : null;
}

/**
 * Per group, the cores of its term with the longest shortest core, all groups' together (each row holding a group
 * holds one of them); null when a group has no term.
 */
function groupCores(terms: readonly QueryTerm[], groups: readonly number[][]): string[] | null {
  const anyOf = new Set<string>();
  for (const group of groups) {
    const cores = group.map((index) => termCores(terms[index]!));
    const best = cores.sort((left, right) => Math.min(...right.map((core) => core.length)) - Math.min(...left.map((core) => core.length)))[0];
    if (!best) return null;
    for (const core of best) anyOf.add(core);
  }
  return [...anyOf];
}

/** Substrings one of which every occurrence of `term` contains. */
function termCores(term: QueryTerm): string[] {
  const cores = new Set<string>([term.words[0]!]);
  const stem = stemKey(term);
  if (stem !== null) cores.add(stemStart(stem));
  if (term.fragments.length > 1) cores.add(term.fragments.reduce((longest, fragment) => (fragment.length > longest.length ? fragment : longest)));
  // A shorter core makes a longer one that contains it redundant.
  return [...cores].filter((core) => ![...cores].some((other) => other !== core && core.includes(other)));
}

/** Words in a text not read through the index (its length for BM25): about one per six characters. */
function estimateWords(text: string): number {
  return Math.max(1, Math.round(text.length / 6));
}

/**
 * Prepares one query for several sources searched and ranked together, and the statistics they share: documents and
 * per-term frequencies summed over the sources (one collection for IDF), each source keeping its own mean length
 * (`averageWords` of the source at that index; a source of passages scores against `passageAverage` instead).
 */
export async function prepareTogether(
  readers: readonly { reader: Pick<TextSourceReader<{ text: string }>, "prepare">; passages?: boolean }[],
  query: TextQuery,
): Promise<{ prepared: PreparedTextQuery; statistics: CorpusStatistics }[]> {
  const terms = queryTerms(query);
  const prepared = await Promise.all(readers.map(({ reader }) => reader.prepare(terms)));
  const documents = prepared.reduce((sum, each) => sum + each.documents, 0);
  const frequencies = terms.map((_, index) => prepared.reduce((sum, each) => sum + (each.frequencies[index] ?? 0), 0));
  // Passages are about as long as messages: scored against the messages' mean length (the first source that is not passages).
  const passageAverage = prepared.find((_, index) => !readers[index]!.passages)?.averageWords ?? PASSAGE_WORDS;
  return prepared.map((each, index) => ({
    prepared: each,
    statistics: { documents, frequencies, averageWords: readers[index]!.passages ? passageAverage : each.averageWords },
  }));
}

/** Mean length of a passage around a chunk's hits when no other source states one (about four lines of prose). */
const PASSAGE_WORDS = 40;

/** How telling each term is for snippets and excerpts: its inverse document frequency; function words nothing. */
export function termWeights(terms: readonly QueryTerm[], statistics: CorpusStatistics): number[] {
  return terms.map((term, index) => (term.isStopword ? 0 : inverseDocumentFrequency(statistics.documents, statistics.frequencies[index] ?? 0)));
}
