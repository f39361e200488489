/**
 * The PostgreSQL side of ExportStore: a conversation's rows read as export records (store/export-format.ts) in pages,
 * the reads `lcm import jsonl` decides a block by, and where retention's archives hold what it took out. A summary's
 * mark is its row id; readSnapshot is one REPEATABLE READ, READ ONLY transaction (pg-read-snapshot.ts). Text comes
 * back through fromPgText; stored-file paths are absolute on PostgreSQL (it has no folder of its own).
 */
import { basename, resolve } from "node:path";
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
import type { ConversationCounts, CoverageOrder, ExportedFile, ExportStore, SummaryMark, SummaryToShow } from "../store/export-store.js";
import type { ArchivedLocation } from "../store/retention-store.js";
import { fromPgText, type PgDatabase, type PgParam, toPgText } from "./pg-database.js";
import { PgStoredFiles } from "./pg-stored-files.js";
import { PgReadSnapshot } from "./pg-read-snapshot.js";

type Value = string | number | null;
type ArchiveTuple = [path: string, createdAt: number, conversationId: number, agentId: string, sessionId: string, kind: "conversation" | "messages", seqStart: number | null, seqEnd: number | null];
const ARCHIVE_COLUMNS = "a.path, a.created_at, a.conversation_id, a.agent_id, a.session_id, a.kind, a.seq_start, a.seq_end";

export class PgExportStore implements ExportStore {
  private readonly reader: PgReadSnapshot;

  constructor(private readonly database: PgDatabase) {
    this.reader = new PgReadSnapshot(database);
  }

  get path(): string {
    return this.database.location;
  }

  readSnapshot<T>(body: () => Promise<T>): Promise<T> {
    return this.reader.run(body);
  }

  async conversation(conversationId: ConversationId): Promise<ConversationExportRecord | null> {
    const [row] = await this.tuples(
      `SELECT c.agent_id, c.session_id, c.session_key, c.created_at, c.updated_at, c.last_ingest_at, c.next_seq, c.next_ordinal,
         c.message_count, c.message_tokens, c.context_tokens, c.context_raw_tokens, c.context_items, c.last_token_budget,
         c.last_window_tokens, c.last_reserve_tokens, c.bootstrap_state, c.last_compaction, c.session_started_at, c.last_reset,
         p.agent_id, p.session_id, p.created_at, c.archived_at, c.archive_reason, c.ended_at, c.end_reason
       FROM conversations c LEFT JOIN conversations p ON p.conversation_id = c.previous_conversation_id
       WHERE c.conversation_id = $1`, [conversationId],
    );
    if (!row) return null;
    const value = <T extends Value>(index: number) => row[index] as T;
    return {
      type: "conversation", format: EXPORT_FORMAT, version: EXPORT_FORMAT_VERSION,
      agentId: value(0), sessionId: value(1), sessionKey: value(2), createdAt: value(3), updatedAt: value(4), lastIngestAt: value(5),
      nextSeq: value(6), nextOrdinal: value(7), messageCount: value(8), messageTokens: value(9), contextTokens: value(10),
      contextRawTokens: value(11), contextItems: value(12), lastTokenBudget: value(13), lastWindowTokens: value(14),
      lastReserveTokens: value(15), bootstrapState: value(16), lastCompaction: value(17), sessionStartedAt: value(18), lastReset: value(19),
      previousConversation: row[20] === null ? null : { agentId: value(20), sessionId: value(21), createdAt: value(22) },
      archivedAt: value(23), archiveReason: value(24), endedAt: value(25), endReason: value(26),
    };
  }

  async newestSummaryMark(conversationId: ConversationId): Promise<SummaryMark> {
    const [row] = await this.tuples("SELECT coalesce(max(id), 0) FROM summaries WHERE conversation_id = $1", [conversationId]);
    return row![0] as number;
  }

  async largeFiles(conversationId: ConversationId, afterFileId: string, limit: number): Promise<ExportedFile[]> {
    const rows = await this.tuples(
      `SELECT file_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path, exploration_summary,
         explorer, origin, tool_name, created_at
       FROM large_files WHERE conversation_id = $1 AND file_id > $2 ORDER BY file_id LIMIT $3`,
      [conversationId, toPgText(afterFileId), limit],
    );
    return rows.map((file) => ({
      record: {
        type: "largeFile", fileId: file[0] as string, contentHash: file[1] as string, fileName: file[2] as string | null,
        mimeType: file[3] as string | null, byteSize: file[4] as number, tokenCount: file[5] as number, storedName: basename(file[6] as string),
        explorationSummary: file[7] as string, explorer: file[8] as string, origin: file[9] as string, toolName: file[10] as string | null,
        createdAt: file[11] as number,
      },
      path: resolve(file[6] as string),
    }));
  }

  /** The content the database keeps for a stored file (migration 8), read outside the export's snapshot (it never changes). */
  storedFileContent(fileId: string): Promise<Buffer | null> {
    return new PgStoredFiles(this.database, null).contentOf(fileId);
  }

  async messages(conversationId: ConversationId, afterSeq: number, beforeSeq: number, limit: number): Promise<MessageExportRecord[]> {
    // A message retention pruned keeps a stub row naming its archive: the record carries where its text is.
    const page = await this.tuples(
      `SELECT m.message_id, m.seq, m.role, m.content, m.token_count, m.created_at, m.identity_key, m.flags, m.meta, a.path, a.created_at, a.reason
       FROM messages m LEFT JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE m.conversation_id = $1 AND m.seq > $2 AND m.seq < $3 ORDER BY m.seq LIMIT $4`,
      [conversationId, afterSeq, beforeSeq, limit],
    );
    if (page.length === 0) return [];
    const parts = groupBy(await this.tuples(
      `SELECT message_id, ordinal, kind, text_start, text_end, data, meta FROM message_parts
       WHERE message_id = ANY($1) ORDER BY message_id, ordinal`, [page.map((message) => message[0] as number)],
    ), (part): PartExportRecord => ({
      ordinal: part[1] as number, kind: part[2] as PartExportRecord["kind"], start: part[3] as number | null, end: part[4] as number | null,
      data: part[5] as string | null, meta: part[6] as string | null,
    }));
    return page.map((message) => ({
      type: "message", seq: message[1] as number, role: message[2] as MessageExportRecord["role"], content: message[3] as string,
      tokenCount: message[4] as number, createdAt: message[5] as number, identityKey: message[6] as string, flags: message[7] as number,
      meta: message[8] as string, parts: parts.get(message[0] as number) ?? [],
      ...(message[9] !== null ? { archive: { path: message[9] as string, createdAt: message[10] as number, reason: message[11] as string } } : {}),
    }));
  }

  async summaries(
    conversationId: ConversationId, after: SummaryMark, through: SummaryMark, limit: number,
  ): Promise<{ summary: SummaryExportRecord; mark: SummaryMark }[]> {
    const page = await this.tuples(
      `SELECT id, summary_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at, descendant_count,
         source_message_count, seq_start, seq_end, file_ids, level, created_at
       FROM summaries WHERE conversation_id = $1 AND id > $2 AND id <= $3 ORDER BY id LIMIT $4`,
      [conversationId, after, through, limit],
    );
    if (page.length === 0) return [];
    const ids = page.map((summary) => summary[0] as number);
    const sourceMessages = groupBy(await this.tuples(
      `SELECT sm.summary_id, m.seq, sm.ordinal FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id
       WHERE sm.summary_id = ANY($1) ORDER BY sm.summary_id, sm.ordinal, m.seq`, [ids],
    ), (edge) => ({ seq: edge[1] as number, ordinal: edge[2] as number }));
    const sourceSummaries = groupBy(await this.tuples(
      `SELECT sp.summary_id, s.summary_id, sp.ordinal FROM summary_parents sp JOIN summaries s ON s.id = sp.parent_summary_id
       WHERE sp.summary_id = ANY($1) ORDER BY sp.summary_id, sp.ordinal, s.summary_id COLLATE "C"`, [ids],
    ), (edge) => ({ summaryId: edge[1] as string, ordinal: edge[2] as number }));
    return page.map((summary) => ({
      summary: {
        type: "summary", summaryId: summary[1] as string, kind: summary[2] as SummaryExportRecord["kind"], depth: summary[3] as number,
        content: summary[4] as string, tokenCount: summary[5] as number, sourceTokenCount: summary[6] as number,
        earliestAt: summary[7] as number, latestAt: summary[8] as number, descendantCount: summary[9] as number,
        sourceMessageCount: summary[10] as number, seqStart: summary[11] as number, seqEnd: summary[12] as number,
        fileIds: summary[13] as string, level: summary[14] as SummaryExportRecord["level"], createdAt: summary[15] as number,
        sourceMessages: sourceMessages.get(summary[0] as number) ?? [], sourceSummaries: sourceSummaries.get(summary[0] as number) ?? [],
      },
      mark: summary[0] as number,
    }));
  }

  async summariesByCoverage(
    conversationId: ConversationId, after: CoverageOrder | null, limit: number,
  ): Promise<{ summary: SummaryToShow; order: CoverageOrder }[]> {
    const from = after ?? { seqEnd: 0, depth: -1, mark: 0 };
    const rows = await this.tuples(
      `SELECT id, summary_id, kind, depth, content, seq_start, seq_end, earliest_at, latest_at, level FROM summaries
       WHERE conversation_id = $1 AND (seq_end, depth, id) > ($2, $3, $4) ORDER BY seq_end, depth, id LIMIT $5`,
      [conversationId, from.seqEnd, from.depth, from.mark, limit],
    );
    return rows.map((row) => {
      const [rowId, summaryId, kind, depth, content, seqStart, seqEnd, earliestAt, latestAt, level] = row as [
        number, string, SummaryToShow["kind"], number, string, number, number, number, number, SummaryToShow["level"],
      ];
      return { summary: { summaryId, kind, depth, content, seqStart, seqEnd, earliestAt, latestAt, level }, order: { seqEnd, depth, mark: rowId } };
    });
  }

  async contextItems(
    conversationId: ConversationId, afterOrdinal: number, limit: number,
  ): Promise<{ item: ContextItemExportRecord; summaryMark: SummaryMark | null }[]> {
    const rows = await this.tuples(
      `SELECT c.ordinal, m.seq, s.summary_id, c.token_count, c.flags, c.summary_id FROM context_items c
       LEFT JOIN messages m ON m.message_id = c.message_id LEFT JOIN summaries s ON s.id = c.summary_id
       WHERE c.conversation_id = $1 AND c.ordinal > $2 ORDER BY c.ordinal LIMIT $3`,
      [conversationId, afterOrdinal, limit],
    );
    return rows.map((item) => ({
      item: {
        type: "contextItem", ordinal: item[0] as number, messageSeq: item[1] as number | null, summaryId: item[2] as string | null,
        tokenCount: item[3] as number, flags: item[4] as number,
      },
      summaryMark: item[5] as number | null,
    }));
  }

  async conversationIdsOfAgent(agentId: string): Promise<ConversationId[]> {
    const rows = await this.tuples("SELECT conversation_id FROM conversations WHERE agent_id = $1 ORDER BY created_at, conversation_id", [toPgText(agentId)]);
    return rows.map((row) => row[0] as number);
  }

  async conversationCounts(conversationId: ConversationId): Promise<ConversationCounts | null> {
    const [row] = await this.tuples(
      `SELECT agent_id, session_id, message_count, context_items,
         (SELECT count(*) FROM summaries WHERE conversation_id = $1),
         (SELECT count(*) FROM large_files WHERE conversation_id = $1)
       FROM conversations WHERE conversation_id = $1`, [conversationId],
    );
    return row
      ? { agentId: row[0] as string, sessionId: row[1] as string, messages: row[2] as number, contextItems: row[3] as number, summaries: row[4] as number, largeFiles: row[5] as number }
      : null;
  }

  async findConversation(reference: ConversationReference): Promise<{ conversationId: ConversationId; archiveReason: string | null } | null> {
    const [row] = await this.tuples(
      "SELECT conversation_id, archive_reason FROM conversations WHERE agent_id = $1 AND session_id = $2 AND created_at = $3 ORDER BY conversation_id LIMIT 1",
      [toPgText(reference.agentId), toPgText(reference.sessionId), reference.createdAt],
    );
    return row ? { conversationId: row[0] as number, archiveReason: row[1] as string | null } : null;
  }

  async liveConversationOf(agentId: string, sessionId: string): Promise<ConversationId | null> {
    const [row] = await this.tuples(
      "SELECT conversation_id FROM conversations WHERE agent_id = $1 AND session_id = $2 AND archived_at IS NULL", [toPgText(agentId), toPgText(sessionId)],
    );
    return row ? (row[0] as number) : null;
  }

  firstSummaryElsewhere(summaryIds: readonly string[], except: ConversationId | null) {
    return this.firstElsewhere("SELECT summary_id, conversation_id FROM summaries WHERE summary_id = ANY($1)", summaryIds, except);
  }

  firstFileElsewhere(fileIds: readonly string[], except: ConversationId | null) {
    return this.firstElsewhere("SELECT file_id, conversation_id FROM large_files WHERE file_id = ANY($1)", fileIds, except);
  }

  private async firstElsewhere(sql: string, ids: readonly string[], except: ConversationId | null): Promise<{ id: string; conversationId: ConversationId } | null> {
    for (let start = 0; start < ids.length; start += 500) {
      const rows = await this.tuples(sql, [ids.slice(start, start + 500).map(toPgText)]);
      // The first of `ids` (in their order) held elsewhere, as SQLite's store answers.
      const taken = new Map(rows.filter((row) => row[1] !== except).map((row) => [row[0] as string, row[1] as number]));
      const id = ids.slice(start, start + 500).find((candidate) => taken.has(candidate));
      if (id !== undefined) return { id, conversationId: taken.get(id)! };
    }
    return null;
  }

  async archivedIdLocation(id: string): Promise<ArchivedLocation | null> {
    const [row] = await this.tuples(
      `SELECT ${ARCHIVE_COLUMNS} FROM retention_archived_ids i JOIN retention_archives a ON a.archive_id = i.archive_id WHERE i.id = $1`, [toPgText(id)],
    );
    return row ? toLocation(row as ArchiveTuple) : null;
  }

  async archivesOf(conversationIds: readonly ConversationId[], limit: number): Promise<ArchivedLocation[]> {
    // Message archives of these conversations, and whole conversations archived of the agents that own them; one per path.
    const rows = await this.tuples(
      `SELECT ${ARCHIVE_COLUMNS} FROM retention_archives a JOIN (
         SELECT path, max(archive_id) AS newest FROM retention_archives
         WHERE (kind = 'messages' AND conversation_id = ANY($1))
            OR (kind = 'conversation' AND agent_id IN (SELECT agent_id FROM conversations WHERE conversation_id = ANY($1)))
         GROUP BY path
       ) chosen ON chosen.newest = a.archive_id
       ORDER BY a.archive_id DESC LIMIT $2`,
      [[...conversationIds], limit],
    );
    return rows.map((row) => toLocation(row as ArchiveTuple));
  }

  async archivedSourcesOf(summaryRowId: number): Promise<(ArchivedLocation & { messageIds: MessageId[] })[]> {
    const rows = await this.tuples(
      `SELECT ${ARCHIVE_COLUMNS}, array_agg(m.message_id ORDER BY m.message_id)::text FROM summary_messages sm
         JOIN messages m ON m.message_id = sm.message_id JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE sm.summary_id = $1 GROUP BY a.archive_id ORDER BY a.archive_id`,
      [summaryRowId],
    );
    return rows.map((row) => ({
      ...toLocation(row.slice(0, 8) as ArchiveTuple),
      messageIds: String(row[8]).replace(/[{}]/g, "").split(",").filter(Boolean).map(Number),
    }));
  }

  /** Rows as arrays, text decoded (in the snapshot when one is open). */
  private async tuples(sql: string, params: readonly PgParam[]): Promise<Value[][]> {
    const rows = await this.reader.arrays<Value[]>(sql, params);
    return rows.map((row) => row.map((value) => (typeof value === "string" ? fromPgText(value) : value)));
  }
}

function toLocation(row: ArchiveTuple): ArchivedLocation {
  return {
    archivePath: row[0], archivedAt: row[1], conversationId: row[2], agentId: row[3], sessionId: row[4], kind: row[5], seqStart: row[6], seqEnd: row[7],
  };
}

function groupBy<T>(rows: Value[][], map: (row: Value[]) => T): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const row of rows) {
    const key = row[0] as number;
    const group = groups.get(key);
    if (group) group.push(map(row));
    else groups.set(key, [map(row)]);
  }
  return groups;
}
