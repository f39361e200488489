/**
 * The write-ahead log's bound, as the bounded-WAL tests check it: the log may pass the checkpointer's truncate size by
 * the transaction that crossed it (the writes after it wait for the worker to truncate the log). The engine writes at
 * most 500 messages per transaction: 500 x ~1.2 KB of text, with parts and indexes, is about 2 MB of pages.
 */
import { statSync } from "node:fs";
import { WAL_TRUNCATE_BYTES } from "../../src/sqlite/wal-checkpointer.js";

const LARGEST_TRANSACTION_BYTES = 4 * 2 ** 20;

/** The largest the log of a bounded database may get. */
export const WAL_BOUND_BYTES = WAL_TRUNCATE_BYTES + LARGEST_TRANSACTION_BYTES;

/** The size of the database's `-wal` file now (0 when there is none). */
export function walSize(databasePath: string): number {
  return statSync(`${databasePath}-wal`, { throwIfNoEntry: false })?.size ?? 0;
}
