/**
 * BM25 computed here, for full-text queries with a word found in very many messages. FTS5's own bm25() starts
 * every query by counting each term's documents over its whole doclist (40 ms for a word in most of a million
 * messages, before a single row is ranked). For such queries the store ranks the newest matches with this
 * function instead: the same formula and constants as FTS5 (k1 = 1.2, b = 0.75, idf floored at 1e-6), term
 * frequencies counted in the message text, document frequencies estimated by the store from the newest matches.
 *
 * Term frequencies are counted the way the unicode61 tokenizer splits text (runs of letters and digits, case and
 * diacritics folded); the candidates themselves always come from the index, so a counting difference can only
 * move a message in the order, never add or drop one.
 */

/** A term of a sanitized MATCH expression: a word or a "quoted phrase", optionally a prefix. */
export interface MatchTerm {
  text: string;
  prefix: boolean;
}

export interface CorpusStats {
  /** Documents in the index. */
  documents: number;
  /** Mean document length in tokens. */
  averageLength: number;
}

export interface ScoredDocument {
  text: string;
  /** Length in tokens. */
  length: number;
}

const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 1e-6;

/**
 * The distinct terms of a MATCH expression made by fts-query.ts: double-quoted strings (quotes doubled inside),
 * each optionally followed by `*`, joined by AND, OR and parentheses.
 */
export function matchTerms(match: string): MatchTerm[] {
  const terms = new Map<string, MatchTerm>();
  for (const found of match.matchAll(/"((?:[^"]|"")*)"(\*?)/g)) {
    const term = { text: found[1]!.replaceAll('""', '"'), prefix: found[2] === "*" };
    terms.set(`${term.prefix ? "p" : "w"}:${term.text.toLowerCase()}`, term);
  }
  return [...terms.values()];
}

/** The MATCH expression that lists the documents holding one term. */
export function termMatch(term: MatchTerm): string {
  return `"${term.text.replaceAll('"', '""')}"${term.prefix ? "*" : ""}`;
}

/** Inverse document frequency as FTS5's bm25() computes it. */
export function inverseDocumentFrequency(documents: number, frequency: number): number {
  const idf = Math.log((documents - frequency + 0.5) / (frequency + 0.5));
  return idf > 0 ? idf : MIN_IDF;
}

/**
 * BM25 scores (higher is better) of each document for the terms, whose document frequencies are given in the
 * same order.
 */
export function bm25Scores(documents: readonly ScoredDocument[], terms: readonly MatchTerm[], frequencies: readonly number[], stats: CorpusStats): number[] {
  const matchers = terms.map(termPattern);
  const weights = frequencies.map((frequency) => inverseDocumentFrequency(stats.documents, frequency));
  const averageLength = stats.averageLength > 0 ? stats.averageLength : 1;
  return documents.map((document) => {
    const text = foldText(document.text);
    const normalization = K1 * (1 - B + (B * document.length) / averageLength);
    let score = 0;
    matchers.forEach((pattern, index) => {
      const frequency = countMatches(pattern, text);
      if (frequency > 0) score += (weights[index]! * frequency * (K1 + 1)) / (frequency + normalization);
    });
    return score;
  });
}

/** The term as whole tokens: words separated by any non-token characters; a prefix term's last word may go on. */
function termPattern(term: MatchTerm): RegExp {
  const words = foldText(term.text).split(/[^\p{L}\p{N}]+/u).filter((word) => word !== "");
  const body = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^\\p{L}\\p{N}]+");
  return new RegExp(`(?<![\\p{L}\\p{N}])${body}${term.prefix ? "" : "(?![\\p{L}\\p{N}])"}`, "gu");
}

function countMatches(pattern: RegExp, text: string): number {
  pattern.lastIndex = 0;
  let count = 0;
  while (pattern.exec(text) !== null) count++;
  return count;
}

/** Lower case without diacritics (unicode61 remove_diacritics 2); ASCII text only needs the lower-casing. */
function foldText(text: string): string {
  const lower = text.toLowerCase();
  // eslint-disable-next-line no-control-regex
  return /^[\x00-\x7f]*$/.test(lower) ? lower : lower.normalize("NFD").replace(/\p{M}/gu, "");
}
