/**
 * What `/lcm status`, the `lcm.status` gateway RPC and `lcm status` show, as data: for one conversation, what is
 * stored, what the model sees against its budget, the summary DAG by depth, the last compaction and how long ago
 * the last message was stored; for the database, its totals, index backlog, size, growth and what retention would do
 * (storage-status.ts); for the process, the summarizers' circuit breakers and the spend guard. The chat command and the
 * CLI render it (chat/lcm-status.ts); the RPC returns it as it is. Also the row `lcm conversations` and the MCP tool
 * lcm_conversations show for each conversation listed (conversationRow). The spend guard counts in the gateway's memory:
 * a process that is not the gateway (the CLI) says it cannot see the count rather than showing its own zero.
 */
import { type CircuitState, sharedCircuitStates } from "../compaction/circuit-breaker.js";
import { recordedBudgetOf, resolveBudget, thresholdTarget } from "../compaction/compaction-targets.js";
import type { Clock } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { isoOrNever } from "../search/iso-time.js";
import type { SessionTreatment } from "../sessions/session-filter.js";
import { agentIdFromSessionKey, DEFAULT_AGENT_ID, isSubagentSessionKey } from "../sessions/session-identity.js";
import type { CompactionOutcome, ConversationRecord, SessionResetRecord } from "../records.js";
import { isExpansionSessionKey } from "../store/grant-store.js";
import type { ConversationListing } from "../store/operator-store.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import type { RetentionSettings } from "../retention/retention-policy.js";
import type { DatabaseTotals, StatusStore, SummaryDepthStats } from "../store/status-store.js";
import type { ConversationStore } from "../store/store.js";
import { type HostShare, hostShareOf } from "./host-share.js";
import { type StorageStatus, type StorageStatusStore, storageStatus } from "../retention/storage-status.js";
import { type SpendGuard, type SpendOverview, type SpendUsage, sharedSpendGuard, spendKey, spendLimitsOf } from "./spend-guard.js";

/** Which conversation: by id (CLI, RPC), or by the session a chat command or RPC caller names. */
export interface ConversationSelector {
  conversationId?: number;
  agentId?: string;
  sessionId?: string;
  sessionKey?: string;
}

/** The spend guard of one conversation: the count when this process keeps it, else only the limits. */
export type SpendGuardView =
  | ({ visible: true } & SpendUsage)
  | { visible: false; maxCalls: number; windowMs: number; where: string };

/** Which conversation, and whose: the fields every view of a conversation opens with. */
export interface ConversationIdentity {
  conversationId: number;
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
}

export interface ConversationStatus extends ConversationIdentity {
  /** Every message stored, stubs of archived ones included. */
  messages: number;
  /** Of `messages`, those whose text retention moved to its archives (a stub row remains here). */
  archivedMessages: number;
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
  spendGuard: SpendGuardView;
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
  /** Set when a conversation was asked for and none is stored: which, and why that can be. */
  note: string | null;
  totals: DatabaseTotals;
  /** Size, growth and what retention would do; null when the caller gave no storage store. */
  storage: StorageStatus | null;
  /** The circuit breakers of this process's summarizers (empty until a compaction ran in it). */
  summarizers: { key: string; state: CircuitState }[];
  spendGuard: { maxCallsPerWindow: number; windowMinutes: number } & (({ visible: true } & SpendOverview) | { visible: false; where: string });
}

export interface StatusServiceDeps {
  /**
   * Where the history is stored, as the snapshot names it: the SQLite file's path, or the PostgreSQL URL without its
   * password (the backend's `location`; config.databasePath names no database when databaseUrl is set).
   */
  location: string;
  conversations: Pick<ConversationStore, "findConversation" | "getConversation">;
  sessions: Pick<RetrievalStore, "findConversationBySessionKey">;
  status: StatusStore;
  config: Pick<LcmConfig, "databasePath" | "defaultTokenBudget" | "maxSummaryCallsPerWindow" | "summaryCallWindowMinutes">
    & Partial<Pick<LcmConfig, "contextThreshold">> & Partial<RetentionSettings>;
  /** Page counts, growth and retention estimates (absent: the snapshot has no storage part). */
  storage?: StorageStatusStore;
  clock: Clock;
  /**
   * Default: the process's guard. Null in a process that is not the gateway (the CLI): the counts live in the
   * gateway's memory, and the snapshot says so instead of showing this process's empty guard.
   */
  spendGuard?: SpendGuard | null;
  readOnlyNotice?: string | null;
  /** How the gateway treats a session key, for the note on a session with no conversation (absent: not said). */
  sessionTreatment?: (sessionKey: string) => SessionTreatment;
}

/** Where the spend guard's count is kept, for a process that cannot see it. */
const GUARD_ELSEWHERE = "the gateway counts summarizer calls in its own memory; `openclaw gateway call lcm.status` shows its count";

/** What answers a status request: the service over a database, or the answer that there is none yet. */
export interface StatusSource {
  snapshot(selector?: ConversationSelector): Promise<StatusSnapshot>;
}

/**
 * The status where no LCM database exists yet (a gateway before its first stored turn): zero totals and a note
 * saying so; reading it creates nothing (opening the path would create the file and its schema).
 */
export function statusWithoutDatabase(
  config: Pick<LcmConfig, "databasePath" | "maxSummaryCallsPerWindow" | "summaryCallWindowMinutes">, clock: Clock, guard: SpendGuard = sharedSpendGuard(),
): StatusSource {
  return {
    snapshot: async (selector = {}) => {
      const now = clock.now();
      const limits = spendLimitsOf(config);
      const asked = Object.values(selector).some((value) => value !== undefined);
      return {
        now,
        databasePath: config.databasePath,
        readOnlyNotice: null,
        conversation: null,
        note: `No LCM database at ${config.databasePath} yet${asked ? ", so no conversation is stored for what was asked" : ""}: ` +
          "LCM creates it when it stores its first turn (this call created nothing).",
        totals: {
          conversations: 0, messages: 0, messageTokens: 0, awaitingIndex: 0,
          archivedConversations: 0, endedConversations: 0, archivedMessages: 0,
        },
        storage: null,
        summarizers: sharedCircuitStates(),
        spendGuard: { maxCallsPerWindow: limits.maxCalls, windowMinutes: config.summaryCallWindowMinutes, visible: true, ...guard.overview(limits, now) },
      };
    },
  };
}

export class StatusService implements StatusSource {
  private readonly guard: SpendGuard | null;

  constructor(private readonly deps: StatusServiceDeps) {
    this.guard = deps.spendGuard === undefined ? sharedSpendGuard() : deps.spendGuard;
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
      databasePath: this.deps.location,
      readOnlyNotice: this.deps.readOnlyNotice ?? null,
      conversation: conversation ? await this.conversationStatus(conversation, now) : null,
      note: names && !conversation ? this.notFoundNote(selector) : null,
      totals: await this.deps.status.databaseTotals(),
      storage: this.deps.storage ? await storageStatus(this.deps.storage, this.deps.config, now) : null,
      summarizers: sharedCircuitStates(),
      spendGuard: {
        maxCallsPerWindow: limits.maxCalls,
        windowMinutes: this.deps.config.summaryCallWindowMinutes,
        ...(this.guard ? { visible: true as const, ...this.guard.overview(limits, now) } : { visible: false as const, where: GUARD_ELSEWHERE }),
      },
    };
  }

  /** Which conversation was asked for and found missing, and the reasons a session has none. */
  private notFoundNote(selector: ConversationSelector): string {
    if (selector.conversationId !== undefined) {
      return `No conversation ${selector.conversationId} is stored in ${this.deps.location}.`;
    }
    const named = [
      selector.sessionKey !== undefined ? `session key ${JSON.stringify(selector.sessionKey)}` : "",
      selector.sessionId !== undefined ? `session id ${JSON.stringify(selector.sessionId)}` : "",
    ].filter(Boolean).join(" and ");
    const agentId = agentIdFromSessionKey(selector.sessionKey) ?? selector.agentId ?? DEFAULT_AGENT_ID;
    const treatment = selector.sessionKey !== undefined ? this.deps.sessionTreatment?.(selector.sessionKey) : undefined;
    const why = treatment === "ignore"
      ? "LCM stays out of this session entirely (it matches ignoreSessionPatterns): OpenClaw's own engine serves it."
      : treatment === "stateless"
        ? "LCM serves this session without storing it (it matches statelessSessionPatterns)."
        : "A session has one from the first turn LCM stores; check the key (`openclaw sessions list`) and the agent it names.";
    return `No conversation is stored for ${named || "that selector"} (agent ${agentId}). ${why}`;
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
    const limits = spendLimitsOf(this.deps.config);
    return {
      ...identityOf(conversation),
      messages: conversation.messageCount,
      archivedMessages: await this.deps.status.archivedMessageCount(conversation.conversationId),
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
      spendGuard: this.guard
        ? { visible: true, ...this.guard.usage(spendKey(this.deps.config.databasePath, conversation.conversationId), limits, now) }
        : { visible: false, maxCalls: limits.maxCalls, windowMs: limits.windowMs, where: GUARD_ELSEWHERE },
      ...(this.deps.config.contextThreshold !== undefined
        ? { compactsAboveTokens: thresholdTarget(budget, this.deps.config.contextThreshold) }
        : {}),
      lastReset: conversation.lastReset,
      previousConversationId: conversation.previousConversationId,
      hostShare: hostShareOf(conversation),
    };
  }
}

function identityOf(conversation: ConversationRecord): ConversationIdentity {
  return { conversationId: conversation.conversationId, agentId: conversation.agentId, sessionId: conversation.sessionId, sessionKey: conversation.sessionKey };
}

/** One conversation as `lcm conversations` and lcm_conversations list it; times are ISO ("never" when unset). */
export interface ConversationRow extends ConversationIdentity {
  messages: number;
  messageTokens: number;
  contextItems: number;
  contextTokens: number;
  budgetTokens: number;
  summaries: number;
  fallbackSummaries: number;
  maxDepth: number | null;
  lastActivityAt: string;
  lastMessageAt: string | null;
  lastCompaction: { at: string; trigger: string; compacted: boolean } | null;
  /** What asks for a look: over-budget, no-budget-yet, fallback-summaries, spend-guard, expansion-helper or subagent, archived, ended. */
  flags: string[];
}

/** The row of a listed conversation; the budget is the last one the host gave, else `defaultTokenBudget`. */
export function conversationRow(listing: ConversationListing, defaultTokenBudget: number): ConversationRow {
  const conversation = listing.conversation;
  const budgetTokens = conversation.lastTokenBudget ?? defaultTokenBudget;
  const flags = [
    conversation.contextTokens > budgetTokens ? "over-budget" : null,
    conversation.lastTokenBudget === null ? "no-budget-yet" : null,
    listing.fallbackSummaries > 0 ? "fallback-summaries" : null,
    conversation.lastCompaction?.spendGuardDiverted ? "spend-guard" : null,
    isExpansionSessionKey(conversation.sessionKey) ? "expansion-helper" : isSubagentSessionKey(conversation.sessionKey ?? undefined) ? "subagent" : null,
    typeof conversation.archivedAt === "number" ? "archived" : null,
    typeof conversation.endedAt === "number" ? "ended" : null,
  ].filter((flag): flag is string => flag !== null);
  return {
    ...identityOf(conversation),
    messages: conversation.messageCount,
    messageTokens: conversation.messageTokens,
    contextItems: conversation.contextItemCount,
    contextTokens: conversation.contextTokens,
    budgetTokens,
    summaries: listing.summaries,
    fallbackSummaries: listing.fallbackSummaries,
    maxDepth: listing.maxDepth,
    lastActivityAt: isoOrNever(conversation.updatedAt),
    lastMessageAt: conversation.lastIngestAt === null ? null : isoOrNever(conversation.lastIngestAt),
    lastCompaction: conversation.lastCompaction
      ? { at: isoOrNever(conversation.lastCompaction.at), trigger: conversation.lastCompaction.trigger, compacted: conversation.lastCompaction.compacted }
      : null,
    flags,
  };
}
