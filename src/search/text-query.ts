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
    groups.at(-1)!.push(term);
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
