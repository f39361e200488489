/**
 * Schema migrations from 17 on (a shipped migration is never edited). 17: the lease that lets one process's worker
 * thread index a backlog at a time (specs/030-ten-million.md). 18: the trigram index a search reads a backlog through
 * while the worker indexes it (spec 030, Design 2b). 19: the backlog's blocks, a coarse filter the worker builds
 * before that index (spec 030, Design 2c). 20: each message and summary indexed with its conversation's token, so a
 * search within a conversation skips the others' matches inside FTS5 (sqlite/search-scope.ts).
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
  {
    version: 18,
    name: "a trigram index over the backlog, for searches while it is indexed",
    // The backlog worker (sqlite/sqlite-backlog-trigram.ts) first fills this index over the messages above the
    // full-text index's watermark, a slice per transaction, then indexes them fully; a search reads the rows the
    // full-text index has not reached through it (substrings every match holds, as FTS5 trigram queries: a superset
    // the matcher checks). `search_index_state` 'backlog_trigram' is the highest message id it holds; rows at or
    // below the full-text watermark are never read from it, and it is emptied when the worker caught up.
    // Contentless, detail=none: only row ids per trigram (the smallest FTS5 index; no phrase or column queries).
    // Never merged (automerge off, crisismerge out of reach): each slice leaves one segment (hashsize holds a whole
    // slice's entries, where the default 1 MB flushed several per slice and merged them), written once; the index
    // lives only for one backlog run. Measured at 1M (spec 030): 1.9 bytes written per byte of text merged in this
    // way, 7.6 with FTS5's defaults.
    // Down: none, as for every migration: an older version refuses a newer schema. Nothing refers to the table;
    // dropping it and the state row by hand gives back a schema-17 file (with user_version set to 17).
    up: `
      CREATE VIRTUAL TABLE backlog_trigram USING fts5(text, content='', detail=none, columnsize=0, tokenize='trigram');
      INSERT INTO backlog_trigram (backlog_trigram, rank) VALUES ('automerge', 0);
      INSERT INTO backlog_trigram (backlog_trigram, rank) VALUES ('crisismerge', 100000);
      INSERT INTO backlog_trigram (backlog_trigram, rank) VALUES ('hashsize', 33554432);
      INSERT INTO search_index_state (name, through) VALUES ('backlog_trigram', 0);
    `,
  },
  {
    version: 19,
    name: "the backlog's blocks: a coarse filter a search reads before the trigram index covers a row",
    // The backlog worker (sqlite/sqlite-backlog-blocks.ts) first cuts the messages above every index's watermark into
    // blocks of consecutive ids, each with one bit set per trigram of its rows' text (4 KiB, a Bloom filter with one
    // hash), in seconds at 1M; then fills the trigram index and indexes fully. A search that reads rows the trigram
    // index does not cover yet skips the blocks missing a bit of what every match holds. Keyed by the block's last
    // message id (a block covers first_id..last_id, the next one starts right above it). `search_index_state`
    // 'backlog_blocks' is the highest id they cover; emptied with the trigram index when the worker caught up.
    // Down: none, as for every migration; nothing refers to the table.
    up: `
      CREATE TABLE backlog_blocks (
        last_id  INTEGER PRIMARY KEY,
        first_id INTEGER NOT NULL,
        bloom    BLOB NOT NULL
      );
      INSERT INTO search_index_state (name, through) VALUES ('backlog_blocks', 0);
    `,
  },
  {
    version: 20,
    name: "conversation tokens in the full-text indexes, from the next row indexed on",
    // From now on the indexer appends `§c<conversation id>` to each message's and summary's `derived` column
    // (sqlite/search-scope.ts); a search within a few conversations ANDs its MATCH with theirs. Rows already indexed
    // keep no token: '<index>_scoped' is the lowest id from which every indexed row has one (the watermark plus one;
    // a rebuilt index sets it to 1), and reads below it go without the token. Nothing is re-indexed here: a 10M
    // history would take a quarter of an hour. Down: none, as for every migration (an older version refuses a newer
    // schema); deleting the two rows and setting user_version to 19 gives back a schema-19 file, whose searches never
    // name a token (no query term holds `§`).
    up: `
      INSERT INTO search_index_state (name, through)
        SELECT 'messages_fts_scoped', through + 1 FROM search_index_state WHERE name = 'messages_fts';
      INSERT INTO search_index_state (name, through)
        SELECT 'summaries_fts_scoped', through + 1 FROM search_index_state WHERE name = 'summaries_fts';
    `,
  },
];
