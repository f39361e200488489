/**
 * A node:sqlite connection with the two things every store needs: statements prepared once per connection
 * (cached by SQL text), and write transactions that never block the event loop while another process holds the
 * lock. SQLite's own busy handler sleeps synchronously on the main thread, so the connection's busy timeout is
 * kept tiny (and off while taking the write lock) and contention is retried here with async back-off until a
 * deadline.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync, statSync } from "node:fs";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { LcmError } from "../errors.js";
import { processShared } from "../runtime/process-shared.js";
import type { SliceDeadline } from "../runtime/time-slice.js";
import { markStoredHour, newestMessageId } from "./stored-hours.js";
import type { WalCheckpointer } from "./wal-checkpointer.js";

/**
 * How long writes started inside `body` wait for a lock another process holds, when that is not the default:
 * work that is recoverable next turn (bootstrap, maintenance, a recorded budget) gives up sooner than a turn's
 * commit, so that a competing writer does not hold a turn up three times over. Shared by every copy of the module
 * (the connections are).
 */
export function withWriteDeadline<T>(deadlineMs: number, body: () => Promise<T>): Promise<T> {
  return writeDeadlines().run(deadlineMs, body);
}

function currentWriteDeadline(): number {
  return writeDeadlines().getStore() ?? DEFAULT_WRITE_DEADLINE_MS;
}

function writeDeadlines(): AsyncLocalStorage<number> {
  return processShared("write-deadlines.v1", () => new AsyncLocalStorage<number>());
}

/** SQLite's own busy wait per read (writes take the lock without it): short enough never to stall the event loop. */
export const BUSY_TIMEOUT_MS = 5;
/** How long a write keeps retrying a locked database before it fails with LcmError("busy"). */
export const DEFAULT_WRITE_DEADLINE_MS = 15_000;
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

type Row = Record<string, SQLInputValue>;

export class Database {
  readonly raw: DatabaseSync;
  /** Set by openDatabase for files: WAL checkpoints on a worker thread, off the event loop (wal-checkpointer.ts). */
  checkpointer: WalCheckpointer | null = null;
  /** Set by the search index once a backlog went to a worker thread (backlog-index-thread.ts): stopped on close. */
  backlogIndexer: { close(): void } | null = null;
  /** Set by migrate once the schema has message_stored_hours: each write transaction marks when it stored messages. */
  marksStoredHours = false;
  private readonly statements = new Map<string, StatementSync>();
  private readonly tupleStatements = new Map<string, StatementSync>();

  /**
   * Set for a read-only connection: why it cannot write, as a full message (path, cause, fix). Every write then
   * fails with LcmError("unavailable") carrying it, instead of SQLite's "attempt to write a readonly database".
   */
  readonly readOnly: { message: string; details: Record<string, unknown> } | null;

  /** `location` differs from `path` only for a read-only connection opened through a `file:` URL (database-file.ts). */
  constructor(readonly path: string, options: { location?: string | URL; readOnly?: { message: string; details: Record<string, unknown> } } = {}) {
    this.readOnly = options.readOnly ?? null;
    this.raw = new DatabaseSync(options.location ?? path, {
      timeout: BUSY_TIMEOUT_MS, enableForeignKeyConstraints: true, ...(this.readOnly ? { readOnly: true } : {}),
    });
    // SQLite has no string reverse; the term dictionary keys terms by their reversal (sqlite-search-index.ts).
    this.raw.function("lcm_reverse", { deterministic: true }, (text) => reverseText(String(text)));
  }

  /**
   * The cached prepared statement for this SQL text; with `returnArrays`, a separate one in node:sqlite's
   * return-arrays mode (rows as arrays in column order).
   */
  statement(sql: string, returnArrays = false): StatementSync {
    const cache = returnArrays ? this.tupleStatements : this.statements;
    let statement = cache.get(sql);
    if (!statement) {
      statement = this.raw.prepare(sql);
      if (returnArrays) statement.setReturnArrays(true);
      cache.set(sql, statement);
    }
    return statement;
  }

  get<T>(sql: string, ...params: SQLInputValue[]): T | undefined {
    const row = this.statement(sql).get(...params);
    return row === undefined ? undefined : ({ ...row } as T);
  }

  all<T>(sql: string, ...params: SQLInputValue[]): T[] {
    return this.statement(sql).all(...params).map((row) => ({ ...row }) as T);
  }

  /**
   * Rows as node:sqlite returns them (null-prototype objects), without the copy `all` makes: for hot reads whose
   * rows are mapped to records right away and never handed on. Copying costs as much as the query itself
   * (the rows are dictionary-mode objects): 1,300 message rows take 4.7 ms to read and 3.8 ms more to spread.
   */
  rows<T>(sql: string, ...params: SQLInputValue[]): T[] {
    return this.statement(sql).all(...params) as T[];
  }

  /**
   * Rows as arrays in column order (node:sqlite's return-arrays mode): for the hottest reads, where building a
   * keyed object per row costs about as much as the query (src/sqlite/rows.ts).
   */
  tuples<T extends readonly unknown[]>(sql: string, ...params: SQLInputValue[]): T[] {
    return this.statement(sql, true).all(...params) as unknown as T[];
  }

  run(sql: string, ...params: SQLInputValue[]): { changes: number; lastInsertRowid: number } {
    const result = this.statement(sql).run(...params);
    return { changes: Number(result.changes), lastInsertRowid: Number(result.lastInsertRowid) };
  }

  /**
   * Runs `body` in one IMMEDIATE transaction. The body is synchronous, so no transaction ever spans an await.
   * When another connection holds the write lock, waits asynchronously and retries until `deadlineMs`. A
   * time-sliced job passes its `slice`: a wait ends the job's slice and a new one starts with the transaction.
   */
  async write<T>(body: () => T, options: { deadlineMs?: number; slice?: Pick<SliceDeadline, "waitFor"> } = {}): Promise<T> {
    const deadlineMs = options.deadlineMs ?? currentWriteDeadline();
    const wait = (pending: () => Promise<unknown>) => (options.slice ? options.slice.waitFor(pending) : pending());
    const pause = this.checkpointer?.writePause();
    if (pause) await wait(() => pause); // the checkpoint worker is truncating a full write-ahead log (spec 012)
    const problem = this.fileProblem();
    if (problem !== null) this.retire(problem);
    const started = Date.now();
    let delay = 2;
    for (;;) {
      try {
        return this.writeNow(body);
      } catch (error) {
        if (!isBusyError(error)) throw error;
        if (Date.now() - started + delay > deadlineMs) {
          throw new LcmError("busy", `The database ${this.path} stayed locked by another writer for ${deadlineMs} ms.`, {}, { cause: error });
        }
        await wait(() => new Promise((resolve) => setTimeout(resolve, delay)));
        delay = Math.min(delay * 2, 100);
      }
    }
  }

  /**
   * Stops writing to a file that is no longer the one at the path: what the old write-ahead log still holds is
   * checkpointed into the file the connection has open (best effort), the connection is closed, and the write fails
   * with a storage error, so a turn is not acknowledged into a file nobody will read; the next caller gets a new
   * connection to whatever is at the path now (connection-registry.ts).
   */
  private retire(problem: string): never {
    this.isStale = true;
    try {
      this.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // Safe to continue: the connection is closed either way, and a failed checkpoint only concerns a file that is
      // gone or no longer the one at the path.
    }
    this.close();
    throw new LcmError(
      "storage",
      `The database file ${this.path} ${problem} while LCM had it open; LCM stopped writing to it and opens the path ` +
        "again for the next write. Turns not stored are committed again by OpenClaw; history is re-imported from its transcript.",
    );
  }

  /** Synchronous variant for migrations and tests; throws a busy error instead of waiting. */
  writeNow<T>(body: () => T): T {
    if (this.readOnly) {
      throw new LcmError("unavailable", `This needs to write to the database, which LCM has open read-only. ${this.readOnly.message}`, this.readOnly.details);
    }
    this.beginImmediate();
    try {
      const newestBefore = this.marksStoredHours ? newestMessageId(this) : 0;
      const result = body();
      if (this.marksStoredHours) markStoredHour(this, newestBefore, Date.now());
      this.raw.exec("COMMIT");
      this.checkpointer?.noteCommit();
      return result;
    } catch (error) {
      if (this.raw.isTransaction) this.raw.exec("ROLLBACK");
      throw error;
    }
  }

  /**
   * BEGIN IMMEDIATE without SQLite's busy handler: when another connection holds the write lock it fails at once and
   * write() waits for the lock asynchronously. The handler would first sleep on the event loop (1 + 2 + 2 ms at
   * BUSY_TIMEOUT_MS; each time the checkpoint worker's index merge held the lock), and on a loaded machine a thread
   * that sleeps waits for a core again when it wakes: one such 1 ms sleep inside maintain returned after 75 ms.
   * Reads keep the short busy timeout (they are not retried). Executed, not prepared: SQLite applies this pragma
   * when it compiles the statement, so running a cached one again changes nothing. Costs about 1 µs per write.
   */
  private beginImmediate(): void {
    this.raw.exec("PRAGMA busy_timeout = 0");
    try {
      this.raw.exec("BEGIN IMMEDIATE");
    } finally {
      this.raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /**
   * The file this connection was opened on, to notice it being deleted or replaced under the process (a connection
   * keeps writing into a deleted file's inode, which nobody will read again). Set once the file is open and ours.
   */
  private file: { dev: number; ino: number; hadWal: boolean } | null = null;
  /** True once the file was found deleted or replaced: the registry opens the path again for the next caller. */
  isStale = false;

  watchFile(): void {
    const info = statSync(this.path);
    this.file = { dev: info.dev, ino: info.ino, hadWal: existsSync(`${this.path}-wal`) };
  }

  /** Why the file under this connection is no longer the file at its path (deleted, replaced, WAL removed), or null. */
  fileProblem(): string | null {
    if (this.file === null) return null;
    let info;
    try {
      info = statSync(this.path);
    } catch {
      return "was deleted";
    }
    if (info.dev !== this.file.dev || info.ino !== this.file.ino) return "was replaced by another file";
    const hasWal = existsSync(`${this.path}-wal`);
    if (this.file.hadWal && !hasWal) return "lost its write-ahead log (the -wal file was deleted)";
    this.file.hadWal = hasWal;
    return null;
  }

  close(): void {
    this.backlogIndexer?.close();
    this.checkpointer?.close();
    this.statements.clear();
    this.tupleStatements.clear();
    if (this.raw.isOpen) this.raw.close();
  }
}

/**
 * Runs the synchronous `body` again, after short synchronous sleeps, while it fails with a busy error, for at
 * most `waitMs`; any other error, or the busy error at the deadline, is thrown. Only for the steps that cannot
 * wait asynchronously: opening and migrating a file inside the host's synchronous engine factory. Everything
 * else waits with Database.write's asynchronous back-off.
 */
export function retryWhileBusySync<T>(body: () => T, waitMs: number): T {
  const started = Date.now();
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  let delay = 2;
  for (;;) {
    try {
      return body();
    } catch (error) {
      if (!isBusyError(error) || Date.now() - started + delay > waitMs) throw error;
      Atomics.wait(sleeper, 0, 0, delay);
      delay = Math.min(delay * 2, 50);
    }
  }
}

/** The text with its characters (code points) in reverse order: the term dictionary's key for "ends with". */
export function reverseText(text: string): string {
  return [...text].reverse().join("");
}

export function isBusyError(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === "number" && ((code & 0xff) === SQLITE_BUSY || (code & 0xff) === SQLITE_LOCKED);
}
