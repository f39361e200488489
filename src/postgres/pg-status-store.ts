/**
 * The PostgreSQL side of StatusStore (sqlite/sqlite-status-store.ts ported): summaryStats reads one conversation's
 * summaries through summaries_conversation_seq; databaseTotals sums the per-conversation counters instead of counting
 * message rows, reads what retention archived from the archive list, and asks the search index what waits for it.
 */
import type { ConversationId } from "../records.js";
import type { SearchIndex } from "../store/search-index.js";
import type { DatabaseTotals, StatusStore, SummaryDepthStats } from "../store/status-store.js";
import type { PgDatabase } from "./pg-database.js";

export class PgStatusStore implements StatusStore {
  constructor(private readonly database: PgDatabase, private readonly searchIndex: Pick<SearchIndex, "pendingMessages">) {}

  async summaryStats(conversationId: ConversationId): Promise<SummaryDepthStats[]> {
    const rows = await this.database.rows<{ depth: number; count: number; tokens: number; fallback: number }>(
      `SELECT depth, count(*)::bigint AS count, coalesce(sum(token_count), 0)::bigint AS tokens,
              count(*) FILTER (WHERE level = 'fallback')::bigint AS fallback
         FROM summaries WHERE conversation_id = $1 GROUP BY depth ORDER BY depth`,
      [conversationId],
    );
    return rows.map((row) => ({ depth: row.depth, count: row.count, tokens: row.tokens, fallbackCount: row.fallback }));
  }

  async archivedMessageCount(conversationId: ConversationId): Promise<number> {
    const row = await this.database.row<{ count: number }>(
      "SELECT coalesce(sum(message_count), 0)::bigint AS count FROM retention_archives WHERE conversation_id = $1 AND kind = 'messages'",
      [conversationId],
    );
    return row?.count ?? 0;
  }

  async databaseTotals(): Promise<DatabaseTotals> {
    const row = await this.database.row<{ conversations: number; messages: number; tokens: number; archived: number; ended: number; archived_messages: number }>(
      `SELECT count(*)::bigint AS conversations, coalesce(sum(message_count), 0)::bigint AS messages,
              coalesce(sum(message_tokens), 0)::bigint AS tokens,
              count(*) FILTER (WHERE archived_at IS NOT NULL)::bigint AS archived,
              count(*) FILTER (WHERE ended_at IS NOT NULL AND archived_at IS NULL)::bigint AS ended,
              -- Archives of a conversation archived whole outlive its rows: only those of conversations still stored count.
              (SELECT coalesce(sum(a.message_count), 0)::bigint FROM retention_archives a
                WHERE a.kind = 'messages' AND EXISTS (SELECT 1 FROM conversations c WHERE c.conversation_id = a.conversation_id)) AS archived_messages
         FROM conversations`,
    );
    return {
      conversations: row?.conversations ?? 0,
      messages: row?.messages ?? 0,
      messageTokens: row?.tokens ?? 0,
      archivedConversations: row?.archived ?? 0,
      endedConversations: row?.ended ?? 0,
      archivedMessages: row?.archived_messages ?? 0,
      awaitingIndex: await this.searchIndex.pendingMessages(),
    };
  }
}
