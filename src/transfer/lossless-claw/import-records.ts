/**
 * What an import from lossless-claw passes to its store and keeps between runs: a conversation's cursor (its
 * import_map state), the messages, files and context items it writes, and what a source is recognised by.
 */
import type { EncodedMessage } from "../../messages/message-codec.js";
import type { LargeFileRecord } from "../../records.js";

export type ImportPhase = "files" | "messages" | "summaries" | "context" | "done";

/** Where a conversation's import stands (import_map.state of its conversation row). */
export interface ConversationCursor {
  phase: ImportPhase;
  /** The last peer message stored (messages are read in (seq, message_id) order). */
  afterSeq: number;
  afterMessageId: number;
  /** Context items written so far. */
  contextItems: number;
  /**
   * Set when the import ends: "pending" until bootstrap has matched the session's transcript against the imported
   * messages once (sqlite-imported-history-store.ts), then "reconciled".
   */
  transcript?: "pending" | "reconciled";
}

export const INITIAL_CURSOR: ConversationCursor = { phase: "files", afterSeq: Number.MIN_SAFE_INTEGER, afterMessageId: 0, contextItems: 0 };

/** Shown on a conversation while it is being imported: archived, so no turn reaches it half-written. */
export const IMPORTING_REASON = "importing from lossless-claw";

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
