/**
 * The full-text indexes are written in batches, after the rows themselves: storing a turn does not wait for
 * tokenizing and indexing it (messages, summaries, and the content of files stored aside). Readers that must see
 * every row (search, the integrity check) catch the index up first or read what waits directly; maintenance keeps
 * the backlog small between turns.
 */
import type { Logger } from "../contracts.js";

export interface IndexProgress {
  /** Messages indexed by this call. */
  indexed: number;
  /** Messages still waiting for the index after it. */
  pending: number;
  /** Bytes of stored-aside content indexed by this call. */
  fileBytes: number;
}

export interface SearchIndex {
  /** Messages stored but not in the full-text index yet. */
  pendingMessages(): Promise<number>;
  /** Summaries stored but not yet in the full-text index. */
  pendingSummaries(): Promise<number>;
  /**
   * Indexes pending messages, oldest first, in bounded transactions with the event loop running between them,
   * then merges index segments in bounded steps. Does nothing while fewer than `whenAtLeast` are pending. Then
   * indexes the content of stored files, oldest first, up to `maxFileBytes` (default 0: none). With a byte budget, a
   * backend that keeps stored content in the database (PostgreSQL) first uploads a bounded batch of the files this
   * machine holds and the database lacks.
   */
  indexPending(options?: { whenAtLeast?: number; maxRows?: number; maxFileBytes?: number }): Promise<IndexProgress>;
  /**
   * Hands a large backlog to a background indexer of the backend's own (SQLite: a worker thread, one process at a
   * time; PostgreSQL: chunks on the event loop, one run per process and database, gateways on other machines sharing
   * the rows). True while one indexes it: the caller leaves the backlog alone. False, or absent: the caller indexes in
   * turn. An indexer that fails is logged once on `logger` and the answer becomes false.
   */
  indexBacklogInBackground?(logger: Logger): Promise<boolean>;
}
