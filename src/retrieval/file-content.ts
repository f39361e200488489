/**
 * Paged reads of a stored large file for lcm_describe. Pages are byte ranges that never cut a UTF-8 character,
 * so `nextOffset` continues exactly where a page ended. The reading itself belongs to the large-file reader;
 * recall sees only this contract (the composition root adapts one to the other).
 */
import type { LargeFileRecord } from "../records.js";

export const DEFAULT_PAGE_BYTES = 16_000;
export const MAX_PAGE_BYTES = 64_000;

export interface FileContentPage {
  offset: number;
  /** Where the next page starts, or null at the end of the file. */
  nextOffset: number | null;
  totalBytes: number;
  text: string;
}

/** Contract: resolves null when the stored content is missing; other failures reject with a readable reason. */
export interface FileContentReader {
  readPage(file: LargeFileRecord, offset: number, maxBytes: number): Promise<FileContentPage | null>;
}
