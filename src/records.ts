/**
 * Records: the camelCase shapes the store hands to the rest of the plugin. Row types (snake_case) stay inside
 * the SQLite store. Ids are named after what they identify.
 */

export type ConversationId = number;
export type MessageId = number;
/** `sum_` + 16 hex characters. */
export type SummaryId = string;
/** `file_` + 16 hex characters. */
export type FileId = string;

/** One structured block of a stored message; text payloads are spans [start, end) into the message content. */
export type PartKind = "text" | "thinking" | "toolCall" | "image" | "field" | "raw";

export interface StoredPart {
  kind: PartKind;
  start: number | null;
  end: number | null;
  data: string | null;
  meta: string | null;
}

export const SUMMARY_ID_PATTERN = /^sum_[a-f0-9]{16}$/;
export const FILE_ID_PATTERN = /^file_[a-f0-9]{16}$/;

export interface ConversationKey {
  agentId: string;
  sessionId: string;
  sessionKey?: string;
}

export interface ConversationRecord {
  conversationId: ConversationId;
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  createdAt: number;
  updatedAt: number;
  lastIngestAt: number | null;
  messageCount: number;
  messageTokens: number;
  /** Sum of token counts over the context items (summaries and raw messages). */
  contextTokens: number;
  /** Sum of token counts over raw-message context items only. */
  contextRawTokens: number;
  contextItemCount: number;
  /** The budget the host gave the first assemble of the last turn; compaction thresholds are measured against it. */
  lastTokenBudget: number | null;
  /** The model window of that turn, when the host said (compact, commitTurn, a tool-loop assemble). */
  lastWindowTokens: number | null;
  /** The reply reserve the host kept out of that window, when it said (the first assemble's maxOutputTokens). */
  lastReserveTokens: number | null;
  bootstrapState: BootstrapState | null;
  lastCompaction: CompactionOutcome | null;
  /** What the first assemble of the last turn was given and returned (schema 15); null before the first. */
  lastAssembly: AssemblyRecord | null;
  /** The host's `sessionStartedAt` of the session this conversation last saw (ms); null until first seen. */
  sessionStartedAt: number | null;
  /** The last time the host started a new session under this conversation's key (/new, an idle or daily reset). */
  lastReset: SessionResetRecord | null;
  /** The archived conversation this one continues after /reset. */
  previousConversationId: ConversationId | null;
  /** Set when /reset archived this conversation: another one continues its session. */
  archivedAt: number | null;
  archiveReason: string | null;
  /** Set when the host ended the session for good (deleted) or it was found gone; cleared if it comes back. */
  endedAt: number | null;
  endReason: string | null;
}

/**
 * The first assemble of a turn, as /lcm status and `lcm context` report it (spec 023): what OpenClaw's own system
 * prompt, message and tools left for history, and what LCM sent in it.
 */
export interface AssemblyRecord {
  /** The budget OpenClaw gave (its window less its reply reserve, its system prompt and the message, by its measure). */
  hostBudgetTokens: number;
  /** Tools whose schemas OpenClaw sends beside the history. */
  toolCount: number;
  /** The turn's message by OpenClaw's measure. */
  promptTokens: number;
  /** LCM's budget: the host's less the tool schemas and the message wrapping (by the host's measure). */
  budgetTokens: number;
  /** What assemble returned (by LCM's estimate), the memory floor included. */
  assembledTokens: number;
  /** The memory floor sent ("none" when the whole context fit). */
  floor: "none" | "line" | "summary";
}

/** What a new session under the same conversation did to the context (shown by `/lcm status`). */
export interface SessionResetRecord {
  at: number;
  /** The host's reason: "new", "idle", "daily", or "detected" when LCM noticed the new session itself. */
  reason: string;
  /** Summaries kept in the new session's context, and their tokens. */
  carriedSummaries: number;
  carriedTokens: number;
  /** Messages of the earlier session that left the context (stored and searchable). */
  leftMessages: number;
}

/** How far the host transcript has been imported, so the next bootstrap reads only what is new. */
export type BootstrapState =
  /** A JSONL transcript file (older hosts): byte offset and size at the last read. */
  | { source: "file"; file: string; offset: number; size: number; importedAt: number }
  /** The host's transcript store, read through the SDK's append-stable cursor. */
  | { source: "host"; cursor: string; importedAt: number };

/** What the last compaction of a conversation did, shown by `/lcm status`. */
export interface CompactionOutcome {
  at: number;
  trigger: string;
  compacted: boolean;
  tokensBefore: number;
  tokensAfter: number;
  passes: number;
  reason?: string;
  /** Summaries written without a model because the conversation was at the spend guard's cap (absent: none). */
  spendGuardDiverted?: number;
}

export interface MessageRecord {
  messageId: MessageId;
  conversationId: ConversationId;
  seq: number;
  role: string;
  content: string;
  tokenCount: number;
  createdAt: number;
  identityKey: string;
  flags: number;
  meta: string;
  parts: StoredPart[];
}

export interface ContextItemRecord {
  ordinal: number;
  messageId: MessageId | null;
  /** Internal row id of the summary (summaries.id), not the public `sum_` id. */
  summaryRowId: number | null;
  tokenCount: number;
  /** ItemFlags bits (tool call / tool result). */
  flags: number;
}

export type SummaryKind = "leaf" | "condensed";
export type SummaryLevel = "normal" | "aggressive" | "fallback";

export interface SummaryRecord {
  rowId: number;
  summaryId: SummaryId;
  conversationId: ConversationId;
  kind: SummaryKind;
  depth: number;
  content: string;
  tokenCount: number;
  sourceTokenCount: number;
  earliestAt: number;
  latestAt: number;
  descendantCount: number;
  sourceMessageCount: number;
  seqStart: number;
  seqEnd: number;
  fileIds: FileId[];
  level: SummaryLevel;
  createdAt: number;
  /** For condensed summaries: the summaries it was made from, in order (the XML `<parents>`). */
  parentSummaryIds: SummaryId[];
}

/** Where an externalized large file came from: a `<file>` block, text pasted into a user message, or tool output. */
export type LargeFileOrigin = "file-block" | "paste" | "tool-result";

/** A large file block or tool output stored aside on disk; the message keeps a `[LCM File: …]` reference. */
export interface LargeFileRecord {
  fileId: FileId;
  conversationId: ConversationId;
  /** SHA-256 of the UTF-8 content (hex); unique per conversation, so the same content is stored once. */
  contentHash: string;
  fileName: string | null;
  mimeType: string | null;
  byteSize: number;
  tokenCount: number;
  /** Absolute path of the stored content. */
  storagePath: string;
  explorationSummary: string;
  /** Which explorer wrote the summary: json, csv, code:python, text:model, text:fallback, ... */
  explorer: string;
  origin: LargeFileOrigin;
  toolName: string | null;
  createdAt: number;
}
