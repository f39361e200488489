/**
 * Reads one conversation out of the database as export records (export-format.ts), in pages, for `lcm export` and
 * for retention archives. Host-free: it needs only the connection and the file system (large files' content).
 *
 * Stable entry point (retention reuses it to write compressed archives; keep this signature):
 *
 *   async function* exportConversationRecords(db: Database, conversationId: number): AsyncGenerator<ExportRecord>
 *
 * Contract: yields one conversation block (conversation · largeFile* · message* · summary* · contextItem* · end),
 * each record a fresh object the caller may keep; write each with `exportLine` for the JSONL form. Throws
 * LcmError("not_found") for an unknown conversation, and LcmError("busy") when the conversation was compacted
 * while it was being read (read it again). Reads in pages of a few hundred rows with the event loop running
 * between them, so no step holds the loop for more than a few milliseconds; holds no transaction across awaits.
 * Messages appended during the read are left out (the block is the conversation as it was when reading began); run
 * it inside `withReadSnapshot` for a block that is one committed state whatever writes meanwhile. A message retention
 * pruned is its stub plus `archive`, the archive file holding its text.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Database } from "../sqlite/database.js";
import { resolveRecordedPath } from "../sqlite/stored-file-path.js";
import { LcmError } from "../errors.js";
import {
  type ContextItemExportRecord,
  type ConversationExportRecord,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  type ExportRecord,
  type LargeFileExportRecord,
  type MessageExportRecord,
  type PartExportRecord,
  type SummaryExportRecord,
} from "./export-format.js";

/** Rows per read: each page takes a few milliseconds, the event loop runs between pages. */
export const EXPORT_PAGE_ROWS = 500;

type ConversationTuple = [
  agentId: string, sessionId: string, sessionKey: string | null, createdAt: number, updatedAt: number,
  lastIngestAt: number | null, nextSeq: number, nextOrdinal: number, messageCount: number, messageTokens: number,
  contextTokens: number, contextRawTokens: number, contextItems: number, lastTokenBudget: number | null,
  lastWindowTokens: number | null, lastReserveTokens: number | null, bootstrapState: string | null,
  lastCompaction: string | null, sessionStartedAt: number | null, lastReset: string | null,
  previousConversationId: number | null, archivedAt: number | null, archiveReason: string | null, endedAt: number | null,
  endReason: string | null,
];
const CONVERSATION_SQL =
  `SELECT agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq, next_ordinal,
     message_count, message_tokens, context_tokens, context_raw_tokens, context_items, last_token_budget,
     last_window_tokens, last_reserve_tokens, bootstrap_state, last_compaction, session_started_at, last_reset,
     previous_conversation_id, archived_at, archive_reason, ended_at, end_reason
   FROM conversations WHERE conversation_id = ?`;

type MessageTuple = [
  messageId: number, seq: number, role: string, content: string, tokenCount: number, createdAt: number, identityKey: string, flags: number, meta: string,
  archivePath: string | null, archivedAt: number | null, archiveReason: string | null,
];
type PartTuple = [messageId: number, ordinal: number, kind: string, start: number | null, end: number | null, data: string | null, meta: string | null];
type SummaryTuple = [
  rowId: number, summaryId: string, kind: string, depth: number, content: string, tokenCount: number, sourceTokenCount: number,
  earliestAt: number, latestAt: number, descendantCount: number, sourceMessageCount: number, seqStart: number, seqEnd: number,
  fileIds: string, level: string, createdAt: number,
];
type LargeFileTuple = [
  fileId: string, contentHash: string, fileName: string | null, mimeType: string | null, byteSize: number, tokenCount: number,
  storagePath: string, explorationSummary: string, explorer: string, origin: string, toolName: string | null, createdAt: number,
];
type ContextTuple = [ordinal: number, messageSeq: number | null, summaryId: string | null, tokenCount: number, flags: number];

export async function* exportConversationRecords(db: Database, conversationId: number): AsyncGenerator<ExportRecord> {
  // The snapshot the block describes: its counters, the messages below next_seq, the summaries up to the newest now.
  const row = db.tuples<ConversationTuple>(CONVERSATION_SQL, conversationId)[0];
  if (!row) throw new LcmError("not_found", `Conversation ${conversationId} is not stored in ${db.path}; \`lcm conversations\` lists the stored ones.`);
  const lastSummaryRowId = db.tuples<[number]>("SELECT coalesce(max(id), 0) FROM summaries WHERE conversation_id = ?", conversationId)[0]![0];
  const conversation = conversationRecord(db, row);
  yield conversation;

  const counts = { messages: 0, summaries: 0, contextItems: 0, largeFiles: 0, missingFiles: 0 };
  for await (const file of largeFileRecords(db, conversationId)) {
    counts.largeFiles++;
    if (file.contentBase64 === null) counts.missingFiles++;
    yield file;
  }
  for await (const message of messageRecords(db, conversationId, conversation.nextSeq)) {
    counts.messages++;
    yield message;
  }
  for await (const summary of summaryRecords(db, conversationId, lastSummaryRowId)) {
    counts.summaries++;
    yield summary;
  }
  for await (const item of contextItemRecords(db, conversationId, conversation.nextSeq, lastSummaryRowId)) {
    counts.contextItems++;
    yield item;
  }
  const now = db.tuples<[number]>("SELECT coalesce(max(id), 0) FROM summaries WHERE conversation_id = ?", conversationId)[0]![0];
  if (now !== lastSummaryRowId) {
    throw new LcmError(
      "busy",
      `Conversation ${conversationId} was compacted while it was being exported, so its context no longer matches ` +
        "the summaries read; export it again (or when it is idle).",
    );
  }
  yield { type: "end", ...counts };
}

function conversationRecord(db: Database, row: ConversationTuple): ConversationExportRecord {
  const previous = row[20] === null
    ? undefined
    : db.tuples<[string, string, number]>("SELECT agent_id, session_id, created_at FROM conversations WHERE conversation_id = ?", row[20])[0];
  return {
    type: "conversation", format: EXPORT_FORMAT, version: EXPORT_FORMAT_VERSION,
    agentId: row[0], sessionId: row[1], sessionKey: row[2], createdAt: row[3], updatedAt: row[4], lastIngestAt: row[5],
    nextSeq: row[6], nextOrdinal: row[7], messageCount: row[8], messageTokens: row[9], contextTokens: row[10],
    contextRawTokens: row[11], contextItems: row[12], lastTokenBudget: row[13], lastWindowTokens: row[14],
    lastReserveTokens: row[15], bootstrapState: row[16], lastCompaction: row[17], sessionStartedAt: row[18],
    lastReset: row[19],
    previousConversation: previous ? { agentId: previous[0], sessionId: previous[1], createdAt: previous[2] } : null,
    archivedAt: row[21], archiveReason: row[22], endedAt: row[23], endReason: row[24],
  };
}

async function* largeFileRecords(db: Database, conversationId: number): AsyncGenerator<LargeFileExportRecord> {
  // Plan: SEARCH large_files USING INDEX sqlite_autoindex_large_files_2 (conversation_id=?), then ordered by file id.
  for (let after = ""; ;) {
    const page = db.tuples<LargeFileTuple>(
      `SELECT file_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path, exploration_summary,
         explorer, origin, tool_name, created_at
       FROM large_files WHERE conversation_id = ? AND file_id > ? ORDER BY file_id LIMIT ?`,
      conversationId, after, EXPORT_PAGE_ROWS,
    );
    for (const file of page) {
      let contentBase64: string | null;
      try {
        const content = await readFile(resolveRecordedPath(db.path, file[6]));
        // A file of another size than recorded is damaged: written as missing rather than as content no import accepts.
        contentBase64 = content.length === file[4] ? content.toString("base64") : null;
      } catch {
        // Recorded as missing (the end record counts it); `lcm doctor` reports the same file as large_file_missing.
        contentBase64 = null;
      }
      yield {
        type: "largeFile", fileId: file[0], contentHash: file[1], fileName: file[2], mimeType: file[3], byteSize: file[4],
        tokenCount: file[5], storedName: basename(file[6]), explorationSummary: file[7], explorer: file[8], origin: file[9],
        toolName: file[10], createdAt: file[11], contentBase64,
      };
    }
    if (page.length < EXPORT_PAGE_ROWS) return;
    after = page.at(-1)![0];
    await yieldToEventLoop();
  }
}

async function* messageRecords(db: Database, conversationId: number, nextSeq: number): AsyncGenerator<MessageExportRecord> {
  // Plan: SEARCH messages USING INDEX sqlite_autoindex_messages_2 (conversation_id=? AND seq>? AND seq<?).
  for (let after = 0; ;) {
    // A message retention pruned keeps a stub row naming its archive: the record carries where its text is.
    const page = db.tuples<MessageTuple>(
      `SELECT m.message_id, m.seq, m.role, m.content, m.token_count, m.created_at, m.identity_key, m.flags, m.meta, a.path, a.created_at, a.reason
       FROM messages m LEFT JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE m.conversation_id = ? AND m.seq > ? AND m.seq < ? ORDER BY m.seq LIMIT ?`,
      conversationId, after, nextSeq, EXPORT_PAGE_ROWS,
    );
    if (page.length === 0) return;
    const parts = new Map<number, PartExportRecord[]>();
    for (const part of db.tuples<PartTuple>(
      `SELECT message_id, ordinal, kind, text_start, text_end, data, meta FROM message_parts
       WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, ordinal`,
      JSON.stringify(page.map((message) => message[0])),
    )) {
      const record: PartExportRecord = { ordinal: part[1], kind: part[2], start: part[3], end: part[4], data: part[5], meta: part[6] };
      const list = parts.get(part[0]);
      if (list) list.push(record);
      else parts.set(part[0], [record]);
    }
    for (const message of page) {
      yield {
        type: "message", seq: message[1], role: message[2], content: message[3], tokenCount: message[4], createdAt: message[5],
        identityKey: message[6], flags: message[7], meta: message[8], parts: parts.get(message[0]) ?? [],
        ...(message[9] !== null ? { archive: { path: message[9], createdAt: message[10]!, reason: message[11]! } } : {}),
      };
    }
    if (page.length < EXPORT_PAGE_ROWS) return;
    after = page.at(-1)![1];
    await yieldToEventLoop();
  }
}

async function* summaryRecords(db: Database, conversationId: number, lastRowId: number): AsyncGenerator<SummaryExportRecord> {
  // Creation order (row id): a condensed summary always comes after the summaries it condenses.
  for (let after = 0; ;) {
    const page = db.tuples<SummaryTuple>(
      `SELECT id, summary_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at, descendant_count,
         source_message_count, seq_start, seq_end, file_ids, level, created_at
       FROM summaries WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?`,
      conversationId, after, lastRowId, EXPORT_PAGE_ROWS,
    );
    if (page.length === 0) return;
    const ids = JSON.stringify(page.map((summary) => summary[0]));
    const sourceMessages = groupBy(db.tuples<[number, number, number]>(
      `SELECT sm.summary_id, m.seq, sm.ordinal FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id
       WHERE sm.summary_id IN (SELECT value FROM json_each(?)) ORDER BY sm.summary_id, sm.ordinal, m.seq`, ids,
    ), (edge) => ({ seq: edge[1], ordinal: edge[2] }));
    const sourceSummaries = groupBy(db.tuples<[number, string, number]>(
      `SELECT sp.summary_id, s.summary_id, sp.ordinal FROM summary_parents sp JOIN summaries s ON s.id = sp.parent_summary_id
       WHERE sp.summary_id IN (SELECT value FROM json_each(?)) ORDER BY sp.summary_id, sp.ordinal, s.summary_id`, ids,
    ), (edge) => ({ summaryId: edge[1], ordinal: edge[2] }));
    for (const summary of page) {
      yield {
        type: "summary", summaryId: summary[1], kind: summary[2], depth: summary[3], content: summary[4], tokenCount: summary[5],
        sourceTokenCount: summary[6], earliestAt: summary[7], latestAt: summary[8], descendantCount: summary[9],
        sourceMessageCount: summary[10], seqStart: summary[11], seqEnd: summary[12], fileIds: summary[13], level: summary[14],
        createdAt: summary[15], sourceMessages: sourceMessages.get(summary[0]) ?? [], sourceSummaries: sourceSummaries.get(summary[0]) ?? [],
      };
    }
    if (page.length < EXPORT_PAGE_ROWS) return;
    after = page.at(-1)![0];
    await yieldToEventLoop();
  }
}

async function* contextItemRecords(
  db: Database, conversationId: number, nextSeq: number, lastSummaryRowId: number,
): AsyncGenerator<ContextItemExportRecord> {
  // Plan: SEARCH context_items USING PRIMARY KEY (conversation_id=? AND ordinal>?), one row lookup per join.
  // Items of messages appended after the snapshot are left out here, not in SQL, so that a page is never cut short.
  const pageRows = EXPORT_PAGE_ROWS * 4;
  for (let after = Number.MIN_SAFE_INTEGER; ;) {
    const page = db.tuples<[...ContextTuple, summaryRowId: number | null]>(
      `SELECT c.ordinal, m.seq, s.summary_id, c.token_count, c.flags, c.summary_id FROM context_items c
       LEFT JOIN messages m ON m.message_id = c.message_id LEFT JOIN summaries s ON s.id = c.summary_id
       WHERE c.conversation_id = ? AND c.ordinal > ? ORDER BY c.ordinal LIMIT ?`,
      conversationId, after, pageRows,
    );
    for (const item of page) {
      if ((item[1] !== null && item[1] >= nextSeq) || (item[5] !== null && item[5] > lastSummaryRowId)) continue;
      yield { type: "contextItem", ordinal: item[0], messageSeq: item[1], summaryId: item[2], tokenCount: item[3], flags: item[4] };
    }
    if (page.length < pageRows) return;
    after = page.at(-1)![0];
    await yieldToEventLoop();
  }
}

function groupBy<T extends readonly [number, ...unknown[]], R>(rows: T[], map: (row: T) => R): Map<number, R[]> {
  const groups = new Map<number, R[]>();
  for (const row of rows) {
    const list = groups.get(row[0]);
    if (list) list.push(map(row));
    else groups.set(row[0], [map(row)]);
  }
  return groups;
}

/**
 * Runs `body` inside one read transaction of `db`, so every read it makes sees the same committed state of the
 * database (an export taken while a turn, /new or a compaction writes is still one consistent snapshot). Contract:
 * `db` is a connection of its own (the CLI's), never the gateway's shared one: nothing else may use it meanwhile.
 * Holding a read transaction blocks no writer; a checkpoint cannot pass it until it ends.
 */
export async function withReadSnapshot<T>(db: Database, body: () => Promise<T>): Promise<T> {
  db.raw.exec("BEGIN DEFERRED");
  try {
    return await body();
  } finally {
    db.raw.exec("COMMIT");
  }
}

/** The conversations of an agent, oldest first, archived ones included (what `lcm export --agent` exports). */
export function conversationIdsOfAgent(db: Database, agentId: string): number[] {
  return db.tuples<[number]>(
    "SELECT conversation_id FROM conversations WHERE agent_id = ? ORDER BY created_at, conversation_id", agentId,
  ).map((row) => row[0]);
}

/** What a conversation holds, for an export's report and progress; null when it is not stored. */
export function conversationCounts(db: Database, conversationId: number): {
  agentId: string; sessionId: string; messages: number; summaries: number; contextItems: number; largeFiles: number;
} | null {
  const row = db.tuples<[string, string, number, number, number, number]>(
    `SELECT agent_id, session_id, message_count, context_items,
       (SELECT count(*) FROM summaries WHERE conversation_id = ?1),
       (SELECT count(*) FROM large_files WHERE conversation_id = ?1)
     FROM conversations WHERE conversation_id = ?1`, conversationId,
  )[0];
  return row ? { agentId: row[0], sessionId: row[1], messages: row[2], contextItems: row[3], summaries: row[4], largeFiles: row[5] } : null;
}
