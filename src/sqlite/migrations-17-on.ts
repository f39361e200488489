/**
 * Schema migrations from 17 on (a shipped migration is never edited). 17: the lease that lets one process's worker
 * thread index a backlog at a time (specs/030-ten-million.md).
 */
import type { Migration } from "./migration.js";

export const MIGRATIONS_17_ON: readonly Migration[] = [
  {
    version: 17,
    name: "one backlog indexer at a time: a lease",
    // A backlog (a bulk import, a long bootstrap) is indexed on a worker thread (sqlite/backlog-index-thread.ts).
    // Several gateway processes may have the file open; the one whose worker holds this row, renewed with every
    // slice it commits, indexes, and the others do nothing. A holder that stopped renewing (its process was killed)
    // loses the row when `expires_at` (ms since the epoch) passes, or at once when its process is gone from this
    // host. The watermark in search_index_state keeps indexing exact without it; the lease only saves double work.
    up: `
      CREATE TABLE index_worker_lease (
        name       TEXT PRIMARY KEY,
        holder     TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
];
