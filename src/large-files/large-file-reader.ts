/**
 * The read side of large files, for `lcm_describe(file_…)` and `lcm_grep`: metadata, content in pages (by line
 * or byte range) and a bounded search inside stored files. Files are streamed, never loaded whole. Problems are
 * typed LcmErrors the tools turn into readable results: invalid_input (bad id, range or pattern), not_found
 * (no such file), unavailable (the row exists but its content is missing or unreadable). `describe` reports a
 * missing file in its result instead, so the exploration summary stays reachable.
 */
import { access, constants, stat } from "node:fs/promises";
import { isLcmError, LcmError } from "../errors.js";
import type { ConversationId, FileId, LargeFileRecord } from "../records.js";
import { FILE_ID_PATTERN } from "../records.js";
import type { LargeFileStore } from "../store/large-file-store.js";
import { readByteRange, scanLines } from "../text/file-scan.js";
import { isBinaryFile } from "../text/file-types.js";
import { formatCount } from "./file-reference.js";
import { type FileGrepQuery, type FileGrepResult, type LineMatcherFactory, compileGrepQuery, grepFile } from "./file-grep.js";

export type { FileGrepQuery, FileGrepResult, LineMatcherFactory } from "./file-grep.js";

export type ContentStatus = { status: "available" } | { status: "missing" | "unreadable"; reason: string };

export interface LargeFileDescription {
  file: LargeFileRecord;
  content: ContentStatus;
}

export interface LinePageRequest {
  /** First line to return, 1-based (default 1). */
  startLine?: number;
  /** Most lines per page (default 200, at most 2,000). */
  maxLines?: number;
  /** Most characters per page (default 16,000, at most 100,000); a page always holds at least one line. */
  maxChars?: number;
  /** Longer lines are clipped to this many characters (default 2,000); read them with byte ranges. */
  maxLineChars?: number;
}

export interface LinePage {
  file: LargeFileRecord;
  text: string;
  startLine: number;
  endLine: number;
  totalLines: number;
  hasMore: boolean;
  /** The startLine of the next page, or null at the end. */
  nextStartLine: number | null;
  /** Lines of this page that were clipped to maxLineChars. */
  clippedLines: number;
}

export interface BytePageRequest {
  /** Byte offset to start at (default 0); moved forward to the next character boundary. */
  offset?: number;
  /** Bytes to read (default 16,384, at most 65,536). */
  length?: number;
}

export interface BytePage {
  file: LargeFileRecord;
  text: string;
  /** The byte range actually returned, [start, end). */
  start: number;
  end: number;
  totalBytes: number;
  hasMore: boolean;
}

export interface ConversationGrepResult {
  results: FileGrepResult[];
  /** Files whose content could not be searched, with the reason. */
  unavailable: UnsearchedFile[];
  /** Files opened, whether or not they matched (the last one maybe only in part, when truncated). */
  searchedFiles: number;
  truncated: false | "max-matches" | "deadline";
}

export interface UnsearchedFile {
  fileId: FileId;
  fileName: string | null;
  /** missing / unreadable: the stored content; search-failed: the LineMatcher gave up on it. */
  status: "missing" | "unreadable" | "search-failed";
  reason: string;
}

export interface FilesGrepOptions {
  /** Runs the regex outside this thread (see LineMatcher); by default it runs here, line by line. */
  matcher?: LineMatcherFactory;
}

export interface LargeFileReaderDeps {
  store: LargeFileStore;
}

export class LargeFileReader {
  constructor(private readonly deps: LargeFileReaderDeps) {}

  /**
   * Metadata and whether the content can be read. Throws invalid_input / not_found only (and a database failure while
   * looking for a copy: see LargeFileStore.readablePath).
   */
  async describe(fileId: string): Promise<LargeFileDescription> {
    const file = await this.fileOf(fileId);
    return { file, content: await contentStatus(file) };
  }

  /** Files of a conversation, oldest first. */
  listFiles(conversationId: ConversationId, limit?: number): Promise<LargeFileRecord[]> {
    return this.deps.store.listLargeFiles(conversationId, limit);
  }

  async readLines(fileId: string, request: LinePageRequest = {}): Promise<LinePage> {
    const file = textual(await this.fileOf(fileId));
    const startLine = integerIn(request.startLine ?? 1, 1, Number.MAX_SAFE_INTEGER, "startLine");
    const maxLines = integerIn(request.maxLines ?? 200, 1, 2_000, "maxLines");
    const maxChars = integerIn(request.maxChars ?? 16_000, 100, 100_000, "maxChars");
    const maxLineChars = Math.min(maxChars, integerIn(request.maxLineChars ?? 2_000, 20, 100_000, "maxLineChars"));
    const lines: string[] = [];
    let chars = 0;
    let clippedLines = 0;
    const { totalLines } = await this.readable(file, () =>
      scanLines(file.storagePath, (text, lineNumber) => {
        if (lineNumber < startLine) return true;
        const clipped = text.length > maxLineChars;
        const line = clipped ? `${text.slice(0, maxLineChars)} … [line clipped: ${formatCount(text.length)}+ characters; read it by byte range]` : text;
        if (lines.length > 0 && chars + line.length + 1 > maxChars) return false;
        lines.push(line);
        chars += line.length + 1;
        if (clipped) clippedLines++;
        return lines.length < maxLines;
      }, { countAll: true }),
    );
    if (lines.length === 0 && totalLines > 0) {
      throw new LcmError("invalid_input", `${file.fileId} has ${formatCount(totalLines)} lines; startLine ${startLine} is past the end.`, { fileId: file.fileId, totalLines });
    }
    const endLine = lines.length === 0 ? 0 : startLine + lines.length - 1;
    const hasMore = endLine < totalLines;
    return { file, text: lines.join("\n"), startLine, endLine, totalLines, hasMore, nextStartLine: hasMore ? endLine + 1 : null, clippedLines };
  }

  async readBytes(fileId: string, request: BytePageRequest = {}): Promise<BytePage> {
    const file = textual(await this.fileOf(fileId));
    const offset = integerIn(request.offset ?? 0, 0, Number.MAX_SAFE_INTEGER, "offset");
    const length = integerIn(request.length ?? 16_384, 1, 65_536, "length");
    const range = await this.readable(file, () => readByteRange(file.storagePath, offset, length));
    if (offset > range.totalBytes) {
      throw new LcmError("invalid_input", `${file.fileId} has ${formatCount(range.totalBytes)} bytes; offset ${offset} is past the end.`, { fileId: file.fileId });
    }
    return { file, text: range.text, start: range.start, end: range.end, totalBytes: range.totalBytes, hasMore: range.end < range.totalBytes };
  }

  /** Searches one stored file. Bounded by maxMatches and a deadline; says when it stopped early. */
  async grep(fileId: string, query: FileGrepQuery): Promise<FileGrepResult> {
    const compiled = compileGrepQuery(query);
    const file = textual(await this.fileOf(fileId));
    return this.readable(file, () => grepFile(file, compiled, compiled.maxMatches, Date.now() + compiled.deadlineMs));
  }

  /** Searches every stored file of a conversation, oldest first, sharing one match budget and one deadline. */
  async grepConversation(conversationId: ConversationId, query: FileGrepQuery): Promise<ConversationGrepResult> {
    return this.grepFiles(await this.deps.store.listLargeFiles(conversationId), query);
  }

  /**
   * Searches `files` in the order given, sharing one match budget and one deadline. A file that is missing, or
   * cannot be read or searched, is listed in `unavailable` and the search goes on.
   */
  async grepFiles(files: readonly LargeFileRecord[], query: FileGrepQuery, options: FilesGrepOptions = {}): Promise<ConversationGrepResult> {
    const compiled = compileGrepQuery(query);
    const deadline = Date.now() + compiled.deadlineMs;
    const result: ConversationGrepResult = { results: [], unavailable: [], searchedFiles: 0, truncated: false };
    const matcher = options.matcher?.(compiled.regex.source, compiled.regex.flags.replace("g", ""));
    let budget = compiled.maxMatches;
    try {
      for (const file of files) {
        if (budget <= 0 || Date.now() >= deadline) {
          result.truncated = budget <= 0 ? "max-matches" : "deadline";
          break;
        }
        if (isBinaryFile(file)) {
          result.unavailable.push({ fileId: file.fileId, fileName: file.fileName, status: "unreadable", reason: binaryReason(file) });
          continue;
        }
        const readable = { ...file, storagePath: await this.deps.store.readablePath(file) };
        const status = await contentStatus(readable);
        if (status.status !== "available") {
          result.unavailable.push({ fileId: file.fileId, fileName: file.fileName, status: status.status, reason: status.reason });
          continue;
        }
        result.searchedFiles++;
        let found: FileGrepResult;
        try {
          found = await this.readable(readable, () => grepFile(readable, compiled, budget, deadline, matcher));
        } catch (error) {
          // One bad file must not hide the matches of the others; the caller sees why it was skipped.
          const status = isLcmError(error) && error.details?.searchFailed === true ? "search-failed" : "unreadable";
          result.unavailable.push({ fileId: file.fileId, fileName: file.fileName, status, reason: error instanceof Error ? error.message : String(error) });
          continue;
        }
        budget -= found.matches.length;
        if (found.matches.length > 0) result.results.push(found);
        if (found.truncated) {
          result.truncated = found.truncated;
          break;
        }
      }
    } finally {
      matcher?.close();
    }
    return result;
  }

  /** The file's record, its `storagePath` where its content can be read on this machine (LargeFileStore.readablePath). */
  private async fileOf(fileId: string): Promise<LargeFileRecord> {
    if (typeof fileId !== "string" || !FILE_ID_PATTERN.test(fileId)) {
      throw new LcmError("invalid_input", `${JSON.stringify(fileId)} is not a file id: expected "file_" followed by 16 lower-case hex characters.`);
    }
    const file = await this.deps.store.getLargeFile(fileId);
    if (!file) {
      throw new LcmError("not_found", `No stored file ${fileId}. File ids come from [LCM File: …] references in the conversation.`, { fileId });
    }
    return { ...file, storagePath: await this.deps.store.readablePath(file) };
  }

  /** Runs a read, turning a missing or unreadable file into LcmError("unavailable") that names the file and path. */
  private async readable<T>(file: LargeFileRecord, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof LcmError) throw error;
      const status = describeFsError(error);
      throw new LcmError(
        "unavailable",
        `The content of ${file.fileId} (${file.fileName ?? "unnamed"}) is ${status} at ${file.storagePath}. ` +
          "Its exploration summary is still available; restore the file from a backup, or send it again.",
        { fileId: file.fileId, path: file.storagePath },
        { cause: error },
      );
    }
  }
}

/** The file, when its content is text; a binary file (an imported image, …) has no lines or text to page or search. */
function textual(file: LargeFileRecord): LargeFileRecord {
  if (!isBinaryFile(file)) return file;
  throw new LcmError("unavailable", `${binaryReason(file)}. Its exploration summary describes it.`, { fileId: file.fileId, path: file.storagePath });
}

/** Why a binary file is not read as text, naming what and where it is. */
export function binaryReason(file: LargeFileRecord): string {
  return `${file.fileId} (${file.fileName ?? "unnamed"}) is binary content (${file.mimeType ?? "unknown type"}, ${formatCount(file.byteSize)} bytes) ` +
    `kept byte for byte at ${file.storagePath}: it is not text, so it is not paged or searched`;
}

async function contentStatus(file: LargeFileRecord): Promise<ContentStatus> {
  try {
    await access(file.storagePath, constants.R_OK);
    // access() passes for a directory or a FIFO at the path, and for root it passes every permission: only a
    // regular file there holds the content.
    if (!(await stat(file.storagePath)).isFile()) {
      return { status: "unreadable", reason: `not readable (not a regular file) at ${file.storagePath}` };
    }
    return { status: "available" };
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    return { status: missing ? "missing" : "unreadable", reason: `${describeFsError(error)} at ${file.storagePath}` };
  }
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === "ENOENT") return "missing (moved or deleted)";
  if (code === "EACCES" || code === "EPERM") return "not readable (permission denied)";
  if (code === "EISDIR") return "not readable (a directory, not a file)";
  return `not readable (${error instanceof Error ? error.message : String(error)})`;
}

function integerIn(value: number, min: number, max: number, name: string): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LcmError("invalid_input", `${name} must be an integer from ${formatCount(min)} to ${formatCount(max)}, got ${String(value)}.`);
  }
  return value;
}
