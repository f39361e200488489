/**
 * A full-text query as a structure every backend compiles for itself, parsed from what a model or user typed.
 * The only syntax recognised: "quoted phrases", a trailing * for a prefix, and a bare upper-case OR between
 * terms; every other character is text. No input can reach a backend's own query language, because a backend
 * receives words, never a query string.
 */
import { isUnspacedWord, queryFragmentsOf, words as wordsOf } from "./text-analysis.js";

/** Most terms one query may hold; more only slow the search down without narrowing it usefully. */
export const MAX_QUERY_TERMS = 32;

/** One term: a word, or words that must follow each other (a quoted phrase, or `user_id`, `src/a.ts`). */
export interface QueryTerm {
  /** The folded words, in order (at least one). */
  words: string[];
  /** As typed, without quotes or the trailing *: camelCase fragments depend on its case. */
  original: string;
  /** Written in double quotes: only these words, in this order. */
  quoted: boolean;
  /** Written with a trailing *: the last word may be the start of a longer word. */
  prefix: boolean;
  /** Fragments of a one-word term (camelCase and letter/digit parts, pairs of unspaced scripts), else empty. */
  fragments: string[];
  /** The term is one character of an unspaced script: found at the start of a pair (its only fragment). */
  fragmentPrefix: boolean;
  /** A one-word term in a script written without spaces (Chinese, Japanese, Thai…): found inside longer runs. */
  unspaced: boolean;
  /** A function word (the, what, …): needed for "all words", ignored when ranking by some words. */
  isStopword: boolean;
  /**
   * Other word sequences that are this term as written another way: a number and its unit with or without the
   * space (`33156.65 ms` is also `33156.65ms`, and the reverse). Found like `words`.
   */
  alternatives?: string[][];
}

/** Alternatives (a bare OR between terms); a message matches an alternative when it holds every term of it. */
export interface TextQuery {
  groups: QueryTerm[][];
}

const STOPWORDS = new Set(
  ("a about after all also am an and any are as at be been before but by can could did do does doing for from " +
    "get got had has have he her here him his how i if in into is it its just me more my no not now of on or our " +
    "out over she should so some than that the their them then there these they this those to up us was we were " +
    "what when where which while who whom why will with would you your")
    .split(" "),
);

/** Whether a folded word carries no meaning of its own for ranking (the, what, …). */
export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/** The query for `text`, or null when it holds no word or number. */
export function parseTextQuery(text: string): TextQuery | null {
  const groups: QueryTerm[][] = [[]];
  let count = 0;
  for (const piece of pieces(text)) {
    if (!piece.quoted && piece.text === "OR") {
      if (groups.at(-1)!.length > 0) groups.push([]);
      continue;
    }
    const term = toTerm(piece);
    if (!term || count >= MAX_QUERY_TERMS) continue;
    const group = groups.at(-1)!;
    const previous = group.at(-1);
    const withUnit = previous ? joinUnit(previous, term) : null;
    if (withUnit) {
      group[group.length - 1] = withUnit;
      continue;
    }
    group.push(withSplitUnit(term));
    count++;
  }
  const filled = groups.filter((group) => group.length > 0);
  return filled.length === 0 ? null : { groups: filled };
}

/** Every distinct term of a query, in order of first appearance. */
export function queryTerms(query: TextQuery): QueryTerm[] {
  const seen = new Map<string, QueryTerm>();
  for (const term of query.groups.flat()) {
    const key = termKey(term);
    if (!seen.has(key)) seen.set(key, term);
  }
  return [...seen.values()];
}

/** Identifies a term: its words, whether quoted, whether a prefix. */
export function termKey(term: QueryTerm): string {
  return `${term.quoted ? "q" : "w"}${term.prefix ? "*" : ""}:${term.words.join(" ")}`;
}

interface Piece {
  text: string;
  quoted: boolean;
}

// Control characters (NUL included) mean nothing to search and are dropped before anything else.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

function* pieces(text: string): Generator<Piece> {
  const cleaned = text.replace(CONTROL_CHARACTERS, " ");
  const pattern = /"([^"]*)"?|(\S+)/g;
  for (let match = pattern.exec(cleaned); match; match = pattern.exec(cleaned)) {
    if (match[1] !== undefined) yield { text: match[1], quoted: true };
    else if (match[2] !== undefined) {
      // A bare word may hold quotes in the middle (`foo"bar`): each side is a word of its own.
      for (const part of match[2].split('"')) if (part !== "") yield { text: part, quoted: false };
    }
  }
}

function toTerm(piece: Piece): QueryTerm | null {
  let original = piece.text.trim();
  let prefix = false;
  if (!piece.quoted && original.endsWith("*")) {
    original = original.replace(/\*+$/, "");
    prefix = true;
  }
  const found = wordsOf(original);
  if (found.length === 0) return null;
  const words = found.map((word) => word.text);
  const fragments = found.length === 1 ? queryFragmentsOf(original.slice(found[0]!.start, found[0]!.end)) : { fragments: [], prefix: false };
  return {
    words,
    original,
    quoted: piece.quoted,
    prefix,
    fragments: fragments.fragments,
    fragmentPrefix: fragments.prefix,
    unspaced: found.length === 1 && isUnspacedWord(original.slice(found[0]!.start, found[0]!.end)),
    isStopword: words.length === 1 && isStopword(words[0]!),
  };
}

/** Units written after a number, with or without a space (`250 ms`, `250ms`): folded. */
const UNITS = new Set(
  ("ms s sec secs min mins h hr hrs d day days us ns b kb mb gb tb kib mib gib k m x px em rem pt fps rps qps tps hz " +
    "khz mhz ghz v mv w kw kwh c f g kg mg km cm mm tok tokens").split(" "),
);
const DIGITS = /^\p{N}+$/u;
/** A folded word that is a number glued to a unit (`65ms`): the number and the unit. */
const NUMBER_AND_UNIT = /^(\p{N}+)(\p{L}+)$/u;

/**
 * A number term followed by a unit term (`33156.65` `ms`): one term for both, also found glued (`33156.65ms`).
 * Null when the two are not a number and its unit.
 */
function joinUnit(number: QueryTerm, unit: QueryTerm): QueryTerm | null {
  if (number.quoted || number.prefix || unit.quoted || unit.prefix || number.alternatives) return null;
  if (!number.words.every((word) => DIGITS.test(word)) || unit.words.length !== 1 || !UNITS.has(unit.words[0]!)) return null;
  const head = number.words.slice(0, -1);
  return {
    ...number,
    words: [...number.words, unit.words[0]!],
    original: `${number.original} ${unit.original}`,
    fragments: [],
    fragmentPrefix: false,
    isStopword: false,
    alternatives: [[...head, `${number.words.at(-1)!}${unit.words[0]!}`]],
  };
}

/** A term ending in a number glued to its unit (`33156.65ms`): also found with a space (`33156.65 ms`). */
function withSplitUnit(term: QueryTerm): QueryTerm {
  const parts = NUMBER_AND_UNIT.exec(term.words.at(-1)!);
  if (term.quoted || !parts || !UNITS.has(parts[2]!) || !term.words.slice(0, -1).every((word) => DIGITS.test(word))) return term;
  return { ...term, alternatives: [[...term.words.slice(0, -1), parts[1]!, parts[2]!]] };
}
