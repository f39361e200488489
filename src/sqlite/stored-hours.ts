/**
 * When messages were stored (schema 14, message_stored_hours): one row per unix hour, holding the first message id
 * stored in it. Database.writeNow calls these around every write transaction, so every path that stores messages
 * (turns, batches, every import) is marked without knowing about it; the cost is two lookups of the newest message
 * id per transaction (statements prepared once per connection), and one insert in the first transaction of an hour
 * that added messages. Growth in /lcm status reads the rows (sqlite-retention-store.ts).
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";

/** What these need of a connection: Database's cached statements (declared here, so the two modules form no cycle). */
export interface StoredHoursConnection {
  tuples<T extends readonly unknown[]>(sql: string, ...params: SQLInputValue[]): T[];
  run(sql: string, ...params: SQLInputValue[]): unknown;
}

const HOUR_MS = 3_600_000;

/** Whether the connection's schema has the table (checked once, after migrations). */
export function hasStoredHours(raw: DatabaseSync): boolean {
  return raw.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'message_stored_hours'").get() !== undefined;
}

/** The newest message id, or 0 (a lookup at the end of the primary key). */
export function newestMessageId(db: StoredHoursConnection): number {
  return Number(db.tuples<[number]>("SELECT coalesce(max(message_id), 0) FROM messages")[0]?.[0] ?? 0);
}

/**
 * Marks the hour of `now` with the first message id this transaction stored, when it stored any: ids above
 * `newestBefore` are new. A stub retention inserts again keeps its old id, below the newest, and is not counted.
 */
export function markStoredHour(db: StoredHoursConnection, newestBefore: number, now: number): void {
  if (newestMessageId(db) <= newestBefore) return;
  db.run("INSERT OR IGNORE INTO message_stored_hours (hour, first_message_id) VALUES (?, ?)", Math.floor(now / HOUR_MS), newestBefore + 1);
}
