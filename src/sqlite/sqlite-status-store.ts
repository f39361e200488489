/**
 * The SQLite side of StatusStore. summaryStats reads one conversation's summaries through
 * summaries_conversation_seq (SEARCH summaries USING INDEX summaries_conversation_seq (conversation_id=?));
 * databaseTotals sums the per-conversation counters instead of counting message rows, and what retention archived
 * from the archive list (one row per archive run), never from the messages.
 */
import type { Database } from "./database.js";
import type { ConversationId } from "../records.js";
import type { DatabaseTotals, StatusStore, SummaryDepthStats } from "../store/status-store.js";
import { SqliteSearchIndex } from "./sqlite-search-index.js";

export class SqliteStatusStore implements StatusStore {
  private readonly index: SqliteSearchIndex;

  constructor(private readonly db: Database) {
    this.index = new SqliteSearchIndex(db);
  }

  async summaryStats(conversationId: ConversationId): Promise<SummaryDepthStats[]> {
    return this.db
      .all<{ depth: number; count: number; tokens: number; fallback: number }>(
        `SELECT depth, count(*) AS count, total(token_count) AS tokens, total(level = 'fallback') AS fallback
         FROM summaries WHERE conversation_id = ? GROUP BY depth ORDER BY depth`,
        conversationId,
      )
      .map((row) => ({ depth: row.depth, count: row.count, tokens: row.tokens, fallbackCount: row.fallback }));
  }

  async archivedMessageCount(conversationId: ConversationId): Promise<number> {
    // Plan: SEARCH retention_archives USING INDEX retention_archives_conversation (conversation_id=?).
    return this.db.tuples<[number]>(
      "SELECT coalesce(sum(message_count), 0) FROM retention_archives WHERE conversation_id = ? AND kind = 'messages'", conversationId,
    )[0]?.[0] ?? 0;
  }

  async databaseTotals(): Promise<DatabaseTotals> {
    const row = this.db.get<{ conversations: number; messages: number; tokens: number; archived: number; ended: number }>(
      `SELECT count(*) AS conversations, total(message_count) AS messages, total(message_tokens) AS tokens,
              total(archived_at IS NOT NULL) AS archived, total(ended_at IS NOT NULL AND archived_at IS NULL) AS ended
         FROM conversations`,
    );
    return {
      conversations: row?.conversations ?? 0,
      messages: row?.messages ?? 0,
      messageTokens: row?.tokens ?? 0,
      archivedConversations: row?.archived ?? 0,
      endedConversations: row?.ended ?? 0,
      // Archives of a conversation archived whole outlive its rows: only those of conversations still stored count.
      archivedMessages: this.db.tuples<[number]>(
        `SELECT coalesce(sum(a.message_count), 0) FROM retention_archives a
         WHERE a.kind = 'messages' AND EXISTS (SELECT 1 FROM conversations c WHERE c.conversation_id = a.conversation_id)`,
      )[0]?.[0] ?? 0,
      awaitingIndex: await this.index.pendingMessages(),
    };
  }
}
