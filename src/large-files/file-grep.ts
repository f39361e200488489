/**
 * Search inside one stored file, line by line, for `lcm_grep`. Regex or literal, bounded three ways: at most
 * `maxMatches` matches, a wall-clock deadline checked on every line, and MAX_LINE_BYTES decoded per line. The
 * result says whether and why it stopped early, so "no more matches" is never claimed when the scan was cut.
 * A regex runs on one line at a time, so a pathological pattern costs at most one line per deadline check.
 */
import { LcmError } from "../errors.js";
import type { FileId, LargeFileRecord } from "../records.js";
import { scanLines } from "./file-scan.js";

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
  /** The line around the match, clipped to about 300 characters. */
  text: string;
}

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

/** Scans the file until `maxMatches` matches or `deadline` (epoch ms). Read errors propagate to the caller. */
export async function grepFile(file: LargeFileRecord, query: CompiledGrepQuery, maxMatches: number, deadline: number): Promise<FileGrepResult> {
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
      matches.push({ lineNumber, column: match.index + 1, text: around(text, match.index, match[0].length) });
      if (match[0].length === 0) regex.lastIndex++;
    }
    return true;
  }, { countAll: false });
  return { fileId: file.fileId, fileName: file.fileName, matches, scannedLines, truncated };
}

function around(line: string, index: number, length: number): string {
  const start = Math.max(0, index - CONTEXT_BEFORE);
  const end = Math.min(line.length, index + length + CONTEXT_AFTER);
  return `${start > 0 ? "…" : ""}${line.slice(start, end)}${end < line.length ? "…" : ""}`;
}
