/**
 * The retention store contract (specs/018-import-export-retention.md, "Retention"): the reads that find what a
 * retention policy may remove, and the bounded writes that remove it once an archive holds it. Every write is one
 * short transaction that re-checks what was planned and skips what changed since (a message back in the context, a
 * conversation whose session came back), so a run can interleave with turns of any session.
 */
import type { ConversationId, MessageId } from "../records.js";

/** How big the file is and whether it can give pages back (auto_vacuum=INCREMENTAL). */
export interface DatabaseSpace {
  pageSize: number;
  pageCount: number;
  freePages: number;
  autoVacuum: "none" | "full" | "incremental";
}

/** A conversation whose host session is gone (ended_at), a candidate to archive whole. */
export interface EndedConversation {
  conversationId: ConversationId;
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  updatedAt: number;
  messageCount: number;
}

/** A raw message that summaries cover and the context no longer shows, with what it holds. */
export interface PrunableMessage {
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
  parts: { ordinal: number; kind: string; start: number | null; end: number | null; data: string | null; meta: string | null }[];
  /** The leaf summary that covers it. */
  summaryId: string;
}

/** One archive as recorded (retention_archives). */
export interface ArchiveRecord {
  archiveId: number;
  kind: "conversation" | "messages";
  path: string;
  createdAt: number;
  conversationId: ConversationId;
  agentId: string;
  sessionId: string;
  reason: string;
  messageCount: number;
  seqStart: number | null;
  seqEnd: number | null;
  state: "deleting" | "done";
}

/** Where an archived source went, as recall reports it. */
export interface ArchivedLocation {
  archivePath: string;
  archivedAt: number;
  conversationId: ConversationId;
  agentId: string;
  sessionId: string;
  kind: "conversation" | "messages";
  /** For message archives: the seq range the archive's messages fall in. */
  seqStart: number | null;
  seqEnd: number | null;
}

/** One step of removing a conversation archived whole: which rows went. */
export interface DeletionStep {
  deleted: number;
  /** Files whose rows went in this step: remove them from disk once it committed. */
  removedFilePaths: string[];
  finished: boolean;
}

export interface RetentionStore {
  space(): DatabaseSpace;
  /** Ended conversations idle since before `idleBefore` (ms), least recently active first. */
  endedConversations(idleBefore: number, limit: number): Promise<EndedConversation[]>;
  /**
   * Covered raw messages created before `createdBefore`, from leaf summaries with row id above `afterSummaryRowId`
   * (oldest summaries first), at most `limit` summaries read; `nextSummaryRowId` is null once the last was read.
   */
  prunableMessages(createdBefore: number, afterSummaryRowId: number, limit: number): Promise<{ messages: PrunableMessage[]; nextSummaryRowId: number | null }>;
  /**
   * Records the archive and empties the messages it holds (text, parts and index words; the row stays as a stub),
   * in one transaction that skips any message no longer prunable. Returns how many were pruned.
   */
  pruneMessages(archive: NewArchive, messageIds: MessageId[], createdBefore: number): Promise<number>;
  /**
   * Records the archive of a whole conversation and takes the conversation out of use (archived, reason
   * `lcm-retention:deleting`), if it is still ended and unchanged since `updatedAt`. False when it changed.
   */
  beginConversationDeletion(archive: NewArchive, updatedAt: number): Promise<number | null>;
  /** Removes the next rows of a conversation being deleted (newest first, bounded); `finished` once all are gone. */
  deleteConversationStep(archiveId: number, maxRows: number): Promise<DeletionStep>;
  /** Archives whose conversation is still being deleted (an interrupted run resumes them). */
  unfinishedDeletions(): Promise<ArchiveRecord[]>;
  /** File ids with a row: what the files directory may keep. */
  storedFileIds(): Promise<Set<string>>;
  /** Bytes of content and meta held by covered messages created before `createdBefore`, estimated from summaries. */
  estimatePrunable(createdBefore: number): Promise<{ messages: number; bytes: number }>;
  /** Messages created since `since` (estimated by the id order) and the mean bytes a stored message takes. */
  growth(since: number): Promise<{ messages: number; bytesPerMessage: number }>;
  /** Gives up to `pages` free pages back to the file system (auto_vacuum=INCREMENTAL); returns pages freed. */
  incrementalVacuum(pages: number): Promise<number>;
  archives(limit: number): Promise<ArchiveRecord[]>;
}

export interface NewArchive {
  kind: "conversation" | "messages";
  path: string;
  createdAt: number;
  conversationId: ConversationId;
  reason: string;
  messageCount: number;
  seqStart: number | null;
  seqEnd: number | null;
  byteSize: number;
}
