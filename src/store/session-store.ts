/**
 * The session lifecycle contract (specs/016-session-lifecycle.md): what happens to a conversation when OpenClaw
 * starts a new session under its key (/new, /reset, an idle or daily reset) or ends it for good (deleted). Each
 * write is one transaction; the reset writes re-check what their caller planned and change nothing when the
 * context moved meanwhile ("stale") or when the same new session was already applied ("already").
 */
import type { ConversationId, ConversationKey, ConversationRecord, SessionResetRecord } from "../records.js";

/** One context item as a reset plans with it: summaries carry their depth, raw messages none. */
export interface ResetContextItem {
  ordinal: number;
  messageId: number | null;
  summaryRowId: number | null;
  tokenCount: number;
  /** The summary's depth (0 = leaf); null for a raw message. */
  depth: number | null;
}

export interface NewSessionPlan {
  /** The host's sessionStartedAt of the new session: a reset is applied once per session start. */
  startedAt: number;
  /** Every ordinal the plan was made from, oldest first: the write is stale if the context differs. */
  plannedOrdinals: number[];
  /** The context items (summaries) the new session keeps. */
  keepOrdinals: number[];
  record: SessionResetRecord;
}

export type ResetWriteOutcome = "applied" | "already" | "stale";

export interface SessionLifecycleStore {
  /** The conversation's context items in order, with summary depths. */
  contextForReset(conversationId: ConversationId): Promise<ResetContextItem[]>;
  /**
   * A new session continues the conversation: every context item not kept leaves the context (its messages stay
   * stored and searchable, flagged as never assembled again), counters follow, the reset is recorded.
   */
  applyNewSession(conversationId: ConversationId, plan: NewSessionPlan): Promise<ResetWriteOutcome>;
  /**
   * /reset: archives the live conversation of this session as it is and creates the one that continues the session,
   * with the same transcript cursor (the history before the reset is not imported twice) and budgets.
   */
  archiveAndContinue(
    conversationId: ConversationId, request: { startedAt: number; reason: string; now: number },
  ): Promise<{ outcome: ResetWriteOutcome; successor: ConversationRecord | null }>;
  /** Records the host's sessionStartedAt the first time a conversation sees it (no reset). */
  noteSessionStart(conversationId: ConversationId, startedAt: number): Promise<void>;
  /** Marks the live conversation of a session as ended (the host deleted the session, or it is gone). */
  markEnded(key: Pick<ConversationKey, "agentId" | "sessionId">, reason: string, now: number): Promise<boolean>;
  /**
   * A host command stored before the gateway's answer to it arrived (a later import): it leaves the context, like a
   * command answered in the same batch. Found by its idempotency key; false when it is not stored or no longer raw.
   */
  excludeHostCommand(conversationId: ConversationId, commandIdempotencyKey: string): Promise<boolean>;
  /** Live conversations not marked ended that have a session key, oldest first, after `afterId`, at most `limit`. */
  listOpenConversations(afterId: ConversationId, limit: number): Promise<ConversationRecord[]>;
}
