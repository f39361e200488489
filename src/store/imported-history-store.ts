/**
 * The imported history store contract: what bootstrap needs from a store that holds messages an import brought over
 * from another store (ingest/transcript-match.ts matches them against the host's transcript), and what it records
 * of the matches.
 */
import type { BootstrapState, ConversationId } from "../records.js";

/** An imported message the host's transcript has not matched yet. */
export interface ImportedMessageToMatch {
  /** Opaque to callers: handed back to `saveTranscriptMatches`. */
  ref: string;
  /** The stored row's identity key (a transcript message with that identity is this row, exactly). */
  identityKey: string;
  /** transcriptMatchKeyOf of the message as the import rebuilt it. */
  matchKey: string;
  /** Milliseconds; the other store's time, kept to the second (the time it stored the message, or the host's). */
  createdAt: number;
}

/**
 * What bootstrap needs from a store that holds imports. Optional on a backend: one that cannot hold imports leaves
 * it out, and bootstrap then reads transcripts with exact identities only.
 */
export interface ImportedHistoryStore {
  /**
   * The conversation's imported messages still to be matched against the host's transcript, in stored order; null
   * when the conversation came from no import or its transcript was reconciled already. `includeMatched`: all of
   * them (the transcript is read again from its start). Contract: may reject (the bootstrap is then retried).
   */
  importedMessagesToMatch(conversationId: ConversationId, options: { includeMatched: boolean }): Promise<ImportedMessageToMatch[] | null>;
  /**
   * Records, in one transaction, the imported messages the transcript matched in this reading (`restart`: they
   * replace every earlier match), the transcript cursor, and whether reconciliation is over (`finished`: the reading
   * reached the transcript's end; later messages are matched by exact identity only).
   */
  saveTranscriptMatches(
    conversationId: ConversationId, matches: { refs: readonly string[]; restart: boolean; finished: boolean; bootstrapState: BootstrapState },
  ): Promise<void>;
}
