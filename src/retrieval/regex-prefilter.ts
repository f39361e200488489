/**
 * Narrows a regex search before the regex runs, without ever losing a match. From the text every match must
 * contain it derives:
 * - an FTS5 expression, when some required word is known to start at a token boundary (the full-text index
 *   then lists the only rows that can match, so the search covers all history in milliseconds);
 * - for messages, also from a required word known only to END at a boundary ("INC" in `INC-\d+`, which may end
 *   "XINC"): the index terms that end with it, looked up in the term dictionary (`suffixMatch`);
 * - otherwise, SQL LIKE substrings (ASCII, which LIKE folds exactly as the case-insensitive regex does), so
 *   SQLite skips non-matching rows in C instead of handing every row to JavaScript (LIKE stops at a NUL
 *   character, so the store passes every row holding one to the regex as well).
 * Both are supersets of the regex's matches by construction; anything uncertain is dropped, never guessed.
 */
import type { RegexNode } from "./regex-syntax.js";
import type { SearchRegex } from "./regex-policy.js";

export interface RegexPrefilter {
  /** FTS5 MATCH expression listing every row that can match, or null. */
  match: string | null;
  /** Per alternative: the FTS5 terms it requires (as in `match`) and the words it requires at a token's end. */
  branches: PrefilterBranch[];
  /** One required substring per alternative (a row must contain one of them), or null. */
  containsAny: string[] | null;
}

export interface PrefilterBranch {
  terms: string[];
  /** Lowercase ASCII words, each with a letter, that end an index term of every matching row. */
  suffixes: string[];
}

/** Words shorter than this are too common to narrow anything; dropping a required word keeps the superset. */
const MIN_TERM_LENGTH = 3;
const MIN_SUBSTRING_LENGTH = 3;
/** ASCII characters that the unicode61 tokenizer treats as separators (everything but letters and digits). */
const ASCII_SEPARATOR = /[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]/;

interface Segment {
  text: string;
  /** The character before the segment is certainly a token separator, or the start of the text. */
  startsAtBoundary: boolean;
}

export function planPrefilter(regex: SearchRegex): RegexPrefilter {
  const segmentLists = regex.alternatives.map((sequence) => requiredSegments(sequence, false));
  const branches = segmentLists.map((segments) => {
    const words = segments.map(indexWordsOf);
    return {
      terms: [...new Set(words.flatMap((word) => word.terms))],
      suffixes: [...new Set(words.flatMap((word) => word.suffixes))],
    };
  });
  const substrings = segmentLists.map(longestAsciiSubstring);
  return {
    match: branches.every((branch) => branch.terms.length > 0) ? orOfBranches(branches.map((branch) => branch.terms)) : null,
    branches,
    containsAny: substrings.every((substring) => substring !== null) ? [...new Set(substrings as string[])] : null,
  };
}

/**
 * The MATCH expression for messages when alternatives without terms are narrowed by their required word ends:
 * `termsEndingWith` gives, per suffix, the index terms ending with it (null: too many to list). An alternative
 * with a suffix that no term ends with matches no message and is left out; "none" when that leaves nothing.
 * Null when some alternative still has nothing to look up.
 */
export function suffixMatch(
  branches: readonly PrefilterBranch[],
  termsEndingWith: ReadonlyMap<string, string[] | null>,
): string | "none" | null {
  const lists: string[][] = [];
  for (const branch of branches) {
    if (branch.terms.length > 0) {
      lists.push(branch.terms);
      continue;
    }
    const alternatives = branch.suffixes.map((suffix) => termsEndingWith.get(suffix) ?? null).filter((terms) => terms !== null);
    if (alternatives.some((terms) => terms.length === 0)) continue; // a required word end that no term has
    if (alternatives.length === 0) return null;
    // Each required word end: one of the terms ending with it.
    lists.push(alternatives.map((terms) => `(${terms.map(quoteTerm).join(" OR ")})`));
  }
  return lists.length === 0 ? "none" : orOfBranches(lists);
}

function orOfBranches(lists: string[][]): string {
  return lists.map((terms) => `(${terms.join(" AND ")})`).join(" OR ");
}

/** An index term as an FTS5 string (terms never contain a double quote; doubling one keeps it literal anyway). */
function quoteTerm(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

/** The literal runs every match of `sequence` contains, in order. */
function requiredSegments(sequence: RegexNode[], startsAtBoundary: boolean): Segment[] {
  const segments: Segment[] = [];
  let current = "";
  let currentStartsAtBoundary = startsAtBoundary;
  const close = (nextStartsAtBoundary: boolean) => {
    if (current !== "") segments.push({ text: current, startsAtBoundary: currentStartsAtBoundary });
    current = "";
    currentStartsAtBoundary = nextStartsAtBoundary;
  };
  for (const node of sequence) {
    switch (node.kind) {
      case "anchor":
        // `^` (no multiline flag) is the start of the text, so what follows starts a token.
        close(node.anchor === "start");
        break;
      case "char": {
        const quantifier = node.quantifier;
        if (!quantifier || (quantifier.min === 1 && quantifier.max === 1)) current += node.char;
        else if (quantifier.min >= 1) {
          current += node.char;
          close(ASCII_SEPARATOR.test(node.char));
        } else close(false);
        break;
      }
      case "class":
        close(node.whitespace && (node.quantifier === null || node.quantifier.min >= 1));
        break;
      case "backreference":
        close(false);
        break;
      case "group": {
        const required = !node.lookaround && node.alternatives.length === 1 && (node.quantifier === null || node.quantifier.min >= 1);
        if (!required) {
          close(false);
          break;
        }
        const innerStart = current === "" ? currentStartsAtBoundary : ASCII_SEPARATOR.test(current.at(-1)!);
        close(false);
        segments.push(...requiredSegments(node.alternatives[0]!, innerStart));
        close(false);
        break;
      }
    }
  }
  close(false);
  return segments;
}

/**
 * What a segment's words give the index. A word known to start a token is an FTS5 term: exact when a separator
 * follows it inside the segment, a prefix otherwise. A word known only to END a token is a suffix: the token
 * holding it ends with it (looked up in the term dictionary, which leaves out numbers, so it needs a letter).
 */
function indexWordsOf(segment: Segment): PrefilterBranch {
  const runs = segment.text.split(ASCII_SEPARATOR);
  const words: PrefilterBranch = { terms: [], suffixes: [] };
  runs.forEach((run, index) => {
    // Runs with non-ASCII characters are skipped: the tokenizer may split them at characters we cannot predict.
    if (run.length < MIN_TERM_LENGTH || !/^[A-Za-z0-9]+$/.test(run)) return;
    const startsAtToken = index > 0 || segment.startsAtBoundary;
    const endsAtToken = index < runs.length - 1;
    if (startsAtToken) words.terms.push(endsAtToken ? `"${run}"` : `"${run}"*`);
    else if (endsAtToken && /[A-Za-z]/.test(run)) words.suffixes.push(run.toLowerCase());
  });
  return words;
}

function longestAsciiSubstring(segments: Segment[]): string | null {
  let best = "";
  for (const segment of segments) {
    for (const piece of segment.text.split(/[^\x20-\x7e]+/)) if (piece.length > best.length) best = piece;
  }
  return best.length >= MIN_SUBSTRING_LENGTH ? best : null;
}
