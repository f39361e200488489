/**
 * Reads one conversation out of the store as export records (store/export-format.ts), in pages, for `lcm export` and
 * for retention archives. Host-free: it needs only an ExportStore and the file system (large files' content).
 *
 * Stable entry point (retention reuses it to write compressed archives; keep this signature):
 *
 *   async function* exportConversationRecords(store: ExportStore, conversationId: number): AsyncGenerator<ExportRecord>
 *
 * Contract: yields one conversation block (conversation · largeFile* · message* · summary* · contextItem* · end),
 * each record a fresh object the caller may keep; write each with `exportLine` for the JSONL form. Throws
 * LcmError("not_found") for an unknown conversation, and LcmError("busy") when the conversation was compacted
 * while it was being read (read it again). Reads in pages of a few hundred rows with the event loop running
 * between them, so no step holds the loop for more than a few milliseconds; holds no transaction across awaits.
 * Messages appended during the read are left out (the block is the conversation as it was when reading began); run
 * it inside the store's `readSnapshot` for a block that is one committed state whatever writes meanwhile. A message retention
 * pruned is its stub plus `archive`, the archive file holding its text.
 */
import { readFile } from "node:fs/promises";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { LcmError } from "../errors.js";
import type { ExportRecord, LargeFileExportRecord, MessageExportRecord, SummaryExportRecord, ContextItemExportRecord } from "../store/export-format.js";
import type { ExportStore, SummaryMark } from "../store/export-store.js";

/** Rows per read: each page takes a few milliseconds, the event loop runs between pages. */
export const EXPORT_PAGE_ROWS = 500;

export async function* exportConversationRecords(store: ExportStore, conversationId: number): AsyncGenerator<ExportRecord> {
  // The snapshot the block describes: its counters, the messages below next_seq, the summaries up to the newest now.
  const conversation = await store.conversation(conversationId);
  if (!conversation) throw new LcmError("not_found", `Conversation ${conversationId} is not stored in ${store.path}; \`lcm conversations\` lists the stored ones.`);
  const lastSummaryMark = await store.newestSummaryMark(conversationId);
  yield conversation;

  const counts = { messages: 0, summaries: 0, contextItems: 0, largeFiles: 0, missingFiles: 0 };
  for await (const file of largeFileRecords(store, conversationId)) {
    counts.largeFiles++;
    if (file.contentBase64 === null) counts.missingFiles++;
    yield file;
  }
  for await (const message of messageRecords(store, conversationId, conversation.nextSeq)) {
    counts.messages++;
    yield message;
  }
  for await (const summary of summaryRecords(store, conversationId, lastSummaryMark)) {
    counts.summaries++;
    yield summary;
  }
  for await (const item of contextItemRecords(store, conversationId, conversation.nextSeq, lastSummaryMark)) {
    counts.contextItems++;
    yield item;
  }
  if (await store.newestSummaryMark(conversationId) !== lastSummaryMark) {
    throw new LcmError(
      "busy",
      `Conversation ${conversationId} was compacted while it was being exported, so its context no longer matches ` +
        "the summaries read; export it again (or when it is idle).",
    );
  }
  yield { type: "end", ...counts };
}

async function* largeFileRecords(store: ExportStore, conversationId: number): AsyncGenerator<LargeFileExportRecord> {
  for (let after = ""; ;) {
    const page = await store.largeFiles(conversationId, after, EXPORT_PAGE_ROWS);
    for (const { record, path } of page) {
      let content: Buffer | null;
      try {
        content = await readFile(path);
      } catch {
        // Not on this machine: the database's copy where the backend keeps one (PostgreSQL), else recorded as missing
        // (the end record counts it; `lcm doctor` reports the same file as large_file_missing).
        content = await store.storedFileContent?.(record.fileId) ?? null;
      }
      // A file of another size than recorded is damaged: written as missing rather than as content no import accepts.
      const contentBase64 = content !== null && content.length === record.byteSize ? content.toString("base64") : null;
      yield { ...record, contentBase64 };
    }
    if (page.length < EXPORT_PAGE_ROWS) return;
    after = page.at(-1)!.record.fileId;
    await yieldToEventLoop();
  }
}

async function* messageRecords(store: ExportStore, conversationId: number, nextSeq: number): AsyncGenerator<MessageExportRecord> {
  for (let after = 0; ;) {
    const page = await store.messages(conversationId, after, nextSeq, EXPORT_PAGE_ROWS);
    yield* page;
    if (page.length < EXPORT_PAGE_ROWS) return;
    after = page.at(-1)!.seq;
    await yieldToEventLoop();
  }
}

async function* summaryRecords(store: ExportStore, conversationId: number, lastMark: SummaryMark): AsyncGenerator<SummaryExportRecord> {
  // Creation order: a condensed summary always comes after the summaries it condenses.
  for (let after = 0; ;) {
    const page = await store.summaries(conversationId, after, lastMark, EXPORT_PAGE_ROWS);
    for (const { summary } of page) yield summary;
    if (page.length < EXPORT_PAGE_ROWS) return;
    after = page.at(-1)!.mark;
    await yieldToEventLoop();
  }
}

async function* contextItemRecords(
  store: ExportStore, conversationId: number, nextSeq: number, lastSummaryMark: SummaryMark,
): AsyncGenerator<ContextItemExportRecord> {
  // Items of messages appended after the snapshot are left out here, not in the store, so that a page is never cut short.
  const pageRows = EXPORT_PAGE_ROWS * 4;
  for (let after = Number.MIN_SAFE_INTEGER; ;) {
    const page = await store.contextItems(conversationId, after, pageRows);
    for (const { item, summaryMark } of page) {
      if ((item.messageSeq !== null && item.messageSeq >= nextSeq) || (summaryMark !== null && summaryMark > lastSummaryMark)) continue;
      yield item;
    }
    if (page.length < pageRows) return;
    after = page.at(-1)!.item.ordinal;
    await yieldToEventLoop();
  }
}
