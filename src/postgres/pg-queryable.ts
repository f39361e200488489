/**
 * What a PostgreSQL statement runs on (the pool, or a client inside a transaction), kept apart from the pool so that
 * the migrations and the stores depend on this and not on each other.
 */
import type { QueryResultRow } from "pg";

/** Parameters of a statement: PostgreSQL placeholders $1, $2… in order. */
export type PgParam = string | number | bigint | boolean | null | Buffer | readonly (string | number | null)[];

/** What a statement runs on: the pool (its own transaction) or a client inside `transaction`. */
export interface PgQueryable {
  rows<Row extends QueryResultRow>(sql: string, params?: readonly PgParam[]): Promise<Row[]>;
  /** The first row, or null. */
  row<Row extends QueryResultRow>(sql: string, params?: readonly PgParam[]): Promise<Row | null>;
  /** Runs a statement; returns how many rows it changed. */
  run(sql: string, params?: readonly PgParam[]): Promise<number>;
}

/** The advisory-lock namespace of LCM's per-conversation locks (the first key of the two-key form). */
export const LCM_LOCK_NAMESPACE = 0x4c434d; // "LCM"

