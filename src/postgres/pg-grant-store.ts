/**
 * The PostgreSQL side of GrantStore (sqlite/sqlite-grant-store.ts ported). Grants are few and short-lived; lookups go
 * by primary key or by expansion_grants_child. A charge is one conditional UPDATE, so concurrent child tool calls (in
 * any gateway) never push `tokens_used` past the cap.
 */
import type { ConversationId } from "../records.js";
import type { GrantRecord, GrantStore, NewGrant } from "../store/grant-store.js";
import { fromPgText, fromPgTextOrNull, type PgDatabase, toPgText } from "./pg-database.js";

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
    grantId: fromPgText(row.grant_id),
    agentId: fromPgText(row.agent_id),
    childSessionKey: fromPgTextOrNull(row.child_session_key) ?? "",
    conversationIds: JSON.parse(row.conversation_ids) as ConversationId[],
    tokenCap: row.token_cap,
    tokensUsed: row.tokens_used,
    summariesExpanded: row.summaries_expanded,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    revokeReason: fromPgTextOrNull(row.revoke_reason),
  };
}

export class PgGrantStore implements GrantStore {
  constructor(private readonly database: PgDatabase) {}

  async createGrant(grant: NewGrant): Promise<GrantRecord> {
    const row = await this.database.row<GrantRow>(
      `INSERT INTO expansion_grants (grant_id, agent_id, child_session_key, conversation_ids, token_cap, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [toPgText(grant.grantId), toPgText(grant.agentId), toPgText(grant.childSessionKey), JSON.stringify(grant.conversationIds), grant.tokenCap, grant.createdAt, grant.expiresAt],
    );
    return toGrant(row!);
  }

  async getGrant(grantId: string): Promise<GrantRecord | null> {
    const row = await this.database.row<GrantRow>("SELECT * FROM expansion_grants WHERE grant_id = $1", [toPgText(grantId)]);
    return row ? toGrant(row) : null;
  }

  async findGrantForChild(childSessionKey: string): Promise<GrantRecord | null> {
    const row = await this.database.row<GrantRow>(
      "SELECT * FROM expansion_grants WHERE child_session_key = $1 ORDER BY created_at DESC LIMIT 1", [toPgText(childSessionKey)],
    );
    return row ? toGrant(row) : null;
  }

  async chargeGrant(grantId: string, tokens: number, now: number): Promise<GrantRecord | null> {
    const row = await this.database.row<GrantRow>(
      `UPDATE expansion_grants SET tokens_used = least(token_cap, tokens_used + $1), summaries_expanded = summaries_expanded + 1
       WHERE grant_id = $2 AND revoked_at IS NULL AND expires_at > $3 RETURNING *`,
      [Math.max(0, Math.ceil(tokens)), toPgText(grantId), now],
    );
    return row ? toGrant(row) : null;
  }

  async revokeGrant(grantId: string, reason: string, now: number): Promise<void> {
    await this.database.run(
      "UPDATE expansion_grants SET revoked_at = $1, revoke_reason = $2 WHERE grant_id = $3 AND revoked_at IS NULL",
      [now, toPgText(reason), toPgText(grantId)],
    );
  }

  async revokeGrantsForChild(childSessionKey: string, reason: string, now: number): Promise<number> {
    return this.database.run(
      "UPDATE expansion_grants SET revoked_at = $1, revoke_reason = $2 WHERE child_session_key = $3 AND revoked_at IS NULL",
      [now, toPgText(reason), toPgText(childSessionKey)],
    );
  }

  async sweepGrants(now: number, deleteRevokedBefore: number): Promise<number> {
    return this.database.transaction(async (tx) => {
      await tx.run(
        "UPDATE expansion_grants SET revoked_at = expires_at, revoke_reason = 'expired' WHERE revoked_at IS NULL AND expires_at <= $1", [now],
      );
      return tx.run("DELETE FROM expansion_grants WHERE revoked_at IS NOT NULL AND revoked_at < $1", [deleteRevokedBefore]);
    });
  }
}
