/**
 * Fixture rows written with plain SQL on either backend (for the stores whose writers a test does not drive): the
 * statement is written with `?` placeholders, as SQLite takes them, and numbered `$1…` for PostgreSQL. Text goes
 * through toPgText on PostgreSQL, as the PostgreSQL stores write it.
 */
import { type PgDatabase, toPgText } from "../../src/postgres/pg-database.js";
import type { Database } from "../../src/sqlite/database.js";
import type { TestBackend } from "./backends.js";

type Value = string | number | null;

/** Runs statements in one transaction on the backend's database. */
export async function runFixtureSql(opened: TestBackend, statements: readonly { sql: string; params?: readonly Value[] }[]): Promise<void> {
  if (opened.kind === "sqlite") {
    const db = (opened.backend as unknown as { database: Database }).database;
    await db.write(() => {
      for (const { sql, params = [] } of statements) db.run(sql, ...params);
    });
    return;
  }
  const db = (opened.backend as unknown as { database: PgDatabase }).database;
  await db.transaction(async (tx) => {
    for (const { sql, params = [] } of statements) {
      let index = 0;
      await tx.run(sql.replace(/\?/g, () => `$${++index}`), params.map((value) => (typeof value === "string" ? toPgText(value) : value)));
    }
  });
}

/** Conversation 1 (agent "a", session "s") holding `texts` as its messages, seq 1…n, created at 1…n. */
export async function insertMessages(opened: TestBackend, texts: readonly string[], options: { conversationId?: number; firstSeq?: number } = {}): Promise<void> {
  const conversationId = options.conversationId ?? 1;
  const firstSeq = options.firstSeq ?? 1;
  const statements = firstSeq === 1
    ? [{ sql: "INSERT INTO conversations (conversation_id, agent_id, session_id, created_at, updated_at) VALUES (?, 'a', ?, 1, 1)", params: [conversationId, `s${conversationId}`] }]
    : [];
  texts.forEach((text, index) => statements.push({
    sql: "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (?, ?, 'user', ?, 1, ?, ?)",
    params: [conversationId, firstSeq + index, text, firstSeq + index, `k${conversationId}-${firstSeq + index}`],
  }));
  await runFixtureSql(opened, statements);
}
