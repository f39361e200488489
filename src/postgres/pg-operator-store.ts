/**
 * The PostgreSQL side of OperatorStore: the reads behind `lcm conversations`, the DAG view and `lcm status`'s database
 * line. listConversations reads the conversations table and one grouped pass over the listed conversations'
 * summaries (summaries_conversation_seq); summaryNodes reads one conversation's summaries, their parent links and its
 * context items once. Host text (ids, summary text) comes back through fromPgText.
 */
import type { ConversationId, SummaryKind, SummaryLevel } from "../records.js";
import type { ConversationListing, DatabaseFileInfo, OperatorStore, SummaryNode } from "../store/operator-store.js";
import { fromPgText, type PgDatabase, toPgText } from "./pg-database.js";
import { PG_SCHEMA_VERSION } from "./pg-migrations.js";
import { type PgConversationRow, toConversation } from "./pg-rows.js";
import { pgSpace } from "./pg-space.js";

export class PgOperatorStore implements OperatorStore {
  constructor(private readonly database: PgDatabase) {}

  async listConversations(filter: { agentId?: string; limit: number }): Promise<ConversationListing[]> {
    const rows = filter.agentId === undefined
      ? await this.database.rows<PgConversationRow>("SELECT * FROM conversations ORDER BY updated_at DESC, conversation_id DESC LIMIT $1", [filter.limit])
      : await this.database.rows<PgConversationRow>(
          "SELECT * FROM conversations WHERE agent_id = $1 ORDER BY updated_at DESC, conversation_id DESC LIMIT $2",
          [toPgText(filter.agentId), filter.limit],
        );
    if (rows.length === 0) return [];
    const counts = new Map((await this.database.rows<{ conversation_id: number; summaries: number; fallback: number; max_depth: number | null }>(
      `SELECT conversation_id, count(*) AS summaries, count(*) FILTER (WHERE level = 'fallback') AS fallback, max(depth) AS max_depth
       FROM summaries WHERE conversation_id = ANY($1::bigint[]) GROUP BY conversation_id`,
      [rows.map((row) => row.conversation_id)],
    )).map((row) => [row.conversation_id, row]));
    return rows.map((row) => {
      const count = counts.get(row.conversation_id);
      return {
        conversation: toConversation(row),
        summaries: count?.summaries ?? 0,
        fallbackSummaries: count?.fallback ?? 0,
        maxDepth: count?.max_depth ?? null,
      };
    });
  }

  async summaryNodes(conversationId: ConversationId, previewChars: number): Promise<SummaryNode[]> {
    const rows = await this.database.rows<{
      id: number; summary_id: string; kind: SummaryKind; depth: number; level: SummaryLevel; token_count: number;
      source_token_count: number; source_message_count: number; descendant_count: number; seq_start: number; seq_end: number;
      earliest_at: number; latest_at: number; created_at: number; preview: string;
    }>(
      // A little more than asked for: an escaped NUL takes two characters in PostgreSQL and is cut to size once read back.
      `SELECT s.id, s.summary_id, s.kind, s.depth, s.level, s.token_count, s.source_token_count, s.source_message_count,
         s.descendant_count, s.seq_start, s.seq_end, s.earliest_at, s.latest_at, s.created_at, substr(s.content, 1, $1) AS preview
       FROM summaries s WHERE s.conversation_id = $2 ORDER BY s.seq_start, s.depth DESC, s.id`,
      [Math.max(0, previewChars) * 2, conversationId],
    );
    const inContext = new Set((await this.database.rows<{ summary_id: number }>(
      "SELECT summary_id FROM context_items WHERE conversation_id = $1 AND summary_id IS NOT NULL", [conversationId],
    )).map((row) => row.summary_id));
    const parents = new Map<number, string[]>();
    for (const link of await this.database.rows<{ summary_id: number; parent: string }>(
      `SELECT p.summary_id, s.summary_id AS parent FROM summary_parents p JOIN summaries s ON s.id = p.parent_summary_id
       WHERE p.summary_id IN (SELECT id FROM summaries WHERE conversation_id = $1) ORDER BY p.summary_id, p.ordinal`,
      [conversationId],
    )) {
      const list = parents.get(link.summary_id) ?? [];
      list.push(fromPgText(link.parent));
      parents.set(link.summary_id, list);
    }
    return rows.map((row) => ({
      summaryId: fromPgText(row.summary_id), kind: row.kind, depth: row.depth, level: row.level, tokenCount: row.token_count,
      sourceTokenCount: row.source_token_count, sourceMessageCount: row.source_message_count, descendantCount: row.descendant_count,
      seqStart: row.seq_start, seqEnd: row.seq_end, earliestAt: row.earliest_at, latestAt: row.latest_at, createdAt: row.created_at,
      parentSummaryIds: parents.get(row.id) ?? [], inContext: inContext.has(row.id), preview: fromPgText(row.preview).slice(0, previewChars),
    }));
  }

  async contextTokensTotal(): Promise<number> {
    return (await this.database.row<{ tokens: number }>("SELECT coalesce(sum(context_tokens), 0)::bigint AS tokens FROM conversations"))?.tokens ?? 0;
  }

  async fileInfo(): Promise<DatabaseFileInfo> {
    const space = await pgSpace(this.database);
    const version = await this.database.row<{ version: number | null }>("SELECT max(version) AS version FROM lcm_schema_migrations");
    const wal = await this.database.row<{ level: string }>("SELECT current_setting('wal_level') AS level");
    return {
      backend: "postgresql",
      schemaVersion: version?.version ?? PG_SCHEMA_VERSION,
      sizeBytes: space.databaseBytes,
      freeBytes: space.freeBytes,
      journalMode: `wal (server, wal_level=${wal?.level ?? "unknown"})`,
      applicationId: null,
      pageSize: null,
      pageCount: null,
      freePages: null,
    };
  }
}
