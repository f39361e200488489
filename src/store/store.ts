/**
 * Store contracts. They are async so that a server database can implement them later; the embedded SQLite
 * backend lives in ./sqlite. Every method that writes more than one table runs one transaction inside, and no
 * transaction spans an await. Compaction, retrieval, large files and grants add their own contracts beside
 * these (see the files next to this one).
 */
import type { EncodedMessage } from "../messages/message-codec.js";
import type {
  AssemblyRecord,
  BootstrapState,
  CompactionOutcome,
  ContextItemRecord,
  ConversationId,
  ConversationKey,
  ConversationRecord,
  MessageId,
  MessageRecord,
  SummaryRecord,
} from "../records.js";
import type { LargeFileStore } from "./large-file-store.js";

/** Which host turn a commit is: its advancement key, and the transcript entry that opened it when the host says. */
export interface TurnIdentity {
  advancementKey: string;
  admissionEntryId?: string;
}

/** What a hook learned about the budget (see ConversationRecord.lastTokenBudget and its siblings). */
export interface BudgetRecord {
  tokenBudget?: number;
  windowTokens?: number;
  reserveTokens?: number;
  /** The first assemble of a turn: what the host gave and what was returned. */
  assembly?: AssemblyRecord;
}

export interface AppendResult {
  /** Messages newly stored. */
  inserted: number;
  /** Messages whose identity was already stored (replays): nothing changed for them. */
  duplicates: number;
}

export interface ConversationStore {
  /** The conversation of this agent's session, created on first use. */
  getOrCreateConversation(key: ConversationKey, now: number): Promise<ConversationRecord>;
  /** The conversation of this agent's session: the agent is part of the key (a session id alone never is). */
  findConversation(key: Pick<ConversationKey, "agentId" | "sessionId">): Promise<ConversationRecord | null>;
  getConversation(conversationId: ConversationId): Promise<ConversationRecord | null>;
  /** Conversations, newest activity first; `agentId` filters to one agent. */
  listConversations(filter?: { agentId?: string; limit?: number }): Promise<ConversationRecord[]>;
  setBootstrapState(conversationId: ConversationId, state: BootstrapState): Promise<void>;
  setLastCompaction(conversationId: ConversationId, outcome: CompactionOutcome): Promise<void>;
  /**
   * Records what the host said of the budget: the first assemble budget of a turn, the window, the reserve. Fields
   * left undefined keep their stored value; a write that changes nothing is skipped.
   */
  recordBudget(conversationId: ConversationId, budget: BudgetRecord): Promise<void>;
}

export interface MessageStore {
  /**
   * Stores messages in order, skipping any whose identity key is already stored; appends a context item for
   * each stored message that is not excluded from context. One transaction.
   */
  appendMessages(conversationId: ConversationId, messages: EncodedMessage[], now: number): Promise<AppendResult>;
  /**
   * Stores one accepted host turn atomically and idempotently: if `advancementKey` was committed before, returns
   * "duplicate" and changes nothing. One transaction.
   */
  commitTurn(
    conversationId: ConversationId,
    turn: TurnIdentity,
    messages: EncodedMessage[],
    now: number,
  ): Promise<{ status: "committed" | "duplicate" } & AppendResult>;
  /** Whether the host ever committed a durable turn to this conversation. */
  hasCommittedTurns(conversationId: ConversationId): Promise<boolean>;
  /** Which of these identity keys the conversation already has. */
  findExistingIdentities(conversationId: ConversationId, identityKeys: string[]): Promise<Set<string>>;
  /** Messages with their parts, in the order of `messageIds`; unknown ids are skipped. */
  getMessages(messageIds: MessageId[]): Promise<MessageRecord[]>;
  /** Messages of a conversation with seq in [fromSeq, toSeq], oldest first, at most `limit`. */
  getMessagesBySeq(conversationId: ConversationId, fromSeq: number, toSeq: number, limit: number): Promise<MessageRecord[]>;
}

export interface ContextStore {
  /** Context items with ordinal < `beforeOrdinal` (all when null), newest first, at most `limit`. */
  listContextNewestFirst(conversationId: ConversationId, beforeOrdinal: number | null, limit: number): Promise<ContextItemRecord[]>;
  /** Context items with ordinal > `afterOrdinal` (all when null), oldest first, at most `limit`. */
  listContextOldestFirst(conversationId: ConversationId, afterOrdinal: number | null, limit: number): Promise<ContextItemRecord[]>;
  /**
   * What the memory floor (spec 023) needs of the items at or before `ordinal`, in one read: when the newest of them
   * happened, and the newest summary among the `within` newest of them.
   */
  olderContext(conversationId: ConversationId, ordinal: number, within: number): Promise<OlderContext>;
}

/** ContextStore.olderContext's answer. */
export interface OlderContext {
  /** When the newest item happened: a message's time, a summary's latest source (ms); 0 when there is no item. */
  newestAt: number;
  /** The newest summary among the items searched; null when they hold none (raw history not compacted yet). */
  newestSummary: SummaryRecord | null;
}

export interface SummaryReadStore {
  /** Summaries by internal row id, in the order given; unknown ids are skipped. */
  getSummariesByRowIds(rowIds: number[]): Promise<SummaryRecord[]>;
  getSummary(summaryId: string): Promise<SummaryRecord | null>;
}

/** The embedded backend implements all of these on one connection. */
export interface LcmStore extends ConversationStore, MessageStore, ContextStore, SummaryReadStore, LargeFileStore {}
