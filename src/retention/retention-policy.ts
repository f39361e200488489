/**
 * The retention policy a configuration asks for, and the pure decisions it drives: whether it is on, which messages
 * are old enough, whether the file is over its cap. Off unless the user sets a cap or asks for ended sessions to go
 * (docs/configuration.md); the service (retention/retention-service.ts) does the reading, archiving and removing.
 */
import type { LcmConfig } from "../config.js";
import type { DatabaseSpace } from "../store/retention-store.js";

const DAY_MS = 24 * 60 * 60 * 1_000;
const MB = 1024 * 1024;
/** How long a restored conversation is left alone when no age cap says how long history stays (30 days). */
export const RESTORE_HOLD_MS = 30 * DAY_MS;

export interface RetentionPolicy {
  /** Bytes of pages in use above which the oldest covered messages go; null: no size cap. */
  maxDatabaseBytes: number | null;
  /** Covered messages older than this (ms) go; null: no age cap. */
  maxAgeMs: number | null;
  /** Conversations whose host session is gone are archived whole. */
  pruneEndedSessions: boolean;
}

export type RetentionSettings = Pick<LcmConfig, "retentionMaxDatabaseMb" | "retentionMaxAgeDays" | "retentionPruneEndedSessions">;

/** The policy of a configuration; null when retention is off (the default). */
export function retentionPolicyOf(config: RetentionSettings): RetentionPolicy | null {
  const policy: RetentionPolicy = {
    maxDatabaseBytes: config.retentionMaxDatabaseMb > 0 ? config.retentionMaxDatabaseMb * MB : null,
    maxAgeMs: config.retentionMaxAgeDays > 0 ? config.retentionMaxAgeDays * DAY_MS : null,
    pruneEndedSessions: config.retentionPruneEndedSessions,
  };
  return policy.maxDatabaseBytes === null && policy.maxAgeMs === null && !policy.pruneEndedSessions ? null : policy;
}

/**
 * Conversations restored (`lcm import jsonl`, `restored_at`) after this time are left alone: neither archived whole
 * nor their messages pruned, under any cap. A restore counts as the conversation's last activity: it is held for the
 * age cap's span (`retentionMaxAgeDays`), or RESTORE_HOLD_MS without an age cap, then ages as any conversation does.
 * Why a hold and not new dates: the restore stays exact (an export of it is the same bytes) and its messages keep
 * their real times, which summaries, `--since` and the age cap itself read.
 */
export function restoredCutoff(policy: RetentionPolicy, now: number): number {
  return now - (policy.maxAgeMs ?? RESTORE_HOLD_MS);
}

/** Bytes LCM's rows take (free room is reused, and given back by a vacuum): what the size cap is measured against. */
export function usedBytes(space: DatabaseSpace): number {
  return space.usedBytes;
}

/** How far over the size cap the file is (0 when under it or uncapped). */
export function bytesOverCap(policy: RetentionPolicy, space: DatabaseSpace): number {
  return policy.maxDatabaseBytes === null ? 0 : Math.max(0, usedBytes(space) - policy.maxDatabaseBytes);
}

/**
 * Messages created before this time may go (if summaries cover them and the context no longer shows them): the age
 * cap's cut, or now when the file is over its size cap (then the oldest go first until it is under); null: none.
 */
export function messageCutoff(policy: RetentionPolicy, now: number, overCap: boolean): number | null {
  if (overCap) return now;
  return policy.maxAgeMs === null ? null : now - policy.maxAgeMs;
}

/**
 * Ended conversations last active before this time are archived whole: after the age cap's idle time (at once
 * without an age cap, and at once over the size cap); null when ended sessions are kept.
 */
export function endedCutoff(policy: RetentionPolicy, now: number, overCap: boolean): number | null {
  if (!policy.pruneEndedSessions) return null;
  if (overCap || policy.maxAgeMs === null) return now;
  return now - policy.maxAgeMs;
}
