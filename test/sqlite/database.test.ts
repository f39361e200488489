import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import { Database } from "../../src/sqlite/database.js";
import { MIGRATIONS, migrate } from "../../src/sqlite/migrations.js";
import { isLcmError } from "../../src/errors.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

describe("Database", () => {
  it("waits for another writer without blocking the event loop, then writes", async () => {
    const path = tempDatabasePath();
    const holder = openDatabase(path);
    const writer = openDatabase(path);
    holder.raw.exec("BEGIN IMMEDIATE");
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const write = writer.write(() => writer.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a', 's', 1, 1)"));
    await new Promise((resolve) => setTimeout(resolve, 120));
    holder.raw.exec("COMMIT");
    await write;
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(5); // timers kept firing while the write waited for the lock
    expect(writer.get<{ n: number }>("SELECT count(*) AS n FROM conversations")!.n).toBe(1);
    holder.close();
    writer.close();
  });

  it("tells a time-sliced caller each time it waits for the lock, so the wait ends its slice", async () => {
    const path = tempDatabasePath();
    const holder = openDatabase(path);
    const writer = openDatabase(path);
    holder.raw.exec("BEGIN IMMEDIATE");
    let waits = 0;
    const slice = { waitFor: <T>(work: () => Promise<T>) => (waits++, work()) };
    const write = writer.write(() => writer.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a', 's', 1, 1)"), { slice });
    await new Promise((resolve) => setTimeout(resolve, 30));
    holder.raw.exec("COMMIT");
    await write;
    expect(waits).toBeGreaterThan(0); // the back-off while the holder kept the lock
    expect(writer.get<{ n: number }>("SELECT count(*) AS n FROM conversations")!.n).toBe(1);
    holder.close();
    writer.close();
  });

  it("gives up with a busy error after its deadline and leaves nothing half-written", async () => {
    const path = tempDatabasePath();
    const holder = openDatabase(path);
    const writer = openDatabase(path);
    holder.raw.exec("BEGIN IMMEDIATE");
    const error = await writer.write(() => writer.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a', 's', 1, 1)"), { deadlineMs: 50 })
      .catch((caught: unknown) => caught);
    holder.raw.exec("ROLLBACK");
    expect(isLcmError(error, "busy")).toBe(true);
    expect(writer.get<{ n: number }>("SELECT count(*) AS n FROM conversations")!.n).toBe(0);
    holder.close();
    writer.close();
  });

  it("rolls back the whole transaction when its body throws", async () => {
    const database = openDatabase(tempDatabasePath());
    await expect(
      database.write(() => {
        database.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a', 's', 1, 1)");
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(database.get<{ n: number }>("SELECT count(*) AS n FROM conversations")!.n).toBe(0);
    database.close();
  });

  it("prepares each statement once per connection", () => {
    const database = openDatabase(tempDatabasePath());
    expect(database.statement("SELECT 1")).toBe(database.statement("SELECT 1"));
    database.close();
  });
});

describe("migrations", () => {
  it("bring a new file to the latest version, in WAL mode with foreign keys on", () => {
    const database = openDatabase(tempDatabasePath());
    expect(database.get<{ user_version: number }>("PRAGMA user_version")!.user_version).toBe(MIGRATIONS.at(-1)!.version);
    expect(database.get<{ journal_mode: string }>("PRAGMA journal_mode")!.journal_mode).toBe("wal");
    expect(database.get<{ foreign_keys: number }>("PRAGMA foreign_keys")!.foreign_keys).toBe(1);
    database.close();
  });

  it("do nothing on an up-to-date database", () => {
    const path = tempDatabasePath();
    const first = openDatabase(path);
    first.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a', 's', 1, 1)");
    first.close();
    const second = openDatabase(path);
    // Every shipped migration replaced by SQL that fails if it runs: an up-to-date file must not run any.
    expect(() => migrate(second, MIGRATIONS.map((migration) => ({ ...migration, up: "NOT VALID SQL" })))).not.toThrow();
    expect(second.get<{ n: number }>("SELECT count(*) AS n FROM conversations")!.n).toBe(1);
    second.close();
  });

  it("refuse a database from a newer plugin version", () => {
    const path = tempDatabasePath();
    const database = openDatabase(path);
    database.raw.exec("PRAGMA user_version = 999");
    expect(() => migrate(database)).toThrow(/schema version 999, newer than this plugin supports/);
    database.close();
  });

  it("rebuild the conversations of a version-4 file keyed by agent and session, keeping every row and id", () => {
    const path = tempDatabasePath();
    const old = new Database(path);
    migrate(old, MIGRATIONS.filter((migration) => migration.version <= 4));
    // An older version stored a hostile host budget as it came: a row node:sqlite cannot read.
    old.raw.exec(`INSERT INTO conversations (conversation_id, agent_id, session_id, created_at, updated_at, message_count, last_token_budget)
                  VALUES (7, 'alice', 'shared', 1, 1, 1, 1000000000000000000)`);
    old.raw.exec(`INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key)
                  VALUES (7, 1, 'user', 'hello', 5, 1, 'k1')`);
    old.close();
    const database = openDatabase(path);
    expect(database.get<{ user_version: number }>("PRAGMA user_version")!.user_version).toBe(MIGRATIONS.at(-1)!.version);
    expect(database.get<{ conversation_id: number; agent_id: string; last_token_budget: number | null }>(
      "SELECT conversation_id, agent_id, last_token_budget FROM conversations",
    )).toEqual({ conversation_id: 7, agent_id: "alice", last_token_budget: null });
    // Another agent may now have a session with the same id; the same agent may not.
    database.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('bob', 'shared', 2, 2)");
    expect(() => database.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('alice', 'shared', 3, 3)"))
      .toThrow(/UNIQUE/);
    expect(database.all("PRAGMA foreign_key_check")).toEqual([]);
    expect(database.get<{ foreign_keys: number }>("PRAGMA foreign_keys")!.foreign_keys).toBe(1);
    database.close();
  });

  it("keep messages out of the way of a context item that would dangle (foreign keys)", () => {
    const database = openDatabase(tempDatabasePath());
    expect(() =>
      database.run("INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) VALUES (1, 1, 99, 1)"),
    ).toThrow(/FOREIGN KEY/);
    database.close();
  });
});
