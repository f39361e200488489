/**
 * Paged reads of a stored large file for lcm_describe, by bytes or by lines. Byte pages never cut a UTF-8
 * character, so `nextOffset` continues exactly where a page ended; line pages say where the next one starts.
 * The reading itself belongs to the large-file reader; recall sees only this contract (recall-services.ts
 * adapts one to the other).
 */
import type { LargeFileRecord } from "../records.js";

export const DEFAULT_PAGE_BYTES = 16_000;
export const MAX_PAGE_BYTES = 64_000;
export const DEFAULT_PAGE_LINES = 200;
export const MAX_PAGE_LINES = 2_000;

export interface FileContentPage {
  offset: number;
  /** Where the next page starts, or null at the end of the file. */
  nextOffset: number | null;
  totalBytes: number;
  text: string;
}

export interface FileLinePage {
  /** The 1-based line range returned, inclusive. */
  startLine: number;
  endLine: number;
  totalLines: number;
  /** Where the next page starts, or null at the end of the file. */
  nextStartLine: number | null;
  /** Lines of this page cut short because they are very long (read those by byte range). */
  clippedLines: number;
  text: string;
}

/** Contract: resolves null when the stored content is missing; other failures reject with a readable reason. */
export interface FileContentReader {
  readPage(file: LargeFileRecord, offset: number, maxBytes: number): Promise<FileContentPage | null>;
  /** Rejects with LcmError("invalid_input") when `startLine` is past the end of the file. */
  readLines(file: LargeFileRecord, startLine: number, maxLines: number): Promise<FileLinePage | null>;
}
