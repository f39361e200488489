/**
 * The peer import store contract (transfer/lossless-claw): where an import from another program's database writes,
 * and what it keeps between runs: a source and the conversations it became, each conversation's cursor, the
 * messages, files, summaries and context items it writes. Every write is one transaction that stores rows, their map
 * entries and the cursor together, so an interrupted import resumes exactly where it stopped; the methods that take a
 * list write it in order until their time slice has run out (at least one) and say how many they wrote.
 */
import type { EncodedMessage } from "../messages/message-codec.js";
import type { ConversationKey, LargeFileRecord, SummaryRecord } from "../records.js";
import type { SliceDeadline } from "../runtime/time-slice.js";

export type ImportPhase = "files" | "messages" | "summaries" | "context" | "done";

/** Where a conversation's import stands (kept with the conversation's map entry). */
export interface ConversationCursor {
  phase: ImportPhase;
  /** The last peer message stored (messages are read in (seq, message_id) order). */
  afterSeq: number;
  afterMessageId: number;
  /** Context items written so far. */
  contextItems: number;
  /**
   * Set when the import ends: "pending" until bootstrap has matched the session's transcript against the imported
   * messages once (store/imported-history-store.ts), then "reconciled".
   */
  transcript?: "pending" | "reconciled";
}

export const INITIAL_CURSOR: ConversationCursor = { phase: "files", afterSeq: Number.MIN_SAFE_INTEGER, afterMessageId: 0, contextItems: 0 };

/**
 * A peer message rebuilt and encoded, with where it was in the peer and its transcript match key; or one LCM's codec
 * refused (`encoded` null, `refused` the reason), which gets a map row saying why so the import moves past it.
 */
export type MessageToStore = {
  peerMessageId: number;
  peerSeq: number;
  /** Peer files of tool outputs the peer stored aside in this message, and the tool: their rows say so. */
  toolOutputs?: readonly { fileId: string; toolName: string | null }[];
} & ({ encoded: EncodedMessage; matchKey: string; refused?: undefined } | { encoded: null; refused: string });

/** What a source is recognised by besides its fingerprint: the conversations it holds. */
export interface SourceConversation {
  peerConversationId: number;
  identity: string;
  sessionId: string;
  /** The creation time the imported conversation was given (ms). */
  createdAt: number;
}

/** A file LCM stored for a peer file, as its reference names it. */
export type ImportedFile = Pick<LargeFileRecord, "fileId" | "fileName" | "mimeType" | "byteSize" | "explorationSummary">;

export interface ContextItemInput {
  messageId: number | null;
  summaryRowId: number | null;
  tokenCount: number;
  flags: number;
  isMessage: boolean;
}

/** A message of the conversation as it was stored here. */
export interface ImportedMessage {
  messageId: number;
  seq: number;
  createdAt: number;
  tokenCount: number;
  /** Stored but never assembled nor summarized (LCM's `excluded` flag): kept out of summaries and context. */
  excluded: boolean;
  /** ItemFlags of its context item (tool calls, tool result). */
  itemFlags: number;
}

/** A peer summary as it is stored here: the summary's own fields (derived from its sources), and where it came from. */
export type PlannedSummary = Pick<
  SummaryRecord,
  | "summaryId" | "kind" | "depth" | "content" | "tokenCount" | "sourceTokenCount" | "earliestAt" | "latestAt" | "descendantCount"
  | "sourceMessageCount" | "seqStart" | "seqEnd" | "fileIds" | "createdAt"
> & {
  peerSummaryId: string;
  /** Leaf: LCM message ids of its sources, in order. */
  messageIds: number[];
  /** Condensed: the peer ids of the summaries it condenses, in order. */
  parentPeerIds: string[];
  /** Tokens of the summary as the model sees it (its XML), the context item's token count. */
  contextTokens: number;
};

/** A peer file handled in the file phase: the row stored for it (null when not copied), or why it was not. */
export interface PeerFileOutcome {
  peerFileId: string;
  record: LargeFileRecord | null;
  targetFileId: string | null;
  /** What was not as the peer had it (null when the file came over as it was): the report's kind and the details. */
  note: string | null;
  /** The kind of `note`, without ids or paths (the report counts by it). */
  noteKind: string | null;
}

/** Where a source is registered: its kind ("lossless-claw"), the file's fingerprint, path and schema line. */
export interface PeerSource {
  kind: string;
  fingerprint: string;
  path: string;
  schemaLine: string;
  now: number;
}

/**
 * What an import from another program's database needs from LCM's store. Contract: the writes reject on a storage
 * failure with nothing of their transaction kept; the reads (all asynchronous: a server backend answers them over the
 * network) never change anything.
 */
export interface PeerImportStore {
  /** Registers the source, or finds it again (findSource) and records its current fingerprint and path; returns its id. */
  beginSource(source: PeerSource, conversations: readonly SourceConversation[]): Promise<number>;
  /**
   * The source this file is: the one of this fingerprint, else one holding any of its conversations (a peer that
   * pruned its oldest conversation has another fingerprint, but the same conversations). Null when none.
   */
  findSource(kind: string, fingerprint: string, conversations: readonly SourceConversation[]): Promise<number | null>;
  finishSource(sourceId: number, now: number): Promise<void>;
  /**
   * The LCM conversation a peer conversation became, how far its import got and the identity it was imported under
   * (null for conversations imported before identities were kept); null when not started.
   */
  conversationState(sourceId: number, peerConversationId: number): Promise<{ conversationId: number; cursor: ConversationCursor; identity: string | null } | null>;
  /** Creates the conversation, archived while it is imported, and its map entry (keeping the peer conversation's identity). */
  createConversation(sourceId: number, peerConversationId: number, identity: string, key: ConversationKey, createdAt: number, now: number): Promise<number>;
  /** Peer file ids already handled for this source (copied, or recorded as not copied). */
  mappedFiles(sourceId: number, peerFileIds: readonly string[]): Promise<Set<string>>;
  /** The files this source's peer files became in the conversation, by peer file id: what references to them name. */
  importedFiles(sourceId: number, conversationId: number): Promise<Map<string, ImportedFile>>;
  /** Another file holding the same content in the conversation (LCM stores one file per content). */
  fileWithHash(conversationId: number, contentHash: string): Promise<string | null>;
  fileIdTaken(fileId: string): Promise<boolean>;
  /** Stores file records (their content is on disk already) and records every peer file handled; ends the file phase. */
  storeFiles(sourceId: number, conversationId: number, peerConversationId: number, files: readonly PeerFileOutcome[]): Promise<void>;
  /**
   * Appends messages after the conversation's last (seq order kept), with their parts and map entries, until `deadline`
   * has expired (at least one), and moves the cursor past the last one handled; returns those written and how many
   * of `messages` it handled (a refused message gets its map entry only).
   */
  storeMessages(
    sourceId: number, conversationId: number, peerConversationId: number, messages: readonly MessageToStore[], now: number, deadline: SliceDeadline,
  ): Promise<{ stored: ImportedMessage[]; handled: number }>;
  /** Ends the message phase (a conversation with no messages goes straight on). */
  endMessages(sourceId: number, peerConversationId: number): Promise<void>;
  /** The conversation's messages stored so far by this source, by peer message id (read in pages, the event loop running between them). */
  importedMessages(sourceId: number, peerConversationId: number): Promise<Map<number, ImportedMessage>>;
  /** Internal ids of the peer summaries this source stored, by peer summary id (what a context item or an edge names). */
  summaryRowIds(sourceId: number, peerSummaryIds: readonly string[]): Promise<Map<string, number>>;
  /**
   * Stores planned summaries (each after those it condenses) with their edges and map entries, in order, until
   * `deadline` has expired (at least one). A summary id another summary already holds gets `alternateId(peerSummaryId)`
   * instead. Returns how many it stored.
   */
  storeSummaries(
    sourceId: number, conversationId: number, summaries: readonly PlannedSummary[], alternateId: (peerSummaryId: string) => string,
    deadline: SliceDeadline,
  ): Promise<number>;
  endSummaries(sourceId: number, peerConversationId: number): Promise<void>;
  /**
   * Appends context items (in the peer's order) and the counters that sum them, until `deadline` has expired (at
   * least one); the cursor counts `doneBefore` plus those written. Returns how many it wrote.
   */
  storeContext(
    sourceId: number, conversationId: number, peerConversationId: number, items: readonly ContextItemInput[], doneBefore: number,
    deadline: SliceDeadline,
  ): Promise<number>;
  /**
   * Ends the conversation's import: it becomes the live conversation of its session, unless the peer had archived it
   * or another live conversation holds the session here (then it stays archived, saying why).
   */
  finishConversation(
    sourceId: number, conversationId: number, peerConversationId: number, archive: { at: number; reason: string } | null, now: number,
  ): Promise<"live" | "archived">;
}
