/**
 * How well a document matches a full-text query, computed on its text (text/text-matcher.ts) so that every
 * backend ranks alike. Documents holding every term (of one OR-alternative) come first, ordered by the terms as
 * a phrase (in query order, at most one short word between them), then how close together they are, then BM25
 * (k1 1.2, b 0.75) with each hit weighed by how it matched (its own words over another form, a fragment or a
 * word it begins), then newer first. Documents holding some terms follow, by BM25 with small bonuses for more
 * terms, a phrase and closeness, scaled by the share of the query's information they hold (compareScores).
 */
import type { DocumentMatch, HitKind, TermHit } from "../text/text-matcher.js";
import type { QueryTerm } from "../text/text-query.js";

const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 0.01;
/**
 * How much one hit counts, by how the term was found. Another form of the word (Sunday for Sundays) is nearly the
 * word: at 0.7 a paste saying "every Sunday" under a question's rare name ranked below short near misses holding
 * "Sundays" (the bench's one recall miss, issue 22); the form typed still ranks first.
 */
const KIND_WEIGHT: Record<HitKind, number> = { exact: 1, stem: 0.9, fragment: 0.6, prefix: 0.5 };
/** Most characters between two words of a phrase. */
const PHRASE_GAP = 8;

export interface CorpusStatistics {
  documents: number;
  averageWords: number;
  /** Per term: documents holding it. */
  frequencies: readonly number[];
}

export interface DocumentScore {
  /** 1 when the document holds every term of one alternative, else 0. */
  allTerms: number;
  /** Distinct meaningful terms found (stopwords count only in a query made of them). */
  coverage: number;
  /** 1 when the terms follow each other as typed. */
  phrase: number;
  /** Smaller is closer: log2 of the span, in characters, holding one hit of each term found (0 for one term). */
  spread: number;
  bm25: number;
  /**
   * The share of the query's information the document holds, 0 to 1: the inverse document frequencies of the
   * meaningful terms it holds (each by its best kind of hit) over those of all its meaningful terms, for the
   * alternative it holds most of. Terms no document holds count in neither.
   */
  information: number;
  /** Indexes of the terms found. */
  matchedTerms: number[];
}

/** Scores one document; `wordCount` is its length in words, `groups` the query's alternatives. */
export function scoreDocument(
  match: DocumentMatch,
  terms: readonly QueryTerm[],
  groups: readonly number[][],
  wordCount: number,
  statistics: CorpusStatistics,
): DocumentScore {
  const matchedTerms = terms.map((_, index) => index).filter((index) => match.hits[index]!.length > 0);
  const meaningful = terms.some((term) => !term.isStopword);
  const coverage = matchedTerms.filter((index) => !meaningful || !terms[index]!.isStopword).length;
  const allTerms = groups.some((group) => group.every((index) => match.hits[index]!.length > 0)) ? 1 : 0;
  const normalization = K1 * (1 - B + (B * Math.max(1, wordCount)) / Math.max(1, statistics.averageWords));
  let bm25 = 0;
  for (const index of matchedTerms) {
    const frequency = match.hits[index]!.reduce((sum, hit) => sum + KIND_WEIGHT[hit.kind], 0);
    const idf = inverseDocumentFrequency(statistics.documents, statistics.frequencies[index] ?? 0);
    bm25 += (idf * frequency * (K1 + 1)) / (frequency + normalization);
  }
  let information = 0;
  for (const group of groups) {
    let held = 0;
    let total = 0;
    for (const index of group) {
      if ((meaningful && terms[index]!.isStopword) || (statistics.frequencies[index] ?? 0) === 0) continue;
      const idf = inverseDocumentFrequency(statistics.documents, statistics.frequencies[index]!);
      total += idf;
      held += idf * Math.max(0, ...match.hits[index]!.map((hit) => KIND_WEIGHT[hit.kind]));
    }
    information = Math.max(information, total > 0 ? held / total : 1);
  }
  const ordered = matchedTerms.filter((index) => !terms[index]!.isStopword || !meaningful);
  return {
    allTerms,
    coverage,
    phrase: ordered.length > 1 && isPhrase(match, ordered) ? 1 : 0,
    spread: ordered.length > 1 ? Math.ceil(Math.log2(1 + shortestSpan(ordered.map((index) => match.hits[index]!)))) : 0,
    bm25,
    information,
    matchedTerms,
  };
}

/** Inverse document frequency as BM25 defines it, floored so a term in most documents still counts a little. */
export function inverseDocumentFrequency(documents: number, frequency: number): number {
  return Math.max(MIN_IDF, Math.log((documents - frequency + 0.5) / (frequency + 0.5)));
}

/**
 * Best first. Documents holding every term: phrase, then closeness, then BM25, then newer. Documents holding
 * only some: BM25 (so a rare word outweighs two common ones), raised a little per extra term found and for a
 * phrase, then newer. `time` breaks ties.
 */
export function compareScores(left: DocumentScore, leftTime: number, right: DocumentScore, rightTime: number): number {
  if (left.allTerms !== right.allTerms) return right.allTerms - left.allTerms;
  if (left.allTerms === 1) {
    return right.phrase - left.phrase || left.spread - right.spread || right.bm25 - left.bm25 || rightTime - leftTime;
  }
  return someTermsScore(right) - someTermsScore(left) || rightTime - leftTime;
}

/**
 * How well a document holding only some terms matches: BM25, raised by 15% per term found beyond the first, 25%
 * for a phrase, and up to 15% for closeness (spread 0 gives all of it, 12 or more none), times the share of the
 * query's information it holds. That share is what weighs a missing rare word: "the zqfenwevu team keeps its
 * on-call rotation on Sundays" holds three words of "Who takes over the zqbasovu on-call rotation on Sundays?" as a
 * phrase, but not its rarest, the name the question is about (the bench's recall miss at 100k, issue 22). Lucene's
 * classic coordination factor, weighed by inverse document frequency instead of counting terms.
 */
export function someTermsScore(score: DocumentScore): number {
  const closeness = score.coverage > 1 ? Math.max(0, 12 - score.spread) / 12 : 0;
  return score.bm25 * (1 + 0.15 * Math.max(0, score.coverage - 1) + 0.25 * score.phrase + 0.15 * closeness) * score.information;
}

/**
 * Whether some hit of each term follows the previous term's hit, in query order, with at most one short word
 * between them ("rotate the staging" for rotate staging).
 */
function isPhrase(match: DocumentMatch, ordered: readonly number[]): boolean {
  const text = match.text;
  const [first, ...rest] = ordered;
  return match.hits[first!]!.some((start) => {
    let end = start.end;
    for (const index of rest) {
      const next = match.hits[index]!.find((hit) => hit.start >= end && hit.start - end <= PHRASE_GAP && isPhraseGap(text.slice(end, hit.start)));
      if (!next) return false;
      end = next.end;
    }
    return true;
  });
}

/** What may stand between two words of a phrase: separators and at most one word of up to four letters. */
function isPhraseGap(gap: string): boolean {
  const words = gap.match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.length === 0 || (words.length === 1 && words[0]!.length <= 4);
}

/** The shortest stretch of text (in characters) holding one hit of every list. */
function shortestSpan(lists: readonly TermHit[][]): number {
  const events = lists.flatMap((hits, list) => hits.map((hit) => ({ list, start: hit.start, end: hit.end })))
    .sort((left, right) => left.start - right.start);
  const counts = new Array<number>(lists.length).fill(0);
  let covered = 0;
  let best = Number.POSITIVE_INFINITY;
  let from = 0;
  for (let to = 0; to < events.length; to++) {
    if (counts[events[to]!.list]!++ === 0) covered++;
    while (covered === lists.length) {
      best = Math.min(best, events[to]!.end - events[from]!.start);
      if (--counts[events[from]!.list]! === 0) covered--;
      from++;
    }
  }
  return Number.isFinite(best) ? best : 1e6;
}
