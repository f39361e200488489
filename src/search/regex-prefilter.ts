/**
 * Narrows a regex search before the regex runs, without ever losing a match. From the text every match must
 * contain it derives:
 * - index words, when some required word is known to start a word (the full-text index then lists the only
 *   rows that can match, so the search covers all history in milliseconds);
 * - for messages, also from a required word known only to END at a boundary ("INC" in `INC-\d+`, which may end
 *   "XINC"): the index terms that end with it, looked up in the term dictionary (`suffixMatch`);
 * - otherwise, SQL LIKE substrings (ASCII, which LIKE folds exactly as the case-insensitive regex does), so
 *   SQLite skips non-matching rows in C instead of handing every row to JavaScript (LIKE stops at a NUL
 *   character, so the store passes every row holding one to the regex as well).
 * Both are supersets of the regex's matches by construction; anything uncertain is dropped, never guessed.
 */
import type { IndexRequirement } from "../store/retrieval-store.js";
import type { RegexNode } from "./regex-syntax.js";
import type { SearchRegex } from "./regex-policy.js";

export interface RegexPrefilter {
  /** What the index must list for every row that can match, or null. */
  requirement: IndexRequirement | null;
  /** Per alternative: the words it requires (as in `requirement`) and the words it requires at a word's end. */
  branches: PrefilterBranch[];
  /** One required substring per alternative (a row must contain one of them), or null. */
  containsAny: string[] | null;
}

export interface IndexWord {
  /** Lowercase ASCII letters and digits. */
  text: string;
  /** Known only to start a word (a longer word may continue it). */
  prefix: boolean;
}

export interface PrefilterBranch {
  terms: IndexWord[];
  /** Lowercase ASCII words, each with a letter, that end an indexed word of every matching row. */
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
    requirement: branches.every((branch) => branch.terms.length > 0)
      ? { alternatives: branches.map((branch) => ({ words: branch.terms, anyOf: [] })) }
      : null,
    branches,
    containsAny: substrings.every((substring) => substring !== null) ? [...new Set(substrings as string[])] : null,
  };
}

/**
 * What the index must list for messages when alternatives without words are narrowed by their required word
 * ends: `termsEndingWith` gives, per suffix, the indexed words ending with it (null: too many to list). An
 * alternative with a suffix that no word ends with matches no message and is left out; "none" when that leaves
 * nothing. Null when some alternative still has nothing to look up.
 */
export function suffixMatch(
  branches: readonly PrefilterBranch[],
  termsEndingWith: ReadonlyMap<string, string[] | null>,
): IndexRequirement | "none" | null {
  const alternatives: IndexRequirement["alternatives"] = [];
  for (const branch of branches) {
    if (branch.terms.length > 0) {
      alternatives.push({ words: branch.terms, anyOf: [] });
      continue;
    }
    const lists = branch.suffixes.map((suffix) => termsEndingWith.get(suffix) ?? null).filter((terms) => terms !== null);
    if (lists.some((terms) => terms.length === 0)) continue; // a required word end that no word has
    if (lists.length === 0) return null;
    // Each required word end: one of the words ending with it.
    alternatives.push({ words: [], anyOf: lists });
  }
  return alternatives.length === 0 ? "none" : { alternatives };
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
 * What a segment's words give the index. A word known to start a word of the text (text/text-analysis.ts:
 * every ASCII character but letters and digits separates words) is an index word: whole when a separator
 * follows it inside the segment, a prefix otherwise. A word known only to END a word is a suffix: the word
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
    if (startsAtToken) words.terms.push({ text: run.toLowerCase(), prefix: !endsAtToken });
    else if (endsAtToken && /[A-Za-z]/.test(run)) words.suffixes.push(run.toLowerCase());
  });
  return words;
}

/**
 * The longest run of printable ASCII every match contains, without `"` and `\`: stored tool-call arguments
 * escape those (the regex reads them decoded), so a run holding one may not be in the stored text.
 */
function longestAsciiSubstring(segments: Segment[]): string | null {
  let best = "";
  for (const segment of segments) {
    for (const piece of segment.text.split(/[^\x20-\x21\x23-\x5b\x5d-\x7e]+/)) if (piece.length > best.length) best = piece;
  }
  return best.length >= MIN_SUBSTRING_LENGTH ? best : null;
}
