/**
 * A pool of connections to one PostgreSQL database with what every PostgreSQL store needs: the schema migrated once
 * before the first statement, transactions that retry what PostgreSQL says to retry (serialization failures,
 * deadlocks), per-conversation advisory locks, and text that PostgreSQL cannot hold (NUL) kept losslessly.
 *
 * The `pg` driver is loaded only when a PostgreSQL backend is opened (`import("pg")`): SQLite users never load it.
 * A store method is one transaction: `transaction(body)` takes a client from the pool, runs BEGIN, the body's
 * statements and COMMIT, and releases the client. Nothing but the transaction's own statements is awaited inside
 * one: never a model call, never a file read.
 */
import type { Pool, PoolClient, PoolConfig, QueryResultRow } from "pg";
export type { PgParam, PgQueryable, PgSql } from "./pg-queryable.js";
import { describeError, isLcmError, LcmError } from "../errors.js";
import { migratePostgres } from "./pg-migrations.js";
import { asReadOnlyRefusal, checkReadableSchema, keepingReadOnlyInUrl, READ_ONLY_SESSION, sessionOptions } from "./pg-read-only.js";
import { isGenericPlan, LCM_LOCK_NAMESPACE, type PgParam, type PgQueryable, type PgSql, queryConfig } from "./pg-queryable.js";

/** How the pool is sized and how long a statement may run. */
export interface PgOptions {
  /** Connections in the pool (default 8: a gateway's turns, maintenance and tools at once). */
  poolSize?: number;
  /** A statement running longer is cancelled by the server (default 30 s; search sets its own, shorter). */
  statementTimeoutMs?: number;
  /** Application name the server shows in pg_stat_activity. */
  applicationName?: string;
  /** Planner settings for this pool's sessions, set when a connection opens (name → value; both are constants). */
  planner?: Record<string, string>;
  /**
   * Every session read-only at the server (pg-read-only.ts): a write fails with a clear error, and the schema is
   * checked, never created or upgraded. Pools made with `sibling` are read-only too.
   */
  readOnly?: boolean;
}

/** SQLSTATEs after which the whole transaction may simply run again. */
const RETRYABLE = new Set(["40001", "40P01"]);
/** SQLSTATE classes that mean the server could not take the write: connection, resources, server shutdown, read-only. */
const STORAGE_CLASSES = ["08", "53", "57", "58", "25006"];
const MAX_ATTEMPTS = 5;
/** Connections of a pool by default (`PgOptions.poolSize`). */
const DEFAULT_POOL_SIZE = 8;
/** Connections of a pool's sibling for statements with generic plans, at most (`poolFor`). */
const GENERIC_POOL_SIZE = 4;

export class PgDatabase implements PgQueryable {
  private poolOpening: Promise<Pool> | null = null;
  private migrated: Promise<void> | null = null;
  private closed = false;
  /** Pools of its own kind on the same database (`sibling`), closed with this one. */
  private readonly siblings = new Map<string, PgDatabase>();
  /** The URL without its password (messages, status). */
  readonly location: string;
  /** Whether the server refuses this pool's writes (`PgOptions.readOnly`). */
  readonly readOnly: boolean;

  /**
   * Nothing connects, and the driver is not loaded, until the first statement. A sibling (`parent`) waits for its
   * parent's migrations instead of checking the schema on a connection of its own.
   */
  constructor(private readonly url: string, private readonly options: PgOptions = {}, private readonly parent: PgDatabase | null = null) {
    this.location = redactUrl(url);
    this.readOnly = options.readOnly === true;
  }

  /** Whether `close` was called: every statement from then on is refused. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The pool, created with the driver on first use. */
  pool(): Promise<Pool> {
    if (this.closed) return Promise.reject(new LcmError("unavailable", `The PostgreSQL connection to ${this.location} was closed.`));
    this.poolOpening ??= loadDriver().then((pg) => {
      const config: PoolConfig = {
        connectionString: this.readOnly ? keepingReadOnlyInUrl(this.url) : this.url,
        max: this.options.poolSize ?? DEFAULT_POOL_SIZE,
        application_name: this.options.applicationName ?? "openclaw-lcm",
        statement_timeout: this.options.statementTimeoutMs ?? 30_000,
        // Session settings sent with the connection (no round trip): no JIT compilation (this workload's statements
        // run in milliseconds, and a plan whose estimated cost passes jit_above_cost, a GIN read over a large history,
        // spent ~40 ms compiling before running for 1 ms), and the pool's planner settings. An `options` parameter in
        // the URL replaces these (a read-only pool's setting is appended to it instead: keepingReadOnlyInUrl).
        options: sessionOptions({ jit: "off", ...this.options.planner, ...(this.readOnly ? READ_ONLY_SESSION : {}) }),
        connectionTimeoutMillis: 10_000,
        idleTimeoutMillis: 30_000,
        // Idle connections never keep a process alive (a CLI command, a test's child): only work in flight does.
        allowExitOnIdle: true,
        // BIGINT ids and millisecond times fit a JS number exactly (below 2^53): read them as numbers, not strings.
        types: { getTypeParser: ((oid: number, format?: "text" | "binary") => oid === 20 ? Number : pg.types.getTypeParser(oid, format as "text")) as never },
      };
      const pool = new pg.Pool(config);
      // An idle client whose server went away emits here; without a listener the process would crash.
      pool.on("error", () => {});
      return pool;
    }).catch((error: unknown) => {
      this.poolOpening = null;
      throw error;
    });
    return this.poolOpening;
  }

  /** Runs the migrations once per pool (a read-only pool checks the schema instead); every statement waits for it. */
  ready(): Promise<void> {
    if (this.parent) return this.parent.ready();
    this.migrated ??= (this.readOnly ? checkReadableSchema(this, this.location) : migratePostgres(this)).catch((error: unknown) => {
      this.migrated = null;
      // A read-only pool's check says itself what is wrong with the schema and what to run.
      throw this.readOnly && isLcmError(error) ? error : asStorageError(error, "could not prepare the PostgreSQL schema");
    });
    return this.migrated;
  }

  async rows<Row extends QueryResultRow>(sql: PgSql, params: readonly PgParam[] = []): Promise<Row[]> {
    await this.ready();
    try {
      return (await (await this.poolFor(sql)).query<Row>(queryConfig(sql, params))).rows;
    } catch (error) {
      throw asReadOnlyRefusal(error, this.location);
    }
  }

  async row<Row extends QueryResultRow>(sql: PgSql, params: readonly PgParam[] = []): Promise<Row | null> {
    return (await this.rows<Row>(sql, params))[0] ?? null;
  }

  async run(sql: PgSql, params: readonly PgParam[] = []): Promise<number> {
    await this.ready();
    try {
      return (await (await this.poolFor(sql)).query(queryConfig(sql, params))).rowCount ?? 0;
    } catch (error) {
      throw asReadOnlyRefusal(error, this.location);
    }
  }

  /**
   * The pool a statement outside a transaction runs on: a statement whose plan is the same for every value
   * (`PgStatement.plan` "generic") on a sibling with this pool's options whose sessions force generic plans, so each
   * connection plans it once; every other statement here, where PostgreSQL plans it for its values. (Inside a
   * transaction a statement runs on the transaction's connection, under this pool's rule.) The sibling holds at most
   * GENERIC_POOL_SIZE connections: its statements are short look-ups, a few at once.
   */
  private poolFor(sql: PgSql): Promise<Pool> {
    if (!isGenericPlan(sql)) return this.pool();
    return this.sibling("generic-plans", {
      poolSize: Math.min(this.options.poolSize ?? DEFAULT_POOL_SIZE, GENERIC_POOL_SIZE),
      planner: { ...this.options.planner, plan_cache_mode: "force_generic_plan" },
    }).pool();
  }

  /**
   * Runs `body` in one transaction (READ COMMITTED unless `serializable`) and commits it; rolls back on a throw. A
   * serialization failure or deadlock runs the whole body again (up to 5 attempts), so `body` must not have effects
   * outside the database.
   */
  async transaction<T>(body: (tx: PgQueryable) => Promise<T>, options: { serializable?: boolean } = {}): Promise<T> {
    await this.ready();
    return this.transactionUnmigrated(body, options);
  }

  /** One statement on the pool without waiting for the migrations (their check of the schema's version). */
  async rowUnmigrated<Row extends QueryResultRow>(sql: string): Promise<Row | null> {
    return (await (await this.pool()).query<Row>(sql)).rows[0] ?? null;
  }

  /** `transaction` without waiting for the migrations (the migrations' own transactions). */
  async transactionUnmigrated<T>(body: (tx: PgQueryable) => Promise<T>, options: { serializable?: boolean } = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await (await this.pool()).connect();
      let broken = false;
      try {
        await client.query(options.serializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN");
        const result = await body(clientQueryable(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        broken = !(await rollback(client));
        if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(error) ?? "")) {
          await sleep(5 * attempt * attempt + Math.random() * 10);
          continue;
        }
        throw asReadOnlyRefusal(error, this.location);
      } finally {
        client.release(broken);
      }
    }
  }

  /**
   * Runs `body` in a transaction holding the conversation's advisory lock, or returns `{ locked: false }` at once
   * when another connection (another gateway) holds it: compaction and retention never wait on each other. The lock
   * ends with the transaction.
   */
  async withConversationLock<T>(conversationId: number, body: (tx: PgQueryable) => Promise<T>): Promise<{ locked: true; value: T } | { locked: false }> {
    return this.transaction(async (tx) => {
      const got = await tx.row<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1, $2) AS locked", [LCM_LOCK_NAMESPACE, conversationId]);
      if (!got?.locked) return { locked: false as const };
      return { locked: true as const, value: await body(tx) };
    });
  }

  /**
   * Another pool on the same database with other options, one per `name` (search reads: a shorter statement timeout
   * that the server applies to every statement of the pool, with no transaction per read). Connects nothing until
   * used; closed with this one.
   */
  sibling(name: string, options: PgOptions): PgDatabase {
    let sibling = this.siblings.get(name);
    if (!sibling) {
      sibling = new PgDatabase(this.url, { ...this.options, ...options }, this);
      this.siblings.set(name, sibling);
    }
    return sibling;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.siblings.values()].map((sibling) => sibling.close()));
    const opening = this.poolOpening;
    this.poolOpening = null;
    if (opening) await (await opening.catch(() => null))?.end();
  }
}

function clientQueryable(client: PoolClient): PgQueryable {
  return {
    rows: async <Row extends QueryResultRow>(sql: PgSql, params: readonly PgParam[] = []) => (await client.query<Row>(queryConfig(sql, params))).rows,
    row: async <Row extends QueryResultRow>(sql: PgSql, params: readonly PgParam[] = []) => (await client.query<Row>(queryConfig(sql, params))).rows[0] ?? null,
    run: async (sql: PgSql, params: readonly PgParam[] = []) => (await client.query(queryConfig(sql, params))).rowCount ?? 0,
  };
}

/** Rolls back; false when the connection itself is gone (the pool then discards it). */
async function rollback(client: PoolClient): Promise<boolean> {
  try {
    await client.query("ROLLBACK");
    return true;
  } catch {
    return false;
  }
}

type PgModule = typeof import("pg");
let driver: Promise<PgModule> | null = null;

async function loadDriver(): Promise<PgModule> {
  driver ??= import("pg").then((module) => ((module as unknown as { default?: PgModule }).default ?? module) as PgModule).catch((error: unknown) => {
    driver = null;
    throw new LcmError("unavailable", `The PostgreSQL driver (the "pg" package) could not be loaded: ${describeError(error)}. ` +
      "Install it beside the plugin (npm install pg), or leave databaseUrl unset to use SQLite.", {}, { cause: error });
  });
  return driver;
}

/** The SQLSTATE of a driver error, if it has one. */
export function sqlState(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

/** Whether a PostgreSQL error means the server could not take the write (as opposed to a bad statement). */
export function isPgStorageFailure(error: unknown, depth = 0): boolean {
  if (isLcmError(error, "storage") || isLcmError(error, "unavailable") || isLcmError(error, "busy")) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause !== undefined && depth < 5 && isPgStorageFailure(cause, depth + 1)) return true;
  const state = sqlState(error);
  if (state) return STORAGE_CLASSES.some((prefix) => state.startsWith(prefix)) || RETRYABLE.has(state);
  const code = (error as { code?: unknown } | null)?.code;
  // Node's socket errors (server down, refused, reset) and the pool's own timeouts.
  if (typeof code === "string" && /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NOTFOUND|AI_AGAIN)$/.test(code)) return true;
  const message = String((error as { message?: unknown } | null)?.message ?? "");
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/.test(message);
}

function asStorageError(error: unknown, what: string): LcmError {
  return new LcmError("storage", `${what}: ${describeError(error)}`, { sqlState: sqlState(error) }, { cause: error });
}

/** The URL without its password, for messages and status. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const ESCAPE = "\uFDD0";
const NEEDS_ESCAPE = /[\u0000\uFDD0]/;

/**
 * Text as PostgreSQL stores it. PostgreSQL text cannot hold NUL, which SQLite and the host's messages can: a NUL is
 * written as U+FDD0 "0" and U+FDD0 itself (a noncharacter, never in interchanged text) as U+FDD0 "1", so that
 * `fromPgText(toPgText(s)) === s` for every string. Text without either is unchanged (the common case, one test).
 */
export function toPgText(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  return text.replace(/[\u0000\uFDD0]/g, (char) => (char === "\u0000" ? `${ESCAPE}0` : `${ESCAPE}1`));
}

export function fromPgText(text: string): string {
  if (!text.includes(ESCAPE)) return text;
  return text.replace(/\uFDD0([01])/g, (_match, digit: string) => (digit === "0" ? "\u0000" : ESCAPE));
}

/** `toPgText` for a nullable value. */
export function toPgTextOrNull(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : toPgText(text);
}

export function fromPgTextOrNull(text: string | null): string | null {
  return text === null ? null : fromPgText(text);
}
