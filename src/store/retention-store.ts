/**
 * The retention store contract (specs/018-import-export-retention.md, "Retention"): the reads that find what a
 * retention policy may remove, and the bounded writes that remove it once an archive holds it. Every write is one
 * short transaction that re-checks what was planned and skips what changed since (a message back in the context, a
 * conversation whose session came back), so a run can interleave with turns of any session.
 */
import type { ConversationId, MessageId, MessageRecord } from "../records.js";
import type { PartExportRecord } from "./export-format.js";
import type { SliceDeadline } from "../runtime/time-slice.js";

/**
 * How much room the database takes, and how the room freed by removing rows goes back, in words both backends answer
 * (SQLite counts pages of its file; PostgreSQL counts LCM's tables on the server: store/../postgres/pg-space.ts).
 */
export interface DatabaseSpace {
  /**
   * Bytes LCM's rows and indexes take: what a size cap (retentionMaxDatabaseMb) is measured against. SQLite: the pages
   * in use; PostgreSQL: LCM's tables with their indexes, less the estimated bytes of their dead rows.
   */
  usedBytes: number;
  /** Bytes the database holds that no row uses (reused by new rows): SQLite's free pages; PostgreSQL's dead rows (an estimate). */
  freeBytes: number;
  /**
   * How freed room goes back to the file system:
   * - "incremental" (SQLite, auto_vacuum=INCREMENTAL): each retention run gives it back (`incrementalVacuum`);
   * - "none" or "full" (SQLite created before incremental vacuum): reused; the file shrinks only after `lcm retention --vacuum`
   *   rewrites it once;
   * - "server" (PostgreSQL): the server's autovacuum makes it reusable; `lcm retention --apply` runs VACUUM (which also
   *   gives empty pages at a table's end back) and `--vacuum` runs VACUUM FULL (rewrites LCM's tables).
   */
  autoVacuum: "none" | "full" | "incremental" | "server";
  /** Bytes of one unit `incrementalVacuum` counts (SQLite's page size); 0 where it has none (PostgreSQL). */
  vacuumUnitBytes: number;
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
export type PrunableMessage = Pick<
  MessageRecord, "messageId" | "conversationId" | "seq" | "role" | "content" | "tokenCount" | "createdAt" | "identityKey" | "flags" | "meta"
> & {
  /** Its parts as an export writes them (an archive holds them so). */
  parts: PartExportRecord[];
  /** The leaf summary that covers it. */
  summaryId: string;
};

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
  /** Another gateway holds the conversation (compacting or repairing it): nothing was deleted; a later run goes on. */
  busy: boolean;
}

/**
 * Several gateways on one database (PostgreSQL): every removal runs under the conversation's lock, taken without
 * waiting. A write that finds it held does nothing and says "busy"; the service reports the conversation skipped and
 * a later run takes it. SQLite has one writer at a time and never says busy.
 */
export type RetentionBusy = "busy";

export interface RetentionStore {
  space(): Promise<DatabaseSpace>;
  /**
   * Ended conversations idle since before `idleBefore` (ms), least recently active first; with `restoredBefore`, none
   * restored at or after it (retention-policy.ts restoredCutoff).
   */
  endedConversations(idleBefore: number, limit: number, restoredBefore?: number): Promise<EndedConversation[]>;
  /**
   * Covered raw messages created before `createdBefore` that no context shows, from leaf summaries with row id above
   * `afterSummaryRowId` (oldest summaries first), at most `limit` summaries read; fewer once `deadline` has expired
   * (at least one). `nextSummaryRowId` is where the next call goes on; null once the last summary was read. Messages
   * of conversations restored at or after `restoredBefore` are left out. (PostgreSQL reads the whole page in three
   * statements: waiting for the server does not hold the event loop, so it needs no deadline.)
   */
  prunableMessages(
    createdBefore: number, afterSummaryRowId: number, limit: number, deadline: SliceDeadline, restoredBefore?: number,
  ): Promise<{ messages: PrunableMessage[]; nextSummaryRowId: number | null }>;
  /**
   * Empties `messageIds` in order (text, parts and index words; the row stays as a stub), recording the archive that
   * holds them, in one transaction that skips any message no longer prunable and ends once `deadline` has expired
   * (after at least one message). `handled`: how many of `messageIds` it went through (the caller passes the rest
   * again); `pruned`: how many of those it emptied. The messages are of one conversation (the archive's); `busy` when
   * another gateway holds it (then nothing was emptied and every message counts as handled). PostgreSQL bounds its
   * transaction by a batch of messages (200, four statements) rather than by the deadline.
   */
  pruneMessages(
    archive: NewArchive, messageIds: readonly MessageId[], createdBefore: number, deadline: SliceDeadline, restoredBefore?: number,
  ): Promise<{ handled: number; pruned: number; busy: boolean }>;
  /**
   * Records the archive of a whole conversation and takes the conversation out of use (archived, reason
   * `lcm-retention:deleting`), if it is still ended and unchanged since `updatedAt`. Null when it changed; "busy" when
   * another gateway holds it (RetentionBusy).
   */
  beginConversationDeletion(archive: NewArchive, updatedAt: number): Promise<number | null | RetentionBusy>;
  /**
   * Removes the next rows of a conversation being deleted (newest first) in one transaction that ends once `deadline`
   * has expired; `finished` once all are gone.
   */
  deleteConversationStep(archiveId: number, deadline: SliceDeadline): Promise<DeletionStep>;
  /** Archives whose conversation is still being deleted (an interrupted run resumes them). */
  unfinishedDeletions(): Promise<ArchiveRecord[]>;
  /** File ids with a row: what the files directory may keep. */
  storedFileIds(): Promise<Set<string>>;
  /**
   * Covered messages not archived yet whose leaf summary ends before `createdBefore`, and the tokens of their text:
   * estimated from the summaries' counts (messages the context still shows are counted too), without reading them.
   */
  estimatePrunable(createdBefore: number): Promise<{ messages: number; tokens: number }>;
  /** Messages created since `since` (estimated by the id order) and the mean bytes a stored message takes. */
  growth(since: number): Promise<{ messages: number; bytesPerMessage: number }>;
  /**
   * Gives up to `pages` free pages back to the file system (auto_vacuum=INCREMENTAL) in one transaction; returns
   * pages freed (units of `vacuumUnitBytes`). A wait for the write lock ends `slice`'s current slice. Called only when
   * space() says "incremental" (SQLite); PostgreSQL answers 0.
   */
  incrementalVacuum(pages: number, slice?: SliceDeadline): Promise<number>;
  /**
   * Gives space back to the file system, for `lcm retention --apply` / `--vacuum`, never on the gateway's connection.
   * SQLite: with `full`, first rewrites the whole file once with incremental vacuum turned on (it blocks every other
   * writer while it runs: minutes on a large file); then empties the write-ahead log into the file and truncates it.
   * PostgreSQL: VACUUM (ANALYZE) of LCM's tables (other gateways go on writing), or with `full` VACUUM FULL (it locks
   * each table while it rewrites it: every gateway's writes wait).
   */
  reclaimSpace(options: { full: boolean }): Promise<void>;
  /** Archive files already written for a conversation, oldest first (a whole-conversation archive names them). */
  archivePathsOf(conversationId: ConversationId): Promise<string[]>;
  /** When retention last wrote an archive (ms), or null when it never did. */
  lastArchiveAt(): Promise<number | null>;
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
