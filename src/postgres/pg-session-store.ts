/**
 * The PostgreSQL side of SessionLifecycleStore (sqlite/sqlite-session-store.ts ported). A new session rewrites one
 * conversation's context items and counters in one transaction that locks the conversation's row and re-checks the
 * plan; /reset archives the row and inserts its successor in one transaction (the partial unique index
 * conversations_live_session keeps one live row per agent and session, whichever gateway asks).
 */
import { MessageFlags } from "../messages/message-codec.js";
import type { ConversationId, ConversationKey, ConversationRecord } from "../records.js";
import type { NewSessionPlan, ResetContextItem, ResetWriteOutcome, SessionLifecycleStore } from "../store/session-store.js";
import { type PgDatabase, toPgText } from "./pg-database.js";
import { type PgConversationRow, toConversation } from "./pg-rows.js";

export class PgSessionStore implements SessionLifecycleStore {
  constructor(private readonly database: PgDatabase) {}

  async contextForReset(conversationId: ConversationId): Promise<ResetContextItem[]> {
    const rows = await this.database.rows<{ ordinal: number; message_id: number | null; summary_id: number | null; token_count: number; depth: number | null }>(
      `SELECT ci.ordinal, ci.message_id, ci.summary_id, ci.token_count, s.depth
         FROM context_items ci LEFT JOIN summaries s ON s.id = ci.summary_id
        WHERE ci.conversation_id = $1 ORDER BY ci.ordinal`,
      [conversationId],
    );
    return rows.map((row) => ({ ordinal: row.ordinal, messageId: row.message_id, summaryRowId: row.summary_id, tokenCount: row.token_count, depth: row.depth }));
  }

  async applyNewSession(conversationId: ConversationId, plan: NewSessionPlan): Promise<ResetWriteOutcome> {
    return this.database.transaction(async (tx): Promise<ResetWriteOutcome> => {
      const conversation = await tx.row<{ session_started_at: number | null }>(
        "SELECT session_started_at FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId],
      );
      if (!conversation) return "stale";
      if (conversation.session_started_at !== null && plan.startedAt <= conversation.session_started_at) return "already";
      const current = (await tx.rows<{ ordinal: number }>(
        "SELECT ordinal FROM context_items WHERE conversation_id = $1 ORDER BY ordinal", [conversationId],
      )).map((row) => row.ordinal);
      if (current.length !== plan.plannedOrdinals.length || current.some((ordinal, index) => ordinal !== plan.plannedOrdinals[index])) {
        return "stale";
      }
      // Raw messages that leave the context are never assembled again: flagged like any stored-only message, so the
      // integrity check's coverage (every visible message is in context or under a summary) still holds.
      await tx.run(
        `UPDATE messages SET flags = flags | ${MessageFlags.excluded}
          WHERE message_id IN (SELECT message_id FROM context_items
                                WHERE conversation_id = $1 AND message_id IS NOT NULL AND ordinal <> ALL($2::bigint[]))`,
        [conversationId, plan.keepOrdinals],
      );
      await tx.run("DELETE FROM context_items WHERE conversation_id = $1 AND ordinal <> ALL($2::bigint[])", [conversationId, plan.keepOrdinals]);
      const totals = (await tx.row<{ items: number; tokens: number; raw: number }>(
        `SELECT count(*)::bigint AS items, coalesce(sum(token_count), 0)::bigint AS tokens,
                coalesce(sum(token_count) FILTER (WHERE message_id IS NOT NULL), 0)::bigint AS raw
           FROM context_items WHERE conversation_id = $1`,
        [conversationId],
      ))!;
      await tx.run(
        `UPDATE conversations SET context_items = $1, context_tokens = $2, context_raw_tokens = $3, session_started_at = $4,
           last_reset = $5, updated_at = $6, ended_at = NULL, end_reason = NULL
         WHERE conversation_id = $7`,
        [totals.items, totals.tokens, totals.raw, plan.startedAt, JSON.stringify(plan.record), plan.record.at, conversationId],
      );
      return "applied";
    });
  }

  async archiveAndContinue(
    conversationId: ConversationId, request: { startedAt: number; reason: string; now: number },
  ): Promise<{ outcome: ResetWriteOutcome; successor: ConversationRecord | null }> {
    return this.database.transaction(async (tx) => {
      const row = await tx.row<PgConversationRow>("SELECT * FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId]);
      if (!row || row.archived_at !== null) return { outcome: "stale" as const, successor: null };
      if (row.session_started_at !== null && request.startedAt <= row.session_started_at) return { outcome: "already" as const, successor: null };
      await tx.run(
        "UPDATE conversations SET archived_at = $1, archive_reason = $2, updated_at = $1 WHERE conversation_id = $3",
        [request.now, toPgText(request.reason), conversationId],
      );
      // The successor starts where the archived conversation's import stopped: the host's transcript reader keeps
      // returning the messages before the reset, which belong to the archive. Its text columns are copied as stored.
      const successor = await tx.row<PgConversationRow>(
        `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, bootstrap_state,
           last_token_budget, last_window_tokens, last_reserve_tokens, session_started_at, previous_conversation_id)
         VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
        [
          row.agent_id, row.session_id, row.session_key, request.now, row.bootstrap_state, row.last_token_budget,
          row.last_window_tokens, row.last_reserve_tokens, request.startedAt, conversationId,
        ],
      );
      return { outcome: "applied" as const, successor: successor ? toConversation(successor) : null };
    });
  }

  async noteSessionStart(conversationId: ConversationId, startedAt: number): Promise<void> {
    await this.database.run(
      "UPDATE conversations SET session_started_at = $1 WHERE conversation_id = $2 AND session_started_at IS NULL", [startedAt, conversationId],
    );
  }

  async markEnded(key: Pick<ConversationKey, "agentId" | "sessionId">, reason: string, now: number): Promise<boolean> {
    const changed = await this.database.run(
      `UPDATE conversations SET ended_at = $1, end_reason = $2
        WHERE agent_id = $3 AND session_id = $4 AND archived_at IS NULL AND ended_at IS NULL`,
      [now, toPgText(reason), toPgText(key.agentId), toPgText(key.sessionId)],
    );
    return changed > 0;
  }

  async excludeHostCommand(conversationId: ConversationId, commandIdempotencyKey: string): Promise<boolean> {
    const legacy = toPgText(`key:${commandIdempotencyKey}`);
    return this.database.transaction(async (tx) => {
      await tx.run("SELECT 1 FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId]);
      // identity_key is `key:<idempotencyKey>#<fingerprint>` (or the legacy `key:<idempotencyKey>`). starts_with, not a
      // range: a range compares in the database's collation, which may not order '#' and '$' as code points do.
      const message = await tx.row<{ message_id: number; token_count: number }>(
        `SELECT message_id, token_count FROM messages
          WHERE conversation_id = $1 AND role = 'user' AND (flags & ${MessageFlags.excluded}) = 0
            AND (identity_key = $2 OR starts_with(identity_key, $3))
          LIMIT 1`,
        [conversationId, legacy, `${legacy}#`],
      );
      if (!message) return false;
      const removed = await tx.run("DELETE FROM context_items WHERE conversation_id = $1 AND message_id = $2", [conversationId, message.message_id]);
      if (removed === 0) return false; // already summarized: it stays under its summary
      await tx.run(`UPDATE messages SET flags = flags | ${MessageFlags.excluded} WHERE message_id = $1`, [message.message_id]);
      await tx.run(
        `UPDATE conversations SET context_items = context_items - 1, context_tokens = context_tokens - $1,
           context_raw_tokens = context_raw_tokens - $1 WHERE conversation_id = $2`,
        [message.token_count, conversationId],
      );
      return true;
    });
  }

  async listOpenConversations(afterId: ConversationId, limit: number): Promise<ConversationRecord[]> {
    const rows = await this.database.rows<PgConversationRow>(
      `SELECT * FROM conversations
        WHERE conversation_id > $1 AND archived_at IS NULL AND ended_at IS NULL AND session_key IS NOT NULL
        ORDER BY conversation_id LIMIT $2`,
      [afterId, limit],
    );
    return rows.map(toConversation);
  }
}
