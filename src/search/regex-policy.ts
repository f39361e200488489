/**
 * Which regular expressions lcm_grep accepts. Matching ignores case and runs without the `u` flag (so ASCII
 * letters fold only to ASCII, which keeps the SQL LIKE prefilter exact). Patterns that backtrack exponentially
 * in their classic shapes are refused up front with a message saying how to rewrite them: a repeated group that
 * itself repeats something without bound (`(a+)+`, `(\w+\s?)*`), and backreferences. Everything else runs in a
 * worker with a hard deadline (regex-runner.ts), which cuts off the slow patterns no static check can see.
 */
import { invalidParameter } from "../errors.js";
import { parseRegex, type Quantifier, type RegexNode } from "./regex-syntax.js";

export const MAX_PATTERN_LENGTH = 500;
export const REGEX_FLAGS = "i";

/** A bounded quantifier this large behaves like an unbounded one for backtracking purposes. */
const EFFECTIVELY_UNBOUNDED = 100;

export interface SearchRegex {
  source: string;
  flags: string;
  /** Top-level alternatives, for the prefilter. */
  alternatives: RegexNode[][];
}

/** Validates and parses a search pattern; throws LcmError("invalid_input") naming `parameter`. */
export function compileSearchRegex(pattern: string, parameter = "pattern"): SearchRegex {
  if (pattern.length === 0) throw invalidParameter(parameter, "is empty; give a regular expression such as `deploy(ed|ment)`");
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw invalidParameter(parameter, `is ${pattern.length} characters long; the limit is ${MAX_PATTERN_LENGTH}`);
  }
  try {
    new RegExp(pattern, REGEX_FLAGS);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^Invalid regular expression: /, "") : String(error);
    throw invalidParameter(parameter, `is not a valid JavaScript regular expression (${reason}); escape special characters such as ( [ . * + ? with a backslash, or use mode "full_text"`);
  }
  const alternatives = parseRegex(pattern);
  if (alternatives.some((sequence) => sequence.some(containsBackreference))) {
    throw invalidParameter(parameter, "uses a backreference (\\1 or \\k<name>), which is not supported; repeat the text explicitly instead");
  }
  const nested = alternatives.some((sequence) => hasNestedRepetition(sequence, false));
  if (nested) {
    throw invalidParameter(
      parameter,
      "repeats a group that itself repeats without bound (like `(a+)+` or `(\\w+\\s?)*`), which can take exponential " +
        "time; rewrite it with a single repetition, e.g. `[\\w\\s]+` instead of `(\\w+\\s?)+`",
    );
  }
  return { source: pattern, flags: REGEX_FLAGS, alternatives };
}

function isUnbounded(quantifier: Quantifier | null): boolean {
  return quantifier !== null && quantifier.max > EFFECTIVELY_UNBOUNDED;
}

function hasNestedRepetition(sequence: RegexNode[], insideRepetition: boolean): boolean {
  for (const node of sequence) {
    if (node.kind === "anchor") continue;
    const repeats = isUnbounded(node.quantifier) || (node.quantifier !== null && node.quantifier.max > 1 && node.kind === "group");
    if (insideRepetition && isUnbounded(node.quantifier)) return true;
    if (node.kind === "group") {
      const inner = insideRepetition || repeats;
      if (node.alternatives.some((alternative) => hasNestedRepetition(alternative, inner))) return true;
    }
  }
  return false;
}

function containsBackreference(node: RegexNode): boolean {
  if (node.kind === "backreference") return true;
  return node.kind === "group" && node.alternatives.some((sequence) => sequence.some(containsBackreference));
}
