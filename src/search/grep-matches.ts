/**
 * What lcm_grep returns for each match: a message (with where in its stored content the match is, and the summaries
 * folded under it), a summary, or a line of a stored file (file-search.ts).
 */
import type { ConversationId, SummaryId, SummaryKind } from "../records.js";
import type { FileMatch } from "./file-search.js";

/** Where in content stored aside a message's hit is, and how to read on. */
export interface StoredContentLocation {
  fileId: string;
  fileName: string | null;
  /** 1-based line of the match, and its byte offset in the stored file. */
  line: number;
  byteOffset: number;
  /** The lcm_describe call that reads the lines around the match. */
  read: string;
}

export interface MessageMatch {
  type: "message";
  id: number;
  conversationId: ConversationId;
  seq: number;
  role: string;
  createdAt: string;
  snippet: string;
  /** The summary that now stands for this message in the context; null while the message itself is there. */
  coveringSummaryId: SummaryId | null;
  /** The match is inside content this message stored aside (its `[LCM File: …]` reference): where. */
  inFile?: StoredContentLocation;
  /** Summaries that also matched because they repeat this message (they cover it): read them for context. */
  alsoIn?: SummaryId[];
  /** Full text: the query's terms this message holds, as typed. */
  matchedTerms?: string[];
}

export interface SummaryMatch {
  type: "summary";
  id: SummaryId;
  summaryId: SummaryId;
  conversationId: ConversationId;
  kind: SummaryKind;
  depth: number;
  /** When the newest content it covers happened (same as latestAt). */
  createdAt: string;
  earliestAt: string;
  latestAt: string;
  snippet: string;
  /** Full text: the query's terms this summary holds, as typed. */
  matchedTerms?: string[];
}

export type GrepMatch = MessageMatch | SummaryMatch | FileMatch;
