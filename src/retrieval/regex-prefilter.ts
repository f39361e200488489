/**
 * Narrows a regex search before the regex runs, without ever losing a match. From the text every match must
 * contain it derives:
 * - an FTS5 expression, when some required word is known to start at a token boundary (the full-text index
 *   then lists the only rows that can match, so the search covers all history in milliseconds);
 * - otherwise, SQL LIKE substrings (ASCII, which LIKE folds exactly as the case-insensitive regex does), so
 *   SQLite skips non-matching rows in C instead of handing every row to JavaScript.
 * Both are supersets of the regex's matches by construction; anything uncertain is dropped, never guessed.
 */
import type { RegexNode } from "./regex-syntax.js";
import type { SearchRegex } from "./regex-policy.js";

export interface RegexPrefilter {
  /** FTS5 MATCH expression listing every row that can match, or null. */
  match: string | null;
  /** One required substring per alternative (a row must contain one of them), or null. */
  containsAny: string[] | null;
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
  const branches = regex.alternatives.map((sequence) => requiredSegments(sequence, false));
  const termLists = branches.map((segments) => [...new Set(segments.flatMap(termsOf))]);
  const substrings = branches.map(longestAsciiSubstring);
  return {
    match: termLists.every((terms) => terms.length > 0)
      ? termLists.map((terms) => `(${terms.join(" AND ")})`).join(" OR ")
      : null,
    containsAny: substrings.every((substring) => substring !== null) ? [...new Set(substrings as string[])] : null,
  };
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

/** FTS5 terms implied by a segment: whole words as exact tokens, a word cut at the end as a prefix. */
function termsOf(segment: Segment): string[] {
  const runs = segment.text.split(ASCII_SEPARATOR);
  const terms: string[] = [];
  runs.forEach((run, index) => {
    // Runs with non-ASCII characters are skipped: the tokenizer may split them at characters we cannot predict.
    if (run.length < MIN_TERM_LENGTH || !/^[A-Za-z0-9]+$/.test(run)) return;
    const startsAtToken = index > 0 || segment.startsAtBoundary;
    const endsAtToken = index < runs.length - 1;
    if (startsAtToken) terms.push(endsAtToken ? `"${run}"` : `"${run}"*`);
  });
  return terms;
}

function longestAsciiSubstring(segments: Segment[]): string | null {
  let best = "";
  for (const segment of segments) {
    for (const piece of segment.text.split(/[^\x20-\x7e]+/)) if (piece.length > best.length) best = piece;
  }
  return best.length >= MIN_SUBSTRING_LENGTH ? best : null;
}
