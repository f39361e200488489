/**
 * The full-text search's reads (text-search.ts) over the retrieval store: one reader for messages, one for
 * summaries, one for chunks of content stored aside, each bound to the search's scope.
 */
import type {
  FileChunkHitRow, MessageHitRow, RetrievalStore, SearchFilter, SummaryHitRow, TextFilter, UnindexedFile,
} from "../store/retrieval-store.js";
import { type UnreadableFiles, unindexedChunks, withChunkTexts } from "./stored-content.js";
import type { TextSourceReader } from "./text-search.js";
import { passageWords } from "./text-snippet.js";

export function messageReader(store: RetrievalStore, filter: TextFilter): TextSourceReader<MessageHitRow> {
  return {
    prepare: (terms) => store.prepareText("messages", terms),
    candidates: (prepared, selection, window, limit) => store.messageTextCandidates(prepared, filter, selection, window, limit),
    scan: (window, contains) => store.scanMessages(filter, { by: "messageId", from: window.from, to: window.to }, contains),
    ...(store.scanWindowMax ? { scanWindowMax: store.scanWindowMax } : {}),
    ...(store.backlogMessages ? { backlog: (window, anyOf, limit) => store.backlogMessages!(filter, anyOf, window, limit) } : {}),
    ...(store.backlogBlockRows ? { blockRows: (window, anyOf, contains, maxRows) => store.backlogBlockRows!(filter, anyOf, contains, window, maxRows) } : {}),
    idOf: (row) => row.messageId,
    timeOf: (row) => row.createdAt,
  };
}

export function summaryReader(store: RetrievalStore, filter: SearchFilter): TextSourceReader<SummaryHitRow> {
  return {
    prepare: (terms) => store.prepareText("summaries", terms),
    candidates: (prepared, selection, window, limit) => store.summaryTextCandidates(prepared, filter, selection, window, limit),
    scan: (window, contains) => store.scanSummaries(filter, window, contains),
    idOf: (row) => row.rowId,
    timeOf: (row) => row.latestAt,
  };
}

/**
 * Chunks of stored content: the index's candidates with their text read from the files, and the content of
 * `unindexed` files (RetrievalStore.unindexedFiles) read directly.
 */
export function fileChunkReader(
  store: RetrievalStore, filter: SearchFilter, unindexed: () => readonly UnindexedFile[], unreadable: UnreadableFiles,
): TextSourceReader<FileChunkHitRow> {
  return {
    prepare: (terms) => store.prepareText("files", terms),
    candidates: async (prepared, selection, window, limit) => {
      const page = await store.fileTextCandidates(prepared, filter, selection, window, limit);
      const read = await withChunkTexts(page.rows, unreadable);
      const words = new Map(page.rows.map((row) => [row.chunkId, row.wordCount]));
      return { rows: read.map((row) => ({ ...row, wordCount: words.get(row.chunkId)! })), limitReached: page.limitReached };
    },
    // Every indexed chunk is in the index (rows and entries are written together): nothing above it to scan.
    scan: async () => [],
    unindexed: () => unindexedChunks(unindexed(), unreadable),
    idOf: (row) => row.chunkId,
    timeOf: (row) => row.createdAt,
    // A chunk is cut at about 4 KB whatever was said: it is scored by the passage holding its hits.
    lengthOf: (_row, match) => passageWords(match),
  };
}
