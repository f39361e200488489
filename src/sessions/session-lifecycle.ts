/**
 * New sessions, archives and ended sessions (specs/016-session-lifecycle.md). OpenClaw 2026.9.6 resets a session in
 * place: /new and /reset keep the session key and the session id, give the session record a new `sessionStartedAt`,
 * and run the `session_end` hook with the reason. LCM answers:
 * - "new", "idle", "daily": the model starts fresh; at most the newest top-level summaries of the earlier session stay
 *   in its context (`newSessionCarryOverTokens`), every earlier message stays stored and searchable;
 * - "reset": the conversation is archived as it is and a new one continues the session (nothing carried over; the
 *   archive stays readable with the recall tools' `allConversations` or its conversation id);
 * - "deleted": the conversation is marked ended, not left behind unexplained.
 * A hook can be missed (the gateway restarted, an embedded run): every turn also compares the host's session record
 * with what the conversation last saw, and applies a new session it finds ("detected"). Each reset is applied once
 * per session start, whichever path sees it first.
 */
import type { Clock, Logger } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { describeError } from "../errors.js";
import type { ConversationRecord, SessionResetRecord } from "../records.js";
import type { ResetContextItem, SessionLifecycleStore } from "../store/session-store.js";
import type { ConversationStore } from "../store/store.js";

/** What LCM reads of the host's session record. */
export interface HostSessionRecord {
  sessionId: string;
  /** When the host started the current session under this key (ms). */
  sessionStartedAt?: number;
}

/** Contract: never throws; null when the host says it has no such session, undefined when it cannot say. */
export interface SessionRecords {
  find(scope: { agentId: string; sessionKey: string }): HostSessionRecord | null | undefined;
}

/** How many conversations one doctor run looks at, per page. */
const RECONCILE_PAGE = 200;

/** session_end reasons that start a fresh session which continues the conversation. */
const NEW_SESSION_REASONS = new Set(["new", "idle", "daily"]);
/** The carry-over is also at most this share of the conversation's budget (small windows). */
export const CARRY_OVER_BUDGET_SHARE = 0.25;

export interface SessionLifecycleDeps {
  conversations: Pick<ConversationStore, "findConversation" | "getConversation">;
  sessions: SessionLifecycleStore;
  config: Pick<LcmConfig, "newSessionCarryOverTokens" | "defaultTokenBudget">;
  clock: Clock;
  logger: Logger;
  /** The host's session records (absent: only the hooks say when a session ends). */
  records?: SessionRecords | undefined;
}

export interface SessionEndEvent {
  agentId: string;
  sessionId: string;
  sessionKey?: string | undefined;
  reason?: string | undefined;
}

export class SessionLifecycle {
  constructor(private readonly deps: SessionLifecycleDeps) {}

  /** The host ended a session (its `session_end` hook). Returns what LCM did, for the log and tests. */
  async sessionEnded(event: SessionEndEvent): Promise<string> {
    const reason = event.reason ?? "unknown";
    const key = { agentId: event.agentId, sessionId: event.sessionId };
    if (reason === "deleted") {
      const marked = await this.deps.sessions.markEnded(key, "deleted", this.deps.clock.now());
      if (marked) this.deps.logger.info(`Session ${event.sessionKey ?? event.sessionId} was deleted; its conversation is kept and marked ended.`);
      return marked ? "marked ended" : "no conversation";
    }
    if (reason !== "reset" && !NEW_SESSION_REASONS.has(reason)) return `nothing to do for "${reason}"`;
    const conversation = await this.deps.conversations.findConversation(key);
    if (!conversation) return "no conversation";
    const startedAt = this.startedAtOf(conversation, event.sessionKey) ?? this.deps.clock.now();
    return reason === "reset" ? this.archive(conversation, startedAt) : this.startNewSession(conversation, reason, startedAt);
  }

  /**
   * Before a turn uses the conversation: a new session the hooks did not report is applied now. Returns the
   * conversation as it is afterwards.
   */
  async reconcile(conversation: ConversationRecord): Promise<ConversationRecord> {
    const startedAt = this.startedAtOf(conversation, conversation.sessionKey ?? undefined);
    if (startedAt === undefined) return conversation;
    // First sight: a session that started after the conversation was created is a new one (a reset no hook reported).
    const seen = conversation.sessionStartedAt ?? (startedAt > conversation.createdAt ? conversation.createdAt : null);
    if (seen === null) {
      await this.deps.sessions.noteSessionStart(conversation.conversationId, startedAt);
      return { ...conversation, sessionStartedAt: startedAt };
    }
    if (startedAt <= seen) return conversation;
    await this.startNewSession(conversation, "detected", startedAt);
    return (await this.deps.conversations.getConversation(conversation.conversationId)) ?? conversation;
  }

  /**
   * `/lcm doctor all`: conversations whose OpenClaw session is gone (deleted while the gateway was down, or before
   * this version noticed deletions) or now holds another session id are marked ended, not left orphaned. Bounded by
   * `deadlineMs`; without host records nothing can be told and nothing is marked.
   */
  async markGoneSessions(deadlineMs: number): Promise<{ checked: number; marked: number; complete: boolean }> {
    const records = this.deps.records;
    if (!records) return { checked: 0, marked: 0, complete: false };
    const stopAt = this.deps.clock.now() + deadlineMs;
    let checked = 0;
    let marked = 0;
    let after = 0;
    for (;;) {
      const page = await this.deps.sessions.listOpenConversations(after, RECONCILE_PAGE);
      if (page.length === 0) return { checked, marked, complete: true };
      for (const conversation of page) {
        if (this.deps.clock.now() > stopAt) return { checked, marked, complete: false };
        after = conversation.conversationId;
        checked++;
        const record = records.find({ agentId: conversation.agentId, sessionKey: conversation.sessionKey! });
        if (record === undefined) continue;
        const reason = record === null ? "gone" : record.sessionId !== conversation.sessionId ? "replaced" : null;
        if (reason && await this.deps.sessions.markEnded(conversation, reason, this.deps.clock.now())) marked++;
      }
    }
  }

  /** The new session's start from the host's record, when it names this conversation's session. */
  private startedAtOf(conversation: ConversationRecord, sessionKey: string | undefined): number | undefined {
    if (!this.deps.records || !sessionKey) return undefined;
    const record = this.deps.records.find({ agentId: conversation.agentId, sessionKey });
    if (!record || record.sessionId !== conversation.sessionId) return undefined;
    const startedAt = record.sessionStartedAt;
    return typeof startedAt === "number" && Number.isFinite(startedAt) && startedAt > 0 ? startedAt : undefined;
  }

  private async startNewSession(conversation: ConversationRecord, reason: string, startedAt: number): Promise<string> {
    const limit = carryOverLimit(conversation, this.deps.config);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const items = await this.deps.sessions.contextForReset(conversation.conversationId);
      const keep = planCarryOver(items, limit);
      const kept = new Set(keep);
      const record: SessionResetRecord = {
        at: this.deps.clock.now(),
        reason,
        carriedSummaries: keep.length,
        carriedTokens: items.filter((item) => kept.has(item.ordinal)).reduce((total, item) => total + item.tokenCount, 0),
        leftMessages: items.filter((item) => item.messageId !== null).length,
      };
      const outcome = await this.deps.sessions.applyNewSession(conversation.conversationId, {
        startedAt, plannedOrdinals: items.map((item) => item.ordinal), keepOrdinals: keep, record,
      });
      if (outcome === "already") return "already applied";
      if (outcome === "applied") {
        this.deps.logger.info(
          `New session for ${conversation.sessionKey ?? conversation.sessionId} (${reason}): the model starts fresh with ` +
            `${record.carriedSummaries} earlier summaries (${record.carriedTokens} tokens); ${record.leftMessages} earlier ` +
            "messages left the context and stay searchable.",
        );
        return `new session: ${record.carriedSummaries} summaries carried over`;
      }
    }
    this.deps.logger.warn(`New session for ${conversation.sessionKey ?? conversation.sessionId} not applied: the context kept changing; the next turn tries again.`);
    return "stale";
  }

  private async archive(conversation: ConversationRecord, startedAt: number): Promise<string> {
    const { outcome, successor } = await this.deps.sessions.archiveAndContinue(conversation.conversationId, {
      startedAt, reason: "reset", now: this.deps.clock.now(),
    });
    if (outcome !== "applied") return outcome === "already" ? "already applied" : "stale";
    this.deps.logger.info(
      `Session ${conversation.sessionKey ?? conversation.sessionId} was reset: conversation ${conversation.conversationId} is ` +
        `archived (searchable with allConversations) and conversation ${successor?.conversationId ?? "?"} continues the session.`,
    );
    return "archived";
  }
}

/** The carry-over budget of a conversation: the setting, and at most a quarter of its budget. */
export function carryOverLimit(
  conversation: Pick<ConversationRecord, "lastTokenBudget">, config: Pick<LcmConfig, "newSessionCarryOverTokens" | "defaultTokenBudget">,
): number {
  const budget = conversation.lastTokenBudget ?? config.defaultTokenBudget;
  return Math.max(0, Math.min(config.newSessionCarryOverTokens, Math.floor(budget * CARRY_OVER_BUDGET_SHARE)));
}

/**
 * Which context items a new session keeps: summaries only, the highest depth first (they cover the most), newest
 * first within a depth, while they fit `limitTokens`; a summary that does not fit is skipped for a smaller one.
 * Returns their ordinals in context order. Pure.
 */
export function planCarryOver(items: readonly ResetContextItem[], limitTokens: number): number[] {
  const summaries = items.filter((item) => item.summaryRowId !== null && item.depth !== null)
    .sort((left, right) => right.depth! - left.depth! || right.ordinal - left.ordinal);
  const kept: number[] = [];
  let tokens = 0;
  for (const summary of summaries) {
    if (tokens + summary.tokenCount > limitTokens) continue;
    kept.push(summary.ordinal);
    tokens += summary.tokenCount;
  }
  return kept.sort((left, right) => left - right);
}

/** Session-end handling never fails a host hook: a failure is logged and the next turn's reconcile catches up. */
export async function handleSessionEnded(lifecycle: SessionLifecycle, event: SessionEndEvent, logger: Logger): Promise<void> {
  try {
    await lifecycle.sessionEnded(event);
  } catch (error) {
    logger.warn(`session_end (${event.reason ?? "unknown"}) for ${event.sessionKey ?? event.sessionId} not applied: ${describeError(error)}. The next turn checks the session again.`);
  }
}
