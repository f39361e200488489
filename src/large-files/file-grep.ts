/**
 * Search inside one stored file, line by line, for `lcm_grep`. Regex or literal, bounded three ways: at most
 * `maxMatches` matches, a wall-clock deadline checked on every line, and MAX_LINE_BYTES decoded per line. The
 * result says whether and why it stopped early, so "no more matches" is never claimed when the scan was cut.
 * By default the regex runs here, one line at a time, so a slow pattern costs at most one line per deadline check;
 * a caller that takes patterns from a model injects a LineMatcher instead (recall runs batches of lines in a
 * worker it can terminate), since no check between lines can interrupt a regex stuck inside one line.
 */
import { LcmError } from "../errors.js";
import type { FileId, LargeFileRecord } from "../records.js";
import { scanLines } from "../text/file-scan.js";

export interface FileGrepQuery {
  pattern: string;
  /** "regex" (JavaScript syntax, default) or "literal". */
  mode?: "regex" | "literal";
  /** Default false. */
  caseSensitive?: boolean;
  /** Default 50, at most 1,000. */
  maxMatches?: number;
  /** Wall-clock budget for the whole search, default 2,000 ms, at most 30,000. */
  deadlineMs?: number;
}

export interface FileGrepMatch {
  lineNumber: number;
  /** 1-based column (in UTF-16 units) of the match in its line. */
  column: number;
  /** The line around the match, clipped to about 500 characters. */
  text: string;
  /** Where the match sits in `text`: [start, end) in UTF-16 units. */
  textRange: [start: number, end: number];
}

/** What a LineMatcher found in a batch: for each matching line, its index in the batch and the first match. */
export type LineBatchOutcome =
  | { kind: "matched"; matches: [index: number, start: number, end: number][] }
  | { kind: "timeout" }
  | { kind: "failed"; reason: string };

/**
 * Matches batches of lines somewhere the caller can stop (a worker thread). Contract: `match` resolves, never
 * rejects, within about `timeoutMs`; `close` releases it once the search is over.
 */
export interface LineMatcher {
  match(lines: string[], timeoutMs: number): Promise<LineBatchOutcome>;
  close(): void;
}

/** Builds a LineMatcher for the query's regex (compiled with the `i` flag only when case-insensitive; no `g`). */
export type LineMatcherFactory = (source: string, flags: string) => LineMatcher;

export interface FileGrepResult {
  fileId: FileId;
  fileName: string | null;
  matches: FileGrepMatch[];
  /** Lines searched (all of them unless truncated). */
  scannedLines: number;
  truncated: false | "max-matches" | "deadline";
}

export interface CompiledGrepQuery {
  regex: RegExp;
  maxMatches: number;
  deadlineMs: number;
}

const MAX_PATTERN_CHARS = 1_000;
const CONTEXT_BEFORE = 100;
const CONTEXT_AFTER = 200;
const MAX_SHOWN_MATCH = 200;
/** Lines and characters per LineMatcher batch: bounds what one batch costs to copy to a worker. */
const BATCH_LINES = 2_000;
const BATCH_CHARS = 1_000_000;

/** Validates the query; throws LcmError("invalid_input") with what is wrong. */
export function compileGrepQuery(query: FileGrepQuery): CompiledGrepQuery {
  const pattern = query.pattern;
  if (typeof pattern !== "string" || pattern === "" || pattern.length > MAX_PATTERN_CHARS) {
    throw new LcmError("invalid_input", `The search pattern must be 1 to ${MAX_PATTERN_CHARS} characters long.`);
  }
  const source = query.mode === "literal" ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern;
  let regex: RegExp;
  try {
    regex = new RegExp(source, query.caseSensitive ? "g" : "gi");
  } catch (error) {
    throw new LcmError("invalid_input", `Invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}. Use mode "literal" to search for the text as written.`);
  }
  const maxMatches = query.maxMatches ?? 50;
  const deadlineMs = query.deadlineMs ?? 2_000;
  if (!Number.isInteger(maxMatches) || maxMatches < 1 || maxMatches > 1_000) {
    throw new LcmError("invalid_input", `maxMatches must be an integer from 1 to 1,000, got ${String(maxMatches)}.`);
  }
  if (!Number.isInteger(deadlineMs) || deadlineMs < 1 || deadlineMs > 30_000) {
    throw new LcmError("invalid_input", `deadlineMs must be an integer from 1 to 30,000, got ${String(deadlineMs)}.`);
  }
  return { regex, maxMatches, deadlineMs };
}

/**
 * Scans the file until `maxMatches` matches or `deadline` (epoch ms). Read errors propagate to the caller, and
 * so does a failed LineMatcher (as LcmError "unavailable" with `details.searchFailed`).
 */
export async function grepFile(
  file: LargeFileRecord,
  query: CompiledGrepQuery,
  maxMatches: number,
  deadline: number,
  matcher?: LineMatcher,
): Promise<FileGrepResult> {
  if (matcher) return grepFileInBatches(file, matcher, maxMatches, deadline);
  const regex = new RegExp(query.regex.source, query.regex.flags);
  const matches: FileGrepMatch[] = [];
  let truncated: FileGrepResult["truncated"] = false;
  let scannedLines = 0;
  await scanLines(file.storagePath, (text, lineNumber) => {
    if (Date.now() > deadline) {
      truncated = "deadline";
      return false;
    }
    scannedLines = lineNumber;
    regex.lastIndex = 0;
    for (let match = regex.exec(text); match; match = regex.exec(text)) {
      if (matches.length >= maxMatches) {
        truncated = "max-matches";
        return false;
      }
      matches.push(matchAt(text, lineNumber, match.index, match.index + match[0].length));
      if (match[0].length === 0) regex.lastIndex++;
    }
    return true;
  }, { countAll: false });
  return { fileId: file.fileId, fileName: file.fileName, matches, scannedLines, truncated };
}

/** The first match of each line, batch by batch through `matcher`; the deadline is checked per line and batch. */
async function grepFileInBatches(file: LargeFileRecord, matcher: LineMatcher, maxMatches: number, deadline: number): Promise<FileGrepResult> {
  const matches: FileGrepMatch[] = [];
  let truncated: FileGrepResult["truncated"] = false;
  let scannedLines = 0;
  let batch: { text: string; lineNumber: number }[] = [];
  let batchChars = 0;
  const flush = async (): Promise<boolean> => {
    const lines = batch;
    batch = [];
    batchChars = 0;
    if (lines.length === 0) return true;
    const outcome = await matcher.match(lines.map((line) => line.text), deadline - Date.now());
    if (outcome.kind === "timeout") {
      truncated = "deadline";
      return false;
    }
    if (outcome.kind === "failed") {
      throw new LcmError("unavailable", `Searching ${file.fileId} failed after line ${scannedLines}: ${outcome.reason}. Simplify the pattern.`, { fileId: file.fileId, searchFailed: true });
    }
    for (const [index, start, end] of outcome.matches) {
      const line = lines[index]!;
      scannedLines = line.lineNumber;
      if (matches.length >= maxMatches) {
        truncated = "max-matches";
        return false;
      }
      matches.push(matchAt(line.text, line.lineNumber, start, end));
    }
    scannedLines = lines[lines.length - 1]!.lineNumber;
    return true;
  };
  await scanLines(file.storagePath, (text, lineNumber) => {
    if (Date.now() > deadline) {
      truncated = "deadline";
      return false;
    }
    batch.push({ text, lineNumber });
    batchChars += text.length;
    return batch.length >= BATCH_LINES || batchChars >= BATCH_CHARS ? flush() : true;
  }, { countAll: false });
  if (truncated === false) await flush();
  return { fileId: file.fileId, fileName: file.fileName, matches, scannedLines, truncated };
}

/** A match with its line clipped around it (a long match shows its first MAX_SHOWN_MATCH characters). */
function matchAt(line: string, lineNumber: number, index: number, end: number): FileGrepMatch {
  const shownEnd = Math.min(end, index + MAX_SHOWN_MATCH);
  const start = Math.max(0, index - CONTEXT_BEFORE);
  const stop = Math.min(line.length, shownEnd + CONTEXT_AFTER);
  const prefix = start > 0 ? "…" : "";
  const text = `${prefix}${line.slice(start, stop)}${stop < line.length ? "…" : ""}`;
  const from = prefix.length + index - start;
  return { lineNumber, column: index + 1, text, textRange: [from, from + shownEnd - index] };
}
