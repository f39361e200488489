/**
 * The SQLite side of ExportStore: a conversation's rows read as export records (store/export-format.ts) in pages,
 * the reads `lcm import jsonl` decides a block by, and where retention's archives hold what it took out. A summary's
 * mark is its row id; a stored file's path is resolved against the database's folder (stored-file-path.ts).
 * The query plans noted at each page read keep every page an index range.
 */
import { basename } from "node:path";
import type { Database } from "./database.js";
import { resolveRecordedPath } from "./stored-file-path.js";
import { groupBy } from "./rows.js";
import type { ArchiveRow } from "./sqlite-retention-store.js";
import type { ConversationId, MessageId } from "../records.js";
import {
  type ContextItemExportRecord,
  type ConversationExportRecord,
  type ConversationReference,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  type MessageExportRecord,
  type PartExportRecord,
  type SummaryExportRecord,
} from "../store/export-format.js";
import type {
  ConversationCounts, CoverageOrder, ExportedFile, ExportStore, SummaryMark, SummaryToShow,
} from "../store/export-store.js";
import type { ArchivedLocation } from "../store/retention-store.js";

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

/** The first conversation of an identity (agent, session, creation time): what an import names a conversation by. */
export const CONVERSATION_BY_IDENTITY_SQL =
  "SELECT conversation_id, archive_reason FROM conversations WHERE agent_id = ? AND session_id = ? AND created_at = ? ORDER BY conversation_id LIMIT 1";

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
type ContextTuple = [ordinal: number, messageSeq: number | null, summaryId: string | null, tokenCount: number, flags: number, summaryRowId: number | null];
type ShownSummaryTuple = [
  rowId: number, summaryId: string, kind: string, depth: number, content: string, seqStart: number, seqEnd: number, earliestAt: number,
  latestAt: number, level: string,
];

export class SqliteExportStore implements ExportStore {
  constructor(private readonly db: Database) {}

  get path(): string {
    return this.db.path;
  }

  async readSnapshot<T>(body: () => Promise<T>): Promise<T> {
    this.db.raw.exec("BEGIN DEFERRED");
    try {
      return await body();
    } finally {
      this.db.raw.exec("COMMIT");
    }
  }

  async conversation(conversationId: ConversationId): Promise<ConversationExportRecord | null> {
    const row = this.db.tuples<ConversationTuple>(CONVERSATION_SQL, conversationId)[0];
    if (!row) return null;
    const previous = row[20] === null
      ? undefined
      : this.db.tuples<[string, string, number]>("SELECT agent_id, session_id, created_at FROM conversations WHERE conversation_id = ?", row[20])[0];
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

  async newestSummaryMark(conversationId: ConversationId): Promise<SummaryMark> {
    return this.db.tuples<[number]>("SELECT coalesce(max(id), 0) FROM summaries WHERE conversation_id = ?", conversationId)[0]![0];
  }

  async largeFiles(conversationId: ConversationId, afterFileId: string, limit: number): Promise<ExportedFile[]> {
    // Plan: SEARCH large_files USING INDEX sqlite_autoindex_large_files_2 (conversation_id=?), then ordered by file id.
    return this.db.tuples<LargeFileTuple>(
      `SELECT file_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path, exploration_summary,
         explorer, origin, tool_name, created_at
       FROM large_files WHERE conversation_id = ? AND file_id > ? ORDER BY file_id LIMIT ?`,
      conversationId, afterFileId, limit,
    ).map((file) => ({
      record: {
        type: "largeFile", fileId: file[0], contentHash: file[1], fileName: file[2], mimeType: file[3], byteSize: file[4],
        tokenCount: file[5], storedName: basename(file[6]), explorationSummary: file[7], explorer: file[8], origin: file[9],
        toolName: file[10], createdAt: file[11],
      },
      path: resolveRecordedPath(this.db.path, file[6]),
    }));
  }

  async messages(conversationId: ConversationId, afterSeq: number, beforeSeq: number, limit: number): Promise<MessageExportRecord[]> {
    // Plan: SEARCH messages USING INDEX sqlite_autoindex_messages_2 (conversation_id=? AND seq>? AND seq<?).
    // A message retention pruned keeps a stub row naming its archive: the record carries where its text is.
    const page = this.db.tuples<MessageTuple>(
      `SELECT m.message_id, m.seq, m.role, m.content, m.token_count, m.created_at, m.identity_key, m.flags, m.meta, a.path, a.created_at, a.reason
       FROM messages m LEFT JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE m.conversation_id = ? AND m.seq > ? AND m.seq < ? ORDER BY m.seq LIMIT ?`,
      conversationId, afterSeq, beforeSeq, limit,
    );
    if (page.length === 0) return [];
    const parts = groupBy(this.db.tuples<PartTuple>(
      `SELECT message_id, ordinal, kind, text_start, text_end, data, meta FROM message_parts
       WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, ordinal`,
      JSON.stringify(page.map((message) => message[0])),
    ), (part): PartExportRecord => ({ ordinal: part[1], kind: part[2], start: part[3], end: part[4], data: part[5], meta: part[6] }));
    return page.map((message) => ({
      type: "message", seq: message[1], role: message[2], content: message[3], tokenCount: message[4], createdAt: message[5],
      identityKey: message[6], flags: message[7], meta: message[8], parts: parts.get(message[0]) ?? [],
      ...(message[9] !== null ? { archive: { path: message[9], createdAt: message[10]!, reason: message[11]! } } : {}),
    }));
  }

  async summaries(
    conversationId: ConversationId, after: SummaryMark, through: SummaryMark, limit: number,
  ): Promise<{ summary: SummaryExportRecord; mark: SummaryMark }[]> {
    const page = this.db.tuples<SummaryTuple>(
      `SELECT id, summary_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at, descendant_count,
         source_message_count, seq_start, seq_end, file_ids, level, created_at
       FROM summaries WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?`,
      conversationId, after, through, limit,
    );
    if (page.length === 0) return [];
    const ids = JSON.stringify(page.map((summary) => summary[0]));
    const sourceMessages = groupBy(this.db.tuples<[number, number, number]>(
      `SELECT sm.summary_id, m.seq, sm.ordinal FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id
       WHERE sm.summary_id IN (SELECT value FROM json_each(?)) ORDER BY sm.summary_id, sm.ordinal, m.seq`, ids,
    ), (edge) => ({ seq: edge[1], ordinal: edge[2] }));
    const sourceSummaries = groupBy(this.db.tuples<[number, string, number]>(
      `SELECT sp.summary_id, s.summary_id, sp.ordinal FROM summary_parents sp JOIN summaries s ON s.id = sp.parent_summary_id
       WHERE sp.summary_id IN (SELECT value FROM json_each(?)) ORDER BY sp.summary_id, sp.ordinal, s.summary_id`, ids,
    ), (edge) => ({ summaryId: edge[1], ordinal: edge[2] }));
    return page.map((summary) => ({
      summary: {
        type: "summary", summaryId: summary[1], kind: summary[2], depth: summary[3], content: summary[4], tokenCount: summary[5],
        sourceTokenCount: summary[6], earliestAt: summary[7], latestAt: summary[8], descendantCount: summary[9],
        sourceMessageCount: summary[10], seqStart: summary[11], seqEnd: summary[12], fileIds: summary[13], level: summary[14],
        createdAt: summary[15], sourceMessages: sourceMessages.get(summary[0]) ?? [], sourceSummaries: sourceSummaries.get(summary[0]) ?? [],
      },
      mark: summary[0],
    }));
  }

  async summariesByCoverage(
    conversationId: ConversationId, after: CoverageOrder | null, limit: number,
  ): Promise<{ summary: SummaryToShow; order: CoverageOrder }[]> {
    const from = after ?? { seqEnd: 0, depth: -1, mark: 0 };
    return this.db.tuples<ShownSummaryTuple>(
      `SELECT id, summary_id, kind, depth, content, seq_start, seq_end, earliest_at, latest_at, level FROM summaries
       WHERE conversation_id = ? AND (seq_end, depth, id) > (?, ?, ?) ORDER BY seq_end, depth, id LIMIT ?`,
      conversationId, from.seqEnd, from.depth, from.mark, limit,
    ).map(([rowId, summaryId, kind, depth, content, seqStart, seqEnd, earliestAt, latestAt, level]) => ({
      summary: { summaryId, kind, depth, content, seqStart, seqEnd, earliestAt, latestAt, level },
      order: { seqEnd, depth, mark: rowId },
    }));
  }

  async contextItems(
    conversationId: ConversationId, afterOrdinal: number, limit: number,
  ): Promise<{ item: ContextItemExportRecord; summaryMark: SummaryMark | null }[]> {
    // Plan: SEARCH context_items USING PRIMARY KEY (conversation_id=? AND ordinal>?), one row lookup per join.
    return this.db.tuples<ContextTuple>(
      `SELECT c.ordinal, m.seq, s.summary_id, c.token_count, c.flags, c.summary_id FROM context_items c
       LEFT JOIN messages m ON m.message_id = c.message_id LEFT JOIN summaries s ON s.id = c.summary_id
       WHERE c.conversation_id = ? AND c.ordinal > ? ORDER BY c.ordinal LIMIT ?`,
      conversationId, afterOrdinal, limit,
    ).map((item) => ({
      item: { type: "contextItem", ordinal: item[0], messageSeq: item[1], summaryId: item[2], tokenCount: item[3], flags: item[4] },
      summaryMark: item[5],
    }));
  }

  async conversationIdsOfAgent(agentId: string): Promise<ConversationId[]> {
    return this.db.tuples<[number]>(
      "SELECT conversation_id FROM conversations WHERE agent_id = ? ORDER BY created_at, conversation_id", agentId,
    ).map((row) => row[0]);
  }

  async conversationCounts(conversationId: ConversationId): Promise<ConversationCounts | null> {
    const row = this.db.tuples<[string, string, number, number, number, number]>(
      `SELECT agent_id, session_id, message_count, context_items,
         (SELECT count(*) FROM summaries WHERE conversation_id = ?1),
         (SELECT count(*) FROM large_files WHERE conversation_id = ?1)
       FROM conversations WHERE conversation_id = ?1`, conversationId,
    )[0];
    return row ? { agentId: row[0], sessionId: row[1], messages: row[2], contextItems: row[3], summaries: row[4], largeFiles: row[5] } : null;
  }

  async findConversation(reference: ConversationReference): Promise<{ conversationId: ConversationId; archiveReason: string | null } | null> {
    const row = this.db.get<{ conversation_id: number; archive_reason: string | null }>(
      CONVERSATION_BY_IDENTITY_SQL, reference.agentId, reference.sessionId, reference.createdAt,
    );
    return row ? { conversationId: row.conversation_id, archiveReason: row.archive_reason } : null;
  }

  async liveConversationOf(agentId: string, sessionId: string): Promise<ConversationId | null> {
    return this.db.get<{ conversation_id: number }>(
      "SELECT conversation_id FROM conversations WHERE agent_id = ? AND session_id = ? AND archived_at IS NULL", agentId, sessionId,
    )?.conversation_id ?? null;
  }

  async firstSummaryElsewhere(summaryIds: readonly string[], except: ConversationId | null) {
    return this.firstElsewhere("SELECT summary_id AS id, conversation_id FROM summaries WHERE summary_id IN (SELECT value FROM json_each(?))", summaryIds, except);
  }

  async firstFileElsewhere(fileIds: readonly string[], except: ConversationId | null) {
    return this.firstElsewhere("SELECT file_id AS id, conversation_id FROM large_files WHERE file_id IN (SELECT value FROM json_each(?))", fileIds, except);
  }

  private firstElsewhere(sql: string, ids: readonly string[], except: ConversationId | null): { id: string; conversationId: ConversationId } | null {
    for (let start = 0; start < ids.length; start += 500) {
      const taken = this.db.all<{ id: string; conversation_id: number }>(sql, JSON.stringify(ids.slice(start, start + 500)))
        .find((row) => row.conversation_id !== except);
      if (taken) return { id: taken.id, conversationId: taken.conversation_id };
    }
    return null;
  }

  async archivedIdLocation(id: string): Promise<ArchivedLocation | null> {
    const row = this.db.get<ArchiveRow>(
      "SELECT a.* FROM retention_archived_ids i JOIN retention_archives a ON a.archive_id = i.archive_id WHERE i.id = ?", id,
    );
    return row ? toLocation({ ...row }) : null;
  }

  async archivesOf(conversationIds: readonly ConversationId[], limit: number): Promise<ArchivedLocation[]> {
    // Message archives of these conversations, and whole conversations archived of the agents that own them.
    const ids = JSON.stringify(conversationIds);
    return this.db.all<ArchiveRow>(
      `SELECT * FROM retention_archives
       WHERE (kind = 'messages' AND conversation_id IN (SELECT value FROM json_each(?1)))
          OR (kind = 'conversation' AND agent_id IN (SELECT agent_id FROM conversations WHERE conversation_id IN (SELECT value FROM json_each(?1))))
       GROUP BY path ORDER BY max(archive_id) DESC LIMIT ?2`,
      ids, limit,
    ).map((row) => toLocation({ ...row }));
  }

  async archivedSourcesOf(summaryRowId: number): Promise<(ArchivedLocation & { messageIds: MessageId[] })[]> {
    const rows = this.db.all<ArchiveRow & { ids: string }>(
      `SELECT a.*, json_group_array(m.message_id) AS ids FROM summary_messages sm
         JOIN messages m ON m.message_id = sm.message_id JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE sm.summary_id = ? GROUP BY a.archive_id ORDER BY a.archive_id`,
      summaryRowId,
    );
    return rows.map((row) => ({ ...toLocation({ ...row }), messageIds: JSON.parse(row.ids) as MessageId[] }));
  }
}

function toLocation(row: ArchiveRow): ArchivedLocation {
  return {
    archivePath: row.path, archivedAt: row.created_at, conversationId: row.conversation_id, agentId: row.agent_id,
    sessionId: row.session_id, kind: row.kind, seqStart: row.seq_start, seqEnd: row.seq_end,
  };
}
