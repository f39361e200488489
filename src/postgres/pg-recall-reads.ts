/**
 * The PostgreSQL retrieval store's reads that are not search: what lcm_describe and lcm_expand read (a summary's
 * lineage, the summary standing for a message in the context, messages' texts), which conversations recall may read,
 * and where retention archived what recall cannot show. Ported from the SQLite store's reads, one statement each.
 */
import type { ConversationId, ConversationRecord, MessageId, SummaryId } from "../records.js";
import type { ArchivedLocation } from "../store/retention-store.js";
import type { MessageText, SummaryLineage } from "../store/retrieval-store.js";
import { fromPgText, type PgDatabase, toPgText } from "./pg-database.js";
import { preparedStatement } from "./pg-queryable.js";
import { type PgConversationRow, toConversation } from "./pg-rows.js";

/** Bound on the climb from a leaf to its root (depths stay far below this). */
const MAX_DAG_DEPTH = 64;

interface ArchiveRow {
  archive_id: number;
  kind: "conversation" | "messages";
  path: string;
  created_at: number;
  conversation_id: number;
  agent_id: string;
  session_id: string;
  seq_start: number | null;
  seq_end: number | null;
}

// The recall reads' statements are planned once per connection ("generic", pg-queryable.ts): their plans are index
// look-ups by key whatever the values, and planning them cost more than running them (0.15-0.45 ms against 0.03-0.1
// at 100k).

/** Per seq: the nearest leaf holding it, then its parents up to the root ($3 levels at most). */
const COVERING_SQL = preparedStatement(
  `WITH RECURSIVE climb (seq, id, level) AS (
    SELECT q.seq, leaf.id, 0 FROM unnest($2::bigint[]) AS q (seq)
    JOIN LATERAL (SELECT id, seq_end FROM summaries WHERE conversation_id = $1 AND seq_start <= q.seq AND kind = 'leaf'
                  ORDER BY seq_start DESC LIMIT 1) leaf ON leaf.seq_end >= q.seq
    UNION ALL
    SELECT c.seq, up.summary_id, c.level + 1 FROM climb c
    JOIN LATERAL (SELECT summary_id FROM summary_parents WHERE parent_summary_id = c.id LIMIT 1) up ON true
    WHERE c.level < $3
  )
  SELECT DISTINCT ON (c.seq) c.seq, s.summary_id FROM climb c JOIN summaries s ON s.id = c.id ORDER BY c.seq, c.level DESC`,
  { plan: "generic" },
);

/**
 * A summary's children, source messages (`limit` at most), parents and place in the context, and its archived sources;
 * the summary's row id and conversation given as SQL (parameters, or a row of the statement's FROM).
 */
function lineageColumns(summary: string, conversation: string, limit: string): string {
  return `ARRAY(SELECT s.summary_id FROM summary_parents p JOIN summaries s ON s.id = p.summary_id WHERE p.parent_summary_id = ${summary} ORDER BY s.id) AS children,
    ARRAY(SELECT message_id FROM summary_messages WHERE summary_id = ${summary} ORDER BY ordinal LIMIT ${limit}) AS messages,
    ARRAY(SELECT parent_summary_id FROM summary_parents WHERE summary_id = ${summary} ORDER BY ordinal) AS parents,
    EXISTS (SELECT 1 FROM context_items WHERE conversation_id = ${conversation} AND summary_id = ${summary}) AS in_context,
    (SELECT json_agg(archive ORDER BY archive.archive_id) FROM (
       SELECT a.archive_id, a.kind, a.path, a.created_at, a.conversation_id, a.agent_id, a.session_id, a.seq_start, a.seq_end,
              array_agg(m.message_id ORDER BY m.message_id) AS ids
       FROM summary_messages sm JOIN messages m ON m.message_id = sm.message_id JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE sm.summary_id = ${summary} GROUP BY a.archive_id) archive) AS archived`;
}

/** The lineage of summary row $1 in conversation $2 ($3 source messages at most). */
const LINEAGE_SQL = preparedStatement(`SELECT ${lineageColumns("$1", "$2", "$3")}`, { plan: "generic" });

/** The lineage of the summary whose id is $1 ($2 source messages at most); no row when there is no such summary. */
const LINEAGE_BY_ID_SQL = preparedStatement(
  `SELECT ${lineageColumns("target.id", "target.conversation_id", "$2")} FROM summaries target WHERE target.summary_id = $1`,
  { plan: "generic" },
);

/** Message archives of conversations $1, and whole conversations archived of the agents that own them. */
const ARCHIVES_OF_SQL = preparedStatement(
  `SELECT DISTINCT ON (path) * FROM retention_archives
  WHERE (kind = 'messages' AND conversation_id = ANY($1::bigint[]))
     OR (kind = 'conversation' AND agent_id IN (SELECT agent_id FROM conversations WHERE conversation_id = ANY($1::bigint[])))
  ORDER BY path, archive_id DESC`,
  { plan: "generic" },
);

export class PgRecallReads {
  constructor(private readonly db: PgDatabase) {}

  async maxMessageSeq(conversationId: ConversationId): Promise<number> {
    return (await this.db.row<{ top: number | null }>("SELECT max(seq) AS top FROM messages WHERE conversation_id = $1", [conversationId]))?.top ?? 0;
  }

  /**
   * Per seq: the nearest leaf holding it, then its parents up to the root, all seqs in one statement (a round trip
   * per seq and level cost more than the reads themselves).
   */
  async coveringSummaryIds(conversationId: ConversationId, seqs: number[]): Promise<Map<number, SummaryId | null>> {
    const unique = [...new Set(seqs)];
    const covering = new Map<number, SummaryId | null>(unique.map((seq) => [seq, null]));
    if (unique.length === 0) return covering;
    const rows = await this.db.rows<{ seq: number; summary_id: string }>(COVERING_SQL, [conversationId, unique, MAX_DAG_DEPTH]);
    for (const row of rows) covering.set(row.seq, row.summary_id);
    return covering;
  }

  /**
   * One statement (describe and each step of an expansion read it): the children, source messages, parents and place in
   * the context as columns of one row, and the archives holding sources as JSON (rare: retention's archived messages).
   */
  async summaryLineage(summaryRowId: number, conversationId: ConversationId, messageLimit: number): Promise<SummaryLineage> {
    return toLineage(await this.db.row<LineageRow>(LINEAGE_SQL, [summaryRowId, conversationId, messageLimit]));
  }

  async summaryLineageById(summaryId: SummaryId, messageLimit: number): Promise<SummaryLineage | null> {
    const row = await this.db.row<LineageRow>(LINEAGE_BY_ID_SQL, [toPgText(summaryId), messageLimit]);
    return row ? toLineage(row) : null;
  }

  async archivedIdLocation(id: string): Promise<ArchivedLocation | null> {
    const row = await this.db.row<ArchiveRow>(
      "SELECT a.* FROM retention_archived_ids i JOIN retention_archives a ON a.archive_id = i.archive_id WHERE i.id = $1", [id],
    );
    return row ? toLocation(row) : null;
  }

  /** Message archives of these conversations, and whole conversations archived of the agents that own them. */
  async archivesOf(conversationIds: readonly ConversationId[], limit: number): Promise<ArchivedLocation[]> {
    const rows = await this.db.rows<ArchiveRow>(
      ARCHIVES_OF_SQL,
      [conversationIds],
    );
    return rows.sort((a, b) => b.archive_id - a.archive_id).slice(0, limit).map(toLocation);
  }

  async getMessageTexts(messageIds: MessageId[]): Promise<MessageText[]> {
    if (messageIds.length === 0) return [];
    const rows = await this.db.rows<{
      message_id: number; conversation_id: number; seq: number; role: string; created_at: number; content: string; token_count: number; archive_path: string | null;
    }>(
      `SELECT m.message_id, m.conversation_id, m.seq, m.role, m.created_at, m.content, m.token_count, a.path AS archive_path FROM messages m
       LEFT JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE m.message_id = ANY($1::bigint[])`,
      [messageIds],
    );
    const byId = new Map(rows.map((row) => [row.message_id, row]));
    return messageIds.flatMap((id) => {
      const row = byId.get(id);
      if (!row) return [];
      const text = row.archive_path === null
        ? { content: fromPgText(row.content), tokenCount: row.token_count }
        : archivedText(row.message_id, row.seq, row.conversation_id, row.archive_path);
      return [{ messageId: row.message_id, conversationId: row.conversation_id, seq: row.seq, role: fromPgText(row.role), createdAt: row.created_at, ...text }];
    });
  }

  /** `agentId` as stored (NUL-escaped), or null for every agent; neither expansion sessions nor conversations being deleted. */
  async listRecallConversationIds(agentId: string | null, expansionPrefix: string): Promise<ConversationId[]> {
    const readable = "(session_key IS NULL OR strpos(session_key, $1) = 0) AND coalesce(archive_reason, '') <> 'lcm-retention:deleting'";
    const rows = agentId === null
      ? await this.db.rows<{ conversation_id: number }>(`SELECT conversation_id FROM conversations WHERE ${readable} ORDER BY conversation_id`, [expansionPrefix])
      : await this.db.rows<{ conversation_id: number }>(
          `SELECT conversation_id FROM conversations WHERE agent_id = $2 AND ${readable} ORDER BY conversation_id`, [expansionPrefix, agentId],
        );
    return rows.map((row) => row.conversation_id);
  }

  async findConversationBySessionKey(agentId: string, sessionKey: string): Promise<ConversationRecord | null> {
    const row = await this.db.row<PgConversationRow>(
      "SELECT * FROM conversations WHERE agent_id = $1 AND session_key = $2 ORDER BY archived_at IS NOT NULL, updated_at DESC LIMIT 1",
      [toPgText(agentId), toPgText(sessionKey)],
    );
    return row ? toConversation(row) : null;
  }
}

function toLocation(row: ArchiveRow): ArchivedLocation {
  return {
    archivePath: row.path, archivedAt: row.created_at, conversationId: row.conversation_id, agentId: fromPgText(row.agent_id),
    sessionId: fromPgText(row.session_id), kind: row.kind, seqStart: row.seq_start, seqEnd: row.seq_end,
  };
}

/** A message retention archived (a stub): where its text is. */
function archivedText(messageId: number, seq: number, conversationId: number, archivePath: string): { content: string; tokenCount: number } {
  const content = `[archived by retention: message ${messageId} (seq ${seq}) of conversation ${conversationId} is in ` +
    `${archivePath} (gzip JSONL, the line with "messageId":${messageId}); only the summaries above it remain here]`;
  return { content, tokenCount: Math.ceil(content.length / 4) };
}

type LineageRow = { children: string[]; messages: (string | number)[]; parents: (string | number)[]; in_context: boolean; archived: (ArchiveRow & { ids: number[] })[] | null };

function toLineage(row: LineageRow | null): SummaryLineage {
  return {
    childSummaryIds: row?.children ?? [],
    // BIGINT arrays arrive as strings (the pool's number parser covers single BIGINTs only).
    sourceMessageIds: (row?.messages ?? []).map(Number),
    parentRowIds: (row?.parents ?? []).map(Number),
    inContext: row?.in_context ?? false,
    archivedSources: (row?.archived ?? []).map((archive) => ({ ...toLocation(archive), messageIds: archive.ids.map(Number) })),
  };
}
