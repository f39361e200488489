/**
 * The SQLite side of SessionLifecycleStore. A new session rewrites one conversation's context items and counters in
 * one transaction that first re-checks the plan; /reset archives a row and inserts its successor in one transaction
 * (the partial unique index conversations_live_session keeps one live row per agent and session).
 */
import type { Database } from "./database.js";
import { MessageFlags } from "../messages/message-codec.js";
import type { ConversationId, ConversationKey, ConversationRecord } from "../records.js";
import type {
  NewSessionPlan,
  ResetContextItem,
  ResetWriteOutcome,
  SessionLifecycleStore,
} from "../store/session-store.js";
import { type ConversationRow, toConversation } from "./rows.js";

export class SqliteSessionStore implements SessionLifecycleStore {
  constructor(private readonly db: Database) {}

  async contextForReset(conversationId: ConversationId): Promise<ResetContextItem[]> {
    return this.db.all<{ ordinal: number; message_id: number | null; summary_id: number | null; token_count: number; depth: number | null }>(
      `SELECT ci.ordinal, ci.message_id, ci.summary_id, ci.token_count, s.depth
         FROM context_items ci LEFT JOIN summaries s ON s.id = ci.summary_id
        WHERE ci.conversation_id = ? ORDER BY ci.ordinal`,
      conversationId,
    ).map((row) => ({
      ordinal: row.ordinal, messageId: row.message_id, summaryRowId: row.summary_id, tokenCount: row.token_count, depth: row.depth,
    }));
  }

  async applyNewSession(conversationId: ConversationId, plan: NewSessionPlan): Promise<ResetWriteOutcome> {
    return this.db.write(() => {
      const conversation = this.db.get<{ session_started_at: number | null }>(
        "SELECT session_started_at FROM conversations WHERE conversation_id = ?", conversationId,
      );
      if (!conversation) return "stale";
      if (conversation.session_started_at !== null && plan.startedAt <= conversation.session_started_at) return "already";
      const current = this.db.all<{ ordinal: number }>(
        "SELECT ordinal FROM context_items WHERE conversation_id = ? ORDER BY ordinal", conversationId,
      ).map((row) => row.ordinal);
      if (current.length !== plan.plannedOrdinals.length || current.some((ordinal, index) => ordinal !== plan.plannedOrdinals[index])) {
        return "stale";
      }
      const keep = JSON.stringify(plan.keepOrdinals);
      // Raw messages that leave the context are never assembled again: flagged like any stored-only message, so the
      // integrity check's coverage (every visible message is in context or under a summary) still holds.
      this.db.run(
        `UPDATE messages SET flags = flags | ${MessageFlags.excluded}
          WHERE message_id IN (SELECT message_id FROM context_items
                                WHERE conversation_id = ? AND message_id IS NOT NULL
                                  AND ordinal NOT IN (SELECT value FROM json_each(?)))`,
        conversationId, keep,
      );
      this.db.run(
        "DELETE FROM context_items WHERE conversation_id = ? AND ordinal NOT IN (SELECT value FROM json_each(?))",
        conversationId, keep,
      );
      const totals = this.db.get<{ items: number; tokens: number; raw: number }>(
        `SELECT count(*) AS items, total(token_count) AS tokens, total(CASE WHEN message_id IS NOT NULL THEN token_count END) AS raw
           FROM context_items WHERE conversation_id = ?`,
        conversationId,
      )!;
      this.db.run(
        `UPDATE conversations SET context_items = ?, context_tokens = ?, context_raw_tokens = ?, session_started_at = ?,
           last_reset = ?, updated_at = ?, ended_at = NULL, end_reason = NULL
         WHERE conversation_id = ?`,
        totals.items, totals.tokens, totals.raw, plan.startedAt, JSON.stringify(plan.record), plan.record.at, conversationId,
      );
      return "applied";
    });
  }

  async archiveAndContinue(
    conversationId: ConversationId, request: { startedAt: number; reason: string; now: number },
  ): Promise<{ outcome: ResetWriteOutcome; successor: ConversationRecord | null }> {
    return this.db.write(() => {
      const row = this.db.get<ConversationRow>("SELECT * FROM conversations WHERE conversation_id = ?", conversationId);
      if (!row || row.archived_at !== null) return { outcome: "stale" as const, successor: null };
      if (row.session_started_at !== null && request.startedAt <= row.session_started_at) {
        return { outcome: "already" as const, successor: null };
      }
      this.db.run(
        "UPDATE conversations SET archived_at = ?, archive_reason = ?, updated_at = ? WHERE conversation_id = ?",
        request.now, request.reason, request.now, conversationId,
      );
      // The successor starts where the archived conversation's import stopped: the host's transcript reader keeps
      // returning the messages before the reset, which belong to the archive.
      const { lastInsertRowid } = this.db.run(
        `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, bootstrap_state,
           last_token_budget, last_window_tokens, last_reserve_tokens, session_started_at, previous_conversation_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        row.agent_id, row.session_id, row.session_key, request.now, request.now, row.bootstrap_state,
        row.last_token_budget, row.last_window_tokens, row.last_reserve_tokens, request.startedAt, conversationId,
      );
      const successor = this.db.get<ConversationRow>("SELECT * FROM conversations WHERE conversation_id = ?", lastInsertRowid);
      return { outcome: "applied" as const, successor: successor ? toConversation(successor) : null };
    });
  }

  async noteSessionStart(conversationId: ConversationId, startedAt: number): Promise<void> {
    const row = this.db.get<{ session_started_at: number | null }>(
      "SELECT session_started_at FROM conversations WHERE conversation_id = ?", conversationId,
    );
    if (!row || row.session_started_at !== null) return;
    await this.db.write(() => this.db.run(
      "UPDATE conversations SET session_started_at = ? WHERE conversation_id = ? AND session_started_at IS NULL",
      startedAt, conversationId,
    ));
  }

  async markEnded(key: Pick<ConversationKey, "agentId" | "sessionId">, reason: string, now: number): Promise<boolean> {
    const { changes } = await this.db.write(() => this.db.run(
      `UPDATE conversations SET ended_at = ?, end_reason = ?
        WHERE agent_id = ? AND session_id = ? AND archived_at IS NULL AND ended_at IS NULL`,
      now, reason, key.agentId, key.sessionId,
    ));
    return Number(changes) > 0;
  }

  async excludeHostCommand(conversationId: ConversationId, commandIdempotencyKey: string): Promise<boolean> {
    const legacy = `key:${commandIdempotencyKey}`;
    return this.db.write(() => {
      // identity_key is `key:<idempotencyKey>#<fingerprint>` (or the legacy `key:<idempotencyKey>`): a range of the index.
      const message = this.db.get<{ message_id: number; token_count: number }>(
        `SELECT message_id, token_count FROM messages
          WHERE conversation_id = ? AND role = 'user' AND (flags & ${MessageFlags.excluded}) = 0
            AND (identity_key = ? OR (identity_key >= ? AND identity_key < ?))
          LIMIT 1`,
        conversationId, legacy, `${legacy}#`, `${legacy}$`,
      );
      if (!message) return false;
      const { changes } = this.db.run(
        "DELETE FROM context_items WHERE conversation_id = ? AND message_id = ?", conversationId, message.message_id,
      );
      if (changes === 0) return false; // already summarized: it stays under its summary
      this.db.run(`UPDATE messages SET flags = flags | ${MessageFlags.excluded} WHERE message_id = ?`, message.message_id);
      this.db.run(
        `UPDATE conversations SET context_items = context_items - 1, context_tokens = context_tokens - ?,
           context_raw_tokens = context_raw_tokens - ? WHERE conversation_id = ?`,
        message.token_count, message.token_count, conversationId,
      );
      return true;
    });
  }

  async listOpenConversations(afterId: ConversationId, limit: number): Promise<ConversationRecord[]> {
    return this.db.all<ConversationRow>(
      `SELECT * FROM conversations
        WHERE conversation_id > ? AND archived_at IS NULL AND ended_at IS NULL AND session_key IS NOT NULL
        ORDER BY conversation_id LIMIT ?`,
      afterId, limit,
    ).map(toConversation);
  }
}
