/**
 * The SQLite side of OperatorStore. listConversations reads the conversations table (a few hundred rows at most in
 * practice) and one grouped pass over summaries by summaries_conversation_seq; summaryNodes reads one
 * conversation's summaries through the same index (SEARCH summaries USING INDEX summaries_conversation_seq
 * (conversation_id=?)), their parent links, and the conversation's context items once to mark those in context.
 */
import { statSync } from "node:fs";
import type { Database } from "./database.js";
import type { ConversationId, SummaryKind, SummaryLevel } from "../records.js";
import type { ConversationListing, DatabaseFileInfo, OperatorStore, SummaryNode } from "../store/operator-store.js";
import { type ConversationRow, toConversation } from "./rows.js";

export class SqliteOperatorStore implements OperatorStore {
  constructor(private readonly db: Database) {}

  async listConversations(filter: { agentId?: string; limit: number }): Promise<ConversationListing[]> {
    const rows = filter.agentId === undefined
      ? this.db.all<ConversationRow>("SELECT * FROM conversations ORDER BY updated_at DESC, conversation_id DESC LIMIT ?", filter.limit)
      : this.db.all<ConversationRow>(
          "SELECT * FROM conversations WHERE agent_id = ? ORDER BY updated_at DESC, conversation_id DESC LIMIT ?", filter.agentId, filter.limit,
        );
    if (rows.length === 0) return [];
    const counts = new Map(this.db.all<{ conversation_id: number; summaries: number; fallback: number; max_depth: number | null }>(
      `SELECT conversation_id, count(*) AS summaries, total(level = 'fallback') AS fallback, max(depth) AS max_depth
       FROM summaries WHERE conversation_id IN (SELECT value FROM json_each(?)) GROUP BY conversation_id`,
      JSON.stringify(rows.map((row) => row.conversation_id)),
    ).map((row) => [row.conversation_id, row]));
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
    const rows = this.db.all<{
      id: number; summary_id: string; kind: SummaryKind; depth: number; level: SummaryLevel; token_count: number;
      source_token_count: number; source_message_count: number; descendant_count: number; seq_start: number; seq_end: number;
      earliest_at: number; latest_at: number; created_at: number; preview: string;
    }>(
      `SELECT s.id, s.summary_id, s.kind, s.depth, s.level, s.token_count, s.source_token_count, s.source_message_count,
         s.descendant_count, s.seq_start, s.seq_end, s.earliest_at, s.latest_at, s.created_at, substr(s.content, 1, ?) AS preview
       FROM summaries s WHERE s.conversation_id = ? ORDER BY s.seq_start, s.depth DESC, s.id`,
      previewChars, conversationId,
    );
    // One pass over the conversation's context items (its primary key range), not one probe per summary.
    const inContext = new Set(this.db.all<{ summary_id: number }>(
      "SELECT summary_id FROM context_items WHERE conversation_id = ? AND summary_id IS NOT NULL", conversationId,
    ).map((row) => row.summary_id));
    const parents = new Map<number, string[]>();
    for (const link of this.db.all<{ summary_id: number; parent: string }>(
      `SELECT p.summary_id, s.summary_id AS parent FROM summary_parents p JOIN summaries s ON s.id = p.parent_summary_id
       WHERE p.summary_id IN (SELECT id FROM summaries WHERE conversation_id = ?) ORDER BY p.summary_id, p.ordinal`,
      conversationId,
    )) {
      const list = parents.get(link.summary_id) ?? [];
      list.push(link.parent);
      parents.set(link.summary_id, list);
    }
    return rows.map((row) => ({
      summaryId: row.summary_id, kind: row.kind, depth: row.depth, level: row.level, tokenCount: row.token_count,
      sourceTokenCount: row.source_token_count, sourceMessageCount: row.source_message_count, descendantCount: row.descendant_count,
      seqStart: row.seq_start, seqEnd: row.seq_end, earliestAt: row.earliest_at, latestAt: row.latest_at, createdAt: row.created_at,
      parentSummaryIds: parents.get(row.id) ?? [], inContext: inContext.has(row.id), preview: row.preview,
    }));
  }

  async contextTokensTotal(): Promise<number> {
    return this.db.get<{ tokens: number }>("SELECT total(context_tokens) AS tokens FROM conversations")?.tokens ?? 0;
  }

  async fileInfo(): Promise<DatabaseFileInfo> {
    const pragma = <T>(name: string): T => Object.values(this.db.get<Record<string, T>>(`PRAGMA ${name}`) ?? {})[0] as T;
    const pageSize = Number(pragma<number>("page_size"));
    const pageCount = Number(pragma<number>("page_count"));
    const freePages = Number(pragma<number>("freelist_count"));
    return {
      backend: "sqlite",
      schemaVersion: Number(pragma<number>("user_version")),
      // The file as the file system has it (a write-ahead log not yet checkpointed is apart); pages for a memory database.
      sizeBytes: statSync(this.db.path, { throwIfNoEntry: false })?.size ?? pageCount * pageSize,
      freeBytes: freePages * pageSize,
      journalMode: String(pragma<string>("journal_mode")),
      applicationId: Number(pragma<number>("application_id")),
      pageSize,
      pageCount,
      freePages,
    };
  }
}
