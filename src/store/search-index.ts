/**
 * The messages' full-text index is written in batches, after the messages themselves: storing a turn does not
 * wait for tokenizing and indexing it. Readers that must see every message (search, the integrity check) catch
 * the index up first; maintenance keeps the backlog small between turns.
 */
export interface IndexProgress {
  /** Messages indexed by this call. */
  indexed: number;
  /** Messages still waiting for the index after it. */
  pending: number;
}

export interface SearchIndex {
  /** Messages stored but not in the full-text index yet. */
  pendingMessages(): Promise<number>;
  /**
   * Indexes pending messages, oldest first, in bounded transactions with the event loop running between them,
   * then merges index segments in bounded steps. Does nothing while fewer than `whenAtLeast` are pending.
   */
  indexPending(options?: { whenAtLeast?: number; maxRows?: number }): Promise<IndexProgress>;
  /**
   * Adds indexed messages' terms to the term dictionary (what regex search looks up for words that may end a
   * longer word), up to `maxRows` messages in bounded transactions, newest first; returns how many.
   */
  maintainTerms(maxRows: number): Promise<number>;
}
