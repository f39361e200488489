/**
 * The SQLite side of GrantStore. Grants are few (one per delegated expansion) and short-lived; lookups go by
 * primary key or by the child-session index (EXPLAIN QUERY PLAN: SEARCH expansion_grants USING INDEX
 * expansion_grants_child (child_session_key=?)). Charges are one conditional UPDATE, so concurrent child tool
 * calls never push `tokens_used` past the cap.
 */
import type { Database } from "./database.js";
import type { ConversationId } from "../records.js";
import type { GrantRecord, GrantStore, NewGrant } from "../store/grant-store.js";

interface GrantRow {
  grant_id: string;
  agent_id: string;
  child_session_key: string | null;
  conversation_ids: string;
  token_cap: number;
  tokens_used: number;
  summaries_expanded: number;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  revoke_reason: string | null;
}

function toGrant(row: GrantRow): GrantRecord {
  return {
    grantId: row.grant_id,
    agentId: row.agent_id,
    childSessionKey: row.child_session_key ?? "",
    conversationIds: JSON.parse(row.conversation_ids) as ConversationId[],
    tokenCap: row.token_cap,
    tokensUsed: row.tokens_used,
    summariesExpanded: row.summaries_expanded,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    revokeReason: row.revoke_reason,
  };
}

export class SqliteGrantStore implements GrantStore {
  constructor(private readonly db: Database) {}

  async createGrant(grant: NewGrant): Promise<GrantRecord> {
    await this.db.write(() =>
      this.db.run(
        `INSERT INTO expansion_grants (grant_id, agent_id, child_session_key, conversation_ids, token_cap, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        grant.grantId, grant.agentId, grant.childSessionKey, JSON.stringify(grant.conversationIds), grant.tokenCap,
        grant.createdAt, grant.expiresAt,
      ),
    );
    return (await this.getGrant(grant.grantId))!;
  }

  async getGrant(grantId: string): Promise<GrantRecord | null> {
    const row = this.db.get<GrantRow>("SELECT * FROM expansion_grants WHERE grant_id = ?", grantId);
    return row ? toGrant(row) : null;
  }

  async findGrantForChild(childSessionKey: string): Promise<GrantRecord | null> {
    const row = this.db.get<GrantRow>(
      "SELECT * FROM expansion_grants WHERE child_session_key = ? ORDER BY created_at DESC LIMIT 1", childSessionKey,
    );
    return row ? toGrant(row) : null;
  }

  async chargeGrant(grantId: string, tokens: number, now: number): Promise<GrantRecord | null> {
    const charged = await this.db.write(() =>
      this.db.run(
        `UPDATE expansion_grants SET tokens_used = min(token_cap, tokens_used + ?), summaries_expanded = summaries_expanded + 1
         WHERE grant_id = ? AND revoked_at IS NULL AND expires_at > ?`,
        Math.max(0, Math.ceil(tokens)), grantId, now,
      ),
    );
    return charged.changes === 0 ? null : this.getGrant(grantId);
  }

  async revokeGrant(grantId: string, reason: string, now: number): Promise<void> {
    await this.db.write(() =>
      this.db.run(
        "UPDATE expansion_grants SET revoked_at = ?, revoke_reason = ? WHERE grant_id = ? AND revoked_at IS NULL",
        now, reason, grantId,
      ),
    );
  }

  async revokeGrantsForChild(childSessionKey: string, reason: string, now: number): Promise<number> {
    const result = await this.db.write(() =>
      this.db.run(
        "UPDATE expansion_grants SET revoked_at = ?, revoke_reason = ? WHERE child_session_key = ? AND revoked_at IS NULL",
        now, reason, childSessionKey,
      ),
    );
    return result.changes;
  }

  async sweepGrants(now: number, deleteRevokedBefore: number): Promise<number> {
    return this.db.write(() => {
      this.db.run(
        "UPDATE expansion_grants SET revoked_at = expires_at, revoke_reason = 'expired' WHERE revoked_at IS NULL AND expires_at <= ?",
        now,
      );
      return this.db.run("DELETE FROM expansion_grants WHERE revoked_at IS NOT NULL AND revoked_at < ?", deleteRevokedBefore).changes;
    });
  }
}
