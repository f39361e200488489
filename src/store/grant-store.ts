/**
 * The grant store contract: delegation grants of `lcm_expand_query`. A grant authorizes one sub-agent session
 * (by its session key) to read a fixed set of conversations up to a token cap until it expires or is revoked.
 * Grants are persisted because the plugin module is loaded several times per gateway process: the tool that
 * creates a grant and the tool the child calls may live in different module copies.
 */
import type { ConversationId } from "../records.js";

export interface GrantRecord {
  grantId: string;
  /** The agent that delegated; the child runs as the same agent. */
  agentId: string;
  /** The sub-agent session the grant is for (`agent:<id>:subagent:lcm-expand-…`). */
  childSessionKey: string;
  conversationIds: ConversationId[];
  /** Most source tokens the child may read through `lcm_expand`. */
  tokenCap: number;
  tokensUsed: number;
  /** How many `lcm_expand` calls read summaries under this grant. */
  summariesExpanded: number;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  revokeReason: string | null;
}

export interface NewGrant {
  grantId: string;
  agentId: string;
  childSessionKey: string;
  conversationIds: ConversationId[];
  tokenCap: number;
  createdAt: number;
  expiresAt: number;
}

export interface GrantStore {
  createGrant(grant: NewGrant): Promise<GrantRecord>;
  getGrant(grantId: string): Promise<GrantRecord | null>;
  /** The newest grant issued to this child session, whatever its state; null when there is none. */
  findGrantForChild(childSessionKey: string): Promise<GrantRecord | null>;
  /**
   * Adds what one `lcm_expand` call read. Only an active grant (not revoked, not expired at `now`) is charged;
   * `tokensUsed` never exceeds the cap. Returns the grant after the charge, or null when it was not active.
   */
  chargeGrant(grantId: string, tokens: number, now: number): Promise<GrantRecord | null>;
  /** Revokes one grant if still unrevoked. */
  revokeGrant(grantId: string, reason: string, now: number): Promise<void>;
  /** Revokes every unrevoked grant of a child session (its run ended); returns how many. */
  revokeGrantsForChild(childSessionKey: string, reason: string, now: number): Promise<number>;
  /** Marks expired grants revoked and deletes grants revoked before `deleteRevokedBefore`; returns deletions. */
  sweepGrants(now: number, deleteRevokedBefore: number): Promise<number>;
}

export type GrantState = "active" | "expired" | "revoked";

/** Where a grant stands at `now`. */
export function grantState(grant: GrantRecord, now: number): GrantState {
  if (grant.revokedAt !== null) return "revoked";
  return grant.expiresAt <= now ? "expired" : "active";
}

/** Delegated-expansion children run as `agent:<agentId>:subagent:lcm-expand-<id>`; recall never searches them. */
export const EXPANSION_SESSION_PREFIX = "subagent:lcm-expand-";

export function expansionSessionKey(agentId: string, id: string): string {
  return `agent:${agentId}:${EXPANSION_SESSION_PREFIX}${id}`;
}

export function isExpansionSessionKey(sessionKey: string | undefined | null): boolean {
  return /^agent:[^:]+:subagent:lcm-expand-/.test(sessionKey ?? "");
}
