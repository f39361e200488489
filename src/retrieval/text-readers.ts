/**
 * The full-text search's reads (text-search.ts) over the retrieval store: one reader for messages, one for
 * summaries, each bound to the search's scope.
 */
import type { MessageHitRow, RetrievalStore, SearchFilter, SummaryHitRow, TextFilter } from "../store/retrieval-store.js";
import type { TextSourceReader } from "./text-search.js";

export function messageReader(store: RetrievalStore, filter: TextFilter): TextSourceReader<MessageHitRow> {
  return {
    prepare: (terms) => store.prepareText("messages", terms),
    candidates: (prepared, selection, window, limit) => store.messageTextCandidates(prepared, filter, selection, window, limit),
    scan: (window, contains) => store.scanMessages(filter, { by: "rowid", from: window.from, to: window.to }, contains),
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
