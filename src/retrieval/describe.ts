/**
 * describe: everything stored about one summary (content, lineage, place in the context) or one large file
 * (metadata, exploration summary and a page of its content). Callers authorize the owning conversation first
 * (RetrievalEngine.locate), so this module never decides who may read what.
 */
import type { FileId, LargeFileRecord, MessageId, SummaryId, SummaryRecord } from "../records.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import type { FileContentPage, FileContentReader } from "./file-content.js";
import { isoTime } from "./grep.js";

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
  /** A page of the stored content (pass `offset: nextOffset` for the next), or null when it is unreadable. */
  content: FileContentPage | null;
  contentNote: string | null;
}

export type Description = SummaryDescription | FileDescription;

export async function describeSummary(store: RetrievalStore, summary: SummaryRecord): Promise<SummaryDescription> {
  const lineage = await store.summaryLineage(summary.rowId, summary.conversationId, MAX_SOURCE_MESSAGE_IDS);
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
    content: summary.content,
  };
}

export async function describeFile(
  file: LargeFileRecord,
  reader: FileContentReader,
  page: { offset: number; maxBytes: number },
): Promise<FileDescription> {
  let content: FileContentPage | null = null;
  let contentNote: string | null = null;
  try {
    content = await reader.readPage(file, page.offset, page.maxBytes);
    if (!content) contentNote = "The stored content is missing from disk; only the exploration summary remains.";
    else if (content.nextOffset !== null) {
      contentNote = `Showing bytes ${content.offset}-${content.nextOffset} of ${content.totalBytes}; call again with offset ${content.nextOffset} for more.`;
    }
  } catch (error) {
    // An unreadable file still has useful metadata and its exploration summary; say why the content is absent.
    contentNote = `The stored content could not be read (${error instanceof Error ? error.message : String(error)}).`;
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
