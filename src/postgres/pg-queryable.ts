/**
 * What a PostgreSQL statement runs on (the pool, or a client inside a transaction), kept apart from the pool so that
 * the migrations and the stores depend on this and not on each other.
 */
import type { QueryResultRow } from "pg";

/** Parameters of a statement: PostgreSQL placeholders $1, $2… in order. */
export type PgParam = string | number | bigint | boolean | null | Buffer | readonly (string | number | null)[];

/**
 * A statement each connection prepares once, under its name, and then only binds and executes: no parsing, and
 * after a few runs a cached plan. For hot statements with a fixed text (a commit's, a compaction pass's), where
 * planning was a third of the server's time. Made once at module level with `preparedStatement`.
 *
 * `plan`: "chosen" leaves the choice to PostgreSQL, which plans each run for its values (a custom plan) for five runs,
 * then keeps one plan for all values (generic) only if its estimated cost is no higher; a statement over arrays
 * (`unnest($1)`) never passes that test (the generic plan counts 10 elements per array, the custom one the real
 * number), so it is planned on every run. "generic": the statement's plan cannot depend on its values (look-ups by key,
 * arrays of keys), so it runs on a sibling pool whose sessions force generic plans (`PgDatabase.rows`): planned once per
 * connection, executed from then on. Never for a statement whose plan must know a value (a tsquery's selectivity).
 */
export interface PgStatement {
  readonly name: string;
  readonly text: string;
  readonly plan: "chosen" | "generic";
}

/** The SQL of a statement: its text, or a prepared statement. */
export type PgSql = string | PgStatement;

let preparedCount = 0;

/** A prepared statement with a name unique in the process (connections are per process). */
export function preparedStatement(text: string, options: { plan?: PgStatement["plan"] } = {}): PgStatement {
  return { name: `lcm_${++preparedCount}`, text, plan: options.plan ?? "chosen" };
}

/** Whether `sql` is a prepared statement whose plan is the same for every value (`PgStatement.plan`). */
export function isGenericPlan(sql: PgSql): boolean {
  return typeof sql !== "string" && sql.plan === "generic";
}

/** What the driver's `query` takes for `sql` and `params`. */
export function queryConfig(sql: PgSql, params: readonly PgParam[]): { text: string; name?: string; values: unknown[] } {
  return typeof sql === "string" ? { text: sql, values: params as unknown[] } : { name: sql.name, text: sql.text, values: params as unknown[] };
}

/** What a statement runs on: the pool (its own transaction) or a client inside `transaction`. */
export interface PgQueryable {
  rows<Row extends QueryResultRow>(sql: PgSql, params?: readonly PgParam[]): Promise<Row[]>;
  /** The first row, or null. */
  row<Row extends QueryResultRow>(sql: PgSql, params?: readonly PgParam[]): Promise<Row | null>;
  /** Runs a statement; returns how many rows it changed. */
  run(sql: PgSql, params?: readonly PgParam[]): Promise<number>;
}

/** The advisory-lock namespace of LCM's per-conversation locks (the first key of the two-key form). */
export const LCM_LOCK_NAMESPACE = 0x4c434d; // "LCM"

