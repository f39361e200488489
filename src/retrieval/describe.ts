/**
 * describe: everything stored about one summary (content, lineage, place in the context) or one large file
 * (metadata, exploration summary and a page of its content, by bytes or by lines). Callers authorize the owning
 * conversation first (RetrievalEngine.locate), so this module never decides who may read what.
 */
import { isLcmError, LcmError } from "../errors.js";
import { isBinaryFile } from "../text/file-types.js";
import type { FileId, LargeFileRecord, MessageId, SummaryId, SummaryRecord } from "../records.js";
import type { RetrievalStore, SummaryLineage } from "../store/retrieval-store.js";
import type { FileContentPage, FileContentReader, FileLinePage } from "./file-content.js";
import { isoTime } from "../search/iso-time.js";
import { describeLimit, type ResultLimit } from "./window-share.js";

/** Leaf summaries list at most this many source message ids (the seq range covers the rest). */
const MAX_SOURCE_MESSAGE_IDS = 500;

export interface SummaryDescription {
  type: "summary";
  summaryId: SummaryId;
  conversationId: number;
  kind: SummaryRecord["kind"];
  depth: number;
  /** How the summary was produced: normal, aggressive, or fallback (a deterministic truncation). */
  level: SummaryRecord["level"];
  tokenCount: number;
  sourceTokenCount: number;
  createdAt: string;
  earliestAt: string;
  latestAt: string;
  descendantCount: number;
  sourceMessageCount: number;
  seqStart: number;
  seqEnd: number;
  /** The summaries this one condensed (its `<parents>`), oldest first. */
  parentSummaryIds: SummaryId[];
  /** The summaries that condensed this one (newer, deeper); empty while it is itself in the context. */
  childSummaryIds: SummaryId[];
  /** Leaf summaries: the source messages, in order. */
  sourceMessageIds: MessageId[];
  fileIds: FileId[];
  /** Whether the model currently sees this summary in its context. */
  inContext: boolean;
  /**
   * Source messages retention moved out of the database (only this summary's text remains here): each archive's
   * path (gzip JSONL) with the conversation and message ids to look for in it. Absent when none were archived.
   */
  archivedSources?: { archivePath: string; archivedAt: string; conversationId: number; messageIds: MessageId[] }[];
  content: string;
}

export interface FileDescription {
  type: "file";
  fileId: FileId;
  conversationId: number;
  fileName: string | null;
  mimeType: string | null;
  byteSize: number;
  tokenCount: number;
  origin: LargeFileRecord["origin"];
  toolName: string | null;
  createdAt: string;
  explorationSummary: string;
  /**
   * A page of the stored content, or null when it is unreadable: by bytes (pass `offset: nextOffset` for the
   * next) or by lines (pass `startLine: nextStartLine`).
   */
  content: FilePage | null;
  contentNote: string | null;
}

export type FilePage = ({ unit: "bytes" } & FileContentPage) | ({ unit: "lines" } & FileLinePage);

/** Which page of a file to show. */
export type FilePageRequest =
  | { unit: "bytes"; offset: number; maxBytes: number }
  | { unit: "lines"; startLine: number; maxLines: number };

export type Description = SummaryDescription | FileDescription;

/**
 * The lineage a description shows, read by the summary's id: a caller reads it while the id is located (on a server's
 * backend, a round trip saved) and passes it to describeSummary. Null for an id that is not a summary's or not stored.
 */
export function readDescribedLineage(store: Pick<RetrievalStore, "summaryLineageById">, summaryId: string): Promise<SummaryLineage | null> {
  return store.summaryLineageById(summaryId, MAX_SOURCE_MESSAGE_IDS);
}

/** `lineage`: the summary's, read by readDescribedLineage (read here when null). */
export async function describeSummary(store: RetrievalStore, summary: SummaryRecord, lineage: SummaryLineage | null = null): Promise<SummaryDescription> {
  lineage ??= await store.summaryLineage(summary.rowId, summary.conversationId, MAX_SOURCE_MESSAGE_IDS);
  return {
    type: "summary",
    summaryId: summary.summaryId,
    conversationId: summary.conversationId,
    kind: summary.kind,
    depth: summary.depth,
    level: summary.level,
    tokenCount: summary.tokenCount,
    sourceTokenCount: summary.sourceTokenCount,
    createdAt: isoTime(summary.createdAt),
    earliestAt: isoTime(summary.earliestAt),
    latestAt: isoTime(summary.latestAt),
    descendantCount: summary.descendantCount,
    sourceMessageCount: summary.sourceMessageCount,
    seqStart: summary.seqStart,
    seqEnd: summary.seqEnd,
    parentSummaryIds: summary.parentSummaryIds,
    childSummaryIds: lineage.childSummaryIds,
    sourceMessageIds: lineage.sourceMessageIds,
    fileIds: summary.fileIds,
    inContext: lineage.inContext,
    ...(lineage.archivedSources?.length
      ? {
          archivedSources: lineage.archivedSources.map((source) => ({
            archivePath: source.archivePath, archivedAt: isoTime(source.archivedAt), conversationId: source.conversationId, messageIds: source.messageIds,
          })),
        }
      : {}),
    content: summary.content,
  };
}

export async function describeFile(file: LargeFileRecord, reader: FileContentReader, page: FilePageRequest): Promise<FileDescription> {
  let content: FilePage | null = null;
  let contentNote: string | null = null;
  try {
    content = await readPage(file, reader, page);
    if (!content) contentNote = "The stored content is missing from disk; only the exploration summary remains.";
    else contentNote = pageNote(content);
  } catch (error) {
    if (isLcmError(error, "invalid_input")) {
      const parameter = page.unit === "bytes" ? "offset" : "startLine";
      throw new LcmError("invalid_input", `Parameter "${parameter}": ${error.message}`, { parameter });
    }
    // A binary file (an imported image) has no text to show: the reader says what and where it is.
    if (isBinaryFile(file) && isLcmError(error, "unavailable")) contentNote = error.message;
    // An unreadable file still has useful metadata and its exploration summary; say why the content is absent.
    else contentNote = `The stored content could not be read (${error instanceof Error ? error.message : String(error)}).`;
  }
  return {
    type: "file",
    fileId: file.fileId,
    conversationId: file.conversationId,
    fileName: file.fileName,
    mimeType: file.mimeType,
    byteSize: file.byteSize,
    tokenCount: file.tokenCount,
    origin: file.origin,
    toolName: file.toolName,
    createdAt: isoTime(file.createdAt),
    explorationSummary: file.explorationSummary,
    content,
    contentNote,
  };
}

/** A file page is never cut below this (the smallest `maxBytes` lcm_describe accepts). */
const MIN_PAGE_CHARS = 1_000;
/**
 * What a file description shows besides its exploration summary and page: ids, name, sizes, the page's position and
 * its note (about 700 characters).
 */
const DESCRIBE_OVERHEAD_CHARS = 800;

/**
 * describeFile with a page that fits `limit` (window-share.ts: a model window, or a number of characters), less the file's exploration
 * summary and metadata: a byte page is capped; a line page is read again with fewer lines until its text fits (at
 * least one line). The note says when the window made the page smaller than asked.
 */
export async function describeFileWithin(
  file: LargeFileRecord, reader: FileContentReader, page: FilePageRequest, limit: ResultLimit,
): Promise<FileDescription> {
  const pageChars = Math.max(MIN_PAGE_CHARS, limit.maxChars - file.explorationSummary.length - DESCRIBE_OVERHEAD_CHARS);
  const noted = (description: FileDescription): FileDescription => description.contentNote === null ? description
    : { ...description, contentNote: `${description.contentNote} (pages are sized to ${limit.windowTokens !== null ? `this conversation's model window of ${limit.windowTokens} tokens` : describeLimit(limit)})` };
  if (page.unit === "bytes") {
    const description = await describeFile(file, reader, { ...page, maxBytes: Math.min(page.maxBytes, pageChars) });
    return page.maxBytes > pageChars ? noted(description) : description;
  }
  let maxLines = page.maxLines;
  for (let reads = 1; ; reads++) {
    const description = await describeFile(file, reader, { ...page, maxLines });
    const text = description.content?.text;
    if (text === undefined || text.length <= pageChars || maxLines === 1) return reads > 1 ? noted(description) : description;
    maxLines = Math.max(1, Math.min(maxLines - 1, Math.floor((maxLines * pageChars) / text.length)));
  }
}

async function readPage(file: LargeFileRecord, reader: FileContentReader, page: FilePageRequest): Promise<FilePage | null> {
  if (page.unit === "bytes") {
    const bytes = await reader.readPage(file, page.offset, page.maxBytes);
    return bytes && { unit: "bytes", ...bytes };
  }
  const lines = await reader.readLines(file, page.startLine, page.maxLines);
  return lines && { unit: "lines", ...lines };
}

/** How a caller names the page parameters: the tool's own (`startLine`), or the CLI's flags (`--start-line`). */
export interface PageParameterNames {
  offset: string;
  startLine: string;
  /** Says how to ask again: "call again with" (the tool), "run again with" (the CLI). */
  again: string;
}

export const TOOL_PAGE_PARAMETERS: PageParameterNames = { offset: "offset", startLine: "startLine", again: "call again with" };

/** Where a page is in the file and how to read the next one, in the caller's words. */
export function pageNote(page: FilePage, names: PageParameterNames = TOOL_PAGE_PARAMETERS): string | null {
  if (page.unit === "bytes") {
    return page.nextOffset === null
      ? null
      : `Showing bytes ${page.offset}-${page.nextOffset} of ${page.totalBytes}; ${names.again} ${names.offset} ${page.nextOffset} for more.`;
  }
  const lines = page.clippedLines === 1 ? "1 very long line was" : `${page.clippedLines} very long lines were`;
  const clipped = page.clippedLines > 0 ? ` ${lines} clipped; read them by byte range (${names.offset}).` : "";
  const range = `Showing lines ${page.startLine}-${page.endLine} of ${page.totalLines}`;
  return page.nextStartLine === null
    ? `${range} (the end of the file).${clipped}`
    : `${range}; ${names.again} ${names.startLine} ${page.nextStartLine} for more.${clipped}`;
}
