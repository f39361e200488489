/**
 * What `/lcm status`, `lcm status` and the `lcm.status` RPC say about the database's size: the space it takes, how
 * fast it grows, and what retention would do under the configured policy (off by default: then what a cap could
 * archive). Built from counters, page counts and the summaries' own counts, never a dry run, so status stays cheap
 * at a million messages; the numbers are estimates and say so; `lcm retention` lists exactly what a run would do.
 */
import {
  bytesOverCap, endedCutoff, messageCutoff, restoredCutoff, retentionPolicyOf, type RetentionPolicy, type RetentionSettings, usedBytes,
} from "./retention-policy.js";
import type { DatabaseSpace, RetentionStore } from "../store/retention-store.js";
import { MAINTAIN_BUDGET, RUN_INTERVAL_MS } from "./retention-service.js";

const DAY_MS = 24 * 60 * 60 * 1_000;
/** The window growth is measured over. */
export const GROWTH_DAYS = 7;
/** The age cap retention-off status estimates for ("a 30-day cap would archive …"). */
export const EXAMPLE_AGE_CAP_DAYS = 30;
/** Ended conversations counted at most (status reads no more rows than this). */
const ENDED_COUNT_LIMIT = 1_000;

export type StorageStatusStore = Pick<RetentionStore, "space" | "growth" | "estimatePrunable" | "endedConversations" | "lastArchiveAt">;

/** Covered raw messages (summaries cover them, no context shows them): what retention can archive. */
export interface CoveredEstimate {
  messages: number;
  /** Tokens of their text, from the leaf summaries' source token counts. */
  tokens: number;
}

export type RetentionOutlook =
  | {
      enabled: false;
      /** What an age cap of EXAMPLE_AGE_CAP_DAYS would archive now. */
      exampleAgeCap: { days: number } & CoveredEstimate;
      /** Everything summaries cover, of any age: the most a size cap can archive (oldest first). */
      covered: CoveredEstimate;
      /** Conversations whose session is gone (retentionPruneEndedSessions would archive them whole). */
      endedConversations: number;
    }
  | {
      enabled: true;
      policy: RetentionPolicy;
      /** Bytes in use above the size cap (0 when under it or uncapped). */
      overCapBytes: number;
      /** Covered messages the policy lets go now: older than the age cap, or of any age while over the size cap. */
      prunable: CoveredEstimate;
      /** Ended conversations the policy archives whole now. */
      endedConversations: number;
      /** What one background run (from maintain) does at most, and how often one starts. */
      nextRun: { maxMessages: number; maxConversations: number; intervalMinutes: number };
      /** When retention last wrote an archive (ms), or null. */
      lastArchiveAt: number | null;
    };

export interface StorageStatus {
  /** Bytes in use, and free bytes (reused; given back to the file system by a vacuum: DatabaseSpace). */
  usedBytes: number;
  freeBytes: number;
  autoVacuum: DatabaseSpace["autoVacuum"];
  /** Messages stored over the last GROWTH_DAYS, and the file space they take at the mean size of a stored message. */
  growth: { days: number; messages: number; bytes: number };
  retention: RetentionOutlook;
}

/**
 * Contract: reads only (a read-only connection will do); a few indexed lookups and one pass over the summaries (two
 * with retention off: the example cut and all that is covered).
 */
export async function storageStatus(store: StorageStatusStore, config: Partial<RetentionSettings>, now: number): Promise<StorageStatus> {
  const space = await store.space();
  const growth = await store.growth(now - GROWTH_DAYS * DAY_MS);
  const status = {
    usedBytes: usedBytes(space),
    freeBytes: space.freeBytes,
    autoVacuum: space.autoVacuum,
    growth: { days: GROWTH_DAYS, messages: growth.messages, bytes: Math.round(growth.messages * growth.bytesPerMessage) },
  };
  const policy = retentionPolicyOf({ retentionMaxDatabaseMb: 0, retentionMaxAgeDays: 0, retentionPruneEndedSessions: false, ...config });
  if (!policy) {
    return {
      ...status,
      retention: {
        enabled: false,
        exampleAgeCap: { days: EXAMPLE_AGE_CAP_DAYS, ...(await store.estimatePrunable(now - EXAMPLE_AGE_CAP_DAYS * DAY_MS)) },
        covered: await store.estimatePrunable(now),
        endedConversations: (await store.endedConversations(now, ENDED_COUNT_LIMIT)).length,
      },
    };
  }
  const overCapBytes = bytesOverCap(policy, space);
  // Over the size cap every covered message may go (oldest first), else those older than the age cap.
  const cut = messageCutoff(policy, now, overCapBytes > 0);
  const endedCut = endedCutoff(policy, now, overCapBytes > 0);
  return {
    ...status,
    retention: {
      enabled: true,
      policy,
      overCapBytes,
      prunable: cut === null ? { messages: 0, tokens: 0 } : await store.estimatePrunable(cut),
      endedConversations: endedCut === null ? 0 : (await store.endedConversations(endedCut, ENDED_COUNT_LIMIT, restoredCutoff(policy, now))).length,
      nextRun: { maxMessages: MAINTAIN_BUDGET.maxMessages, maxConversations: MAINTAIN_BUDGET.maxConversations, intervalMinutes: RUN_INTERVAL_MS / 60_000 },
      lastArchiveAt: await store.lastArchiveAt(),
    },
  };
}
