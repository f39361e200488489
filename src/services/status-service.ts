/**
 * What `/lcm status`, the `lcm.status` gateway RPC and `lcm status` show, as data: for one conversation, what is
 * stored, what the model sees against its budget, the summary DAG by depth, the last compaction and how long ago
 * the last message was stored; for the database, its totals, index backlog, size, growth and what retention would do
 * (storage-status.ts); for the process, the summarizers' circuit breakers and the spend guard. The chat command and the CLI render it (commands/lcm-status.ts); the RPC
 * returns it as it is.
 */
import { type CircuitState, sharedCircuitStates } from "../compaction/circuit-breaker.js";
import { recordedBudgetOf, resolveBudget, thresholdTarget } from "../compaction/compaction-targets.js";
import type { Clock } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { agentIdFromSessionKey, DEFAULT_AGENT_ID } from "../engine/session-identity.js";
import type { CompactionOutcome, ConversationRecord, SessionResetRecord } from "../records.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import type { RetentionSettings } from "../retention/retention-policy.js";
import type { DatabaseTotals, StatusStore, SummaryDepthStats } from "../store/status-store.js";
import type { ConversationStore } from "../store/store.js";
import { type HostShare, hostShareOf } from "./host-share.js";
import { type StorageStatus, type StorageStatusStore, storageStatus } from "./storage-status.js";
import { type SpendGuard, type SpendOverview, type SpendUsage, sharedSpendGuard, spendKey, spendLimitsOf } from "./spend-guard.js";

/** Which conversation: by id (CLI, RPC), or by the session a chat command or RPC caller names. */
export interface ConversationSelector {
  conversationId?: number;
  agentId?: string;
  sessionId?: string;
  sessionKey?: string;
}

export interface ConversationStatus {
  conversationId: number;
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  messages: number;
  messageTokens: number;
  contextItems: number;
  contextTokens: number;
  contextRawTokens: number;
  /** The budget of the last turn's first assemble, or the default when no turn was assembled yet. */
  budgetTokens: number;
  budgetIsDefault: boolean;
  /** The model's own budget is less than compaction plans for: budgetTokens is that floor (compaction-targets.ts). */
  budgetIsPlanningFloor?: boolean;
  /** contextTokens as a percentage of budgetTokens, rounded. */
  budgetPercent: number;
  overBudget: boolean;
  summaries: SummaryDepthStats[];
  fallbackSummaries: number;
  lastCompaction: CompactionOutcome | null;
  lastIngestAt: number | null;
  spendGuard: SpendUsage;
  /** Where automatic compaction starts: contextThreshold x budget (what /compact's answer names too). */
  compactsAboveTokens?: number;
  /** The last new session under this conversation's key (/new, an idle or daily reset). */
  lastReset?: SessionResetRecord | null;
  /** The conversation /reset archived before this one continued the session. */
  previousConversationId?: number | null;
  /** What OpenClaw's own prompt and tools left the last turn's history (null before the first assembled turn). */
  hostShare?: HostShare | null;
}

export interface StatusSnapshot {
  /** When it was taken (ms since the epoch). */
  now: number;
  databasePath: string;
  /** Set when the database is served read-only: why, and the fix. */
  readOnlyNotice: string | null;
  /** Null when no conversation was asked for, or none is stored for the session. */
  conversation: ConversationStatus | null;
  totals: DatabaseTotals;
  /** Size, growth and what retention would do; null when the caller gave no storage store. */
  storage: StorageStatus | null;
  /** The circuit breakers of this process's summarizers (empty until a compaction ran in it). */
  summarizers: { key: string; state: CircuitState }[];
  spendGuard: { maxCallsPerWindow: number; windowMinutes: number } & SpendOverview;
}

export interface StatusServiceDeps {
  conversations: Pick<ConversationStore, "findConversation" | "getConversation">;
  sessions: Pick<RetrievalStore, "findConversationBySessionKey">;
  status: StatusStore;
  config: Pick<LcmConfig, "databasePath" | "defaultTokenBudget" | "maxSummaryCallsPerWindow" | "summaryCallWindowMinutes">
    & Partial<Pick<LcmConfig, "contextThreshold">> & Partial<RetentionSettings>;
  /** Page counts, growth and retention estimates (absent: the snapshot has no storage part). */
  storage?: StorageStatusStore;
  clock: Clock;
  /** Default: the process's guard. */
  spendGuard?: SpendGuard;
  readOnlyNotice?: string | null;
}

export class StatusService {
  private readonly guard: SpendGuard;

  constructor(private readonly deps: StatusServiceDeps) {
    this.guard = deps.spendGuard ?? sharedSpendGuard();
  }

  /** The conversation a selector names: by id, else the agent's session id, else its session key; null if none. */
  async findConversation(selector: ConversationSelector): Promise<ConversationRecord | null> {
    if (selector.conversationId !== undefined) return this.deps.conversations.getConversation(selector.conversationId);
    const agentId = agentIdFromSessionKey(selector.sessionKey) ?? selector.agentId ?? DEFAULT_AGENT_ID;
    if (selector.sessionId) {
      const found = await this.deps.conversations.findConversation({ agentId, sessionId: selector.sessionId });
      if (found) return found;
    }
    if (!selector.sessionKey) return null;
    return this.deps.sessions.findConversationBySessionKey(agentId, selector.sessionKey);
  }

  /** The status of the database, and of the conversation `selector` names (none when it names nothing). */
  async snapshot(selector: ConversationSelector = {}): Promise<StatusSnapshot> {
    const now = this.deps.clock.now();
    const names = Object.values(selector).some((value) => value !== undefined);
    const conversation = names ? await this.findConversation(selector) : null;
    const limits = spendLimitsOf(this.deps.config);
    return {
      now,
      databasePath: this.deps.config.databasePath,
      readOnlyNotice: this.deps.readOnlyNotice ?? null,
      conversation: conversation ? await this.conversationStatus(conversation, now) : null,
      totals: await this.deps.status.databaseTotals(),
      storage: this.deps.storage ? await storageStatus(this.deps.storage, this.deps.config, now) : null,
      summarizers: sharedCircuitStates(),
      spendGuard: {
        maxCallsPerWindow: limits.maxCalls,
        windowMinutes: this.deps.config.summaryCallWindowMinutes,
        ...this.guard.overview(limits, now),
      },
    };
  }

  private async conversationStatus(conversation: ConversationRecord, now: number): Promise<ConversationStatus> {
    const summaries = await this.deps.status.summaryStats(conversation.conversationId);
    // The budget compaction works toward (compactionBudget): the recorded one, else the window the host stated less its
    // reserve (a small window whose turns never left a budget worth recording), else the default.
    const budget = resolveBudget({
      recorded: recordedBudgetOf(conversation),
      hostWindowTokens: conversation.lastTokenBudget === null ? conversation.lastWindowTokens ?? undefined : undefined,
      defaultTokenBudget: this.deps.config.defaultTokenBudget,
    });
    const budgetTokens = budget.tokens;
    return {
      conversationId: conversation.conversationId,
      agentId: conversation.agentId,
      sessionId: conversation.sessionId,
      sessionKey: conversation.sessionKey,
      messages: conversation.messageCount,
      messageTokens: conversation.messageTokens,
      contextItems: conversation.contextItemCount,
      contextTokens: conversation.contextTokens,
      contextRawTokens: conversation.contextRawTokens,
      budgetTokens,
      budgetIsDefault: budget.source === "default",
      budgetIsPlanningFloor: budget.source === "small-window",
      budgetPercent: budgetTokens > 0 ? Math.round((conversation.contextTokens / budgetTokens) * 100) : 0,
      overBudget: conversation.contextTokens > budgetTokens,
      summaries,
      fallbackSummaries: summaries.reduce((total, row) => total + row.fallbackCount, 0),
      lastCompaction: conversation.lastCompaction,
      lastIngestAt: conversation.lastIngestAt,
      spendGuard: this.guard.usage(spendKey(this.deps.config.databasePath, conversation.conversationId), spendLimitsOf(this.deps.config), now),
      ...(this.deps.config.contextThreshold !== undefined
        ? { compactsAboveTokens: thresholdTarget(budget, this.deps.config.contextThreshold) }
        : {}),
      lastReset: conversation.lastReset,
      previousConversationId: conversation.previousConversationId,
      hostShare: hostShareOf(conversation),
    };
  }
}
