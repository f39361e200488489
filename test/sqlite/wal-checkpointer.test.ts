import { statSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import type { Database } from "../../src/sqlite/database.js";
import { WAL_TRUNCATE_BYTES, WORKER_AFTER_COMMITS } from "../../src/sqlite/wal-checkpointer.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

const autocheckpoint = (db: Database) => db.get<{ wal_autocheckpoint: number }>("PRAGMA wal_autocheckpoint")!.wal_autocheckpoint;
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

async function commit(db: Database, count: number, payloadBytes = 16): Promise<void> {
  const payload = "x".repeat(payloadBytes);
  for (let index = 0; index < count; index++) {
    await db.write(() =>
      db.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at, bootstrap_state) VALUES ('a', ?, 1, 1, ?)",
        `s-${Math.random()}`, payload),
    );
  }
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error("condition not met in time");
    await sleep(20);
  }
}

describe("WalCheckpointer", () => {
  it("leaves checkpoints to SQLite on a connection that has written little", async () => {
    const db = openDatabase(tempDatabasePath());
    await commit(db, WORKER_AFTER_COMMITS - 10);
    await sleep(100);
    expect(autocheckpoint(db)).toBe(1_000);
    db.close();
  });

  it("hands checkpoints to a worker thread once the connection is busy", async () => {
    const db = openDatabase(tempDatabasePath());
    await commit(db, WORKER_AFTER_COMMITS + 1);
    await until(() => autocheckpoint(db) === 0);
    db.close();
  });

  it("keeps the write-ahead log under its bound while writes go on back to back", async () => {
    const path = tempDatabasePath();
    const db = openDatabase(path);
    await commit(db, WORKER_AFTER_COMMITS + 1);
    await until(() => autocheckpoint(db) === 0);
    // 4 x the bound in 16 KiB rows (each commit writes a few 8 KiB pages), no pause between commits.
    const rows = Math.ceil((4 * WAL_TRUNCATE_BYTES) / 16_384);
    let largest = 0;
    for (let row = 0; row < rows; row++) {
      await commit(db, 1, 16_384);
      largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    // The bound, plus the commit that crossed it (the next writes wait for the worker to truncate the log).
    expect(largest).toBeLessThanOrEqual(WAL_TRUNCATE_BYTES + 256 * 1024);
    expect(db.checkpointer!.boundStats.boundReached).toBeGreaterThan(2);
    db.close();
  }, 60_000);

  it("waits only now and then while another connection's reader keeps the log, and cuts it once the reader ends", async () => {
    const path = tempDatabasePath();
    const db = openDatabase(path);
    await commit(db, WORKER_AFTER_COMMITS + 1);
    await until(() => autocheckpoint(db) === 0);
    // A read transaction on a connection of its own pins the log: no checkpoint can copy past it or cut the log.
    const reader = new DatabaseSync(path);
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM conversations").get();
    await commit(db, Math.ceil((2 * WAL_TRUNCATE_BYTES) / 16_384), 16_384);
    const pinned = statSync(`${path}-wal`).size;
    // Each truncation the reader keeps from finishing doubles the size at which writes wait again (16, 32 MB…):
    // a few waits of at most the worker's busy timeout, never one per commit.
    const waits = db.checkpointer!.boundStats.pausedWrites;
    expect(pinned).toBeGreaterThan(2 * WAL_TRUNCATE_BYTES);
    expect(waits).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(pinned / WAL_TRUNCATE_BYTES)));
    reader.exec("COMMIT");
    reader.close();
    // The reader is gone: the next checkpoint copies the whole log, cuts it, and the bound is back where it was.
    await commit(db, 1);
    await until(() => statSync(`${path}-wal`).size < WAL_TRUNCATE_BYTES);
    await commit(db, Math.ceil((2 * WAL_TRUNCATE_BYTES) / 16_384), 16_384);
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual(WAL_TRUNCATE_BYTES + 256 * 1024);
    db.close();
  }, 60_000);

  it("merges full-text index segments on the worker when asked, and not before it runs", async () => {
    const db = openDatabase(tempDatabasePath());
    const index = new SqliteSearchIndex(db);
    const segmentRows = () => db.get<{ n: number }>("SELECT count(*) AS n FROM messages_fts_data")!.n;
    expect(db.checkpointer!.requestIndexMerge()).toBe(false); // no worker yet, and not asked to start one
    await db.write(() => db.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a', 's', 1, 1)"));
    // One indexing transaction per message: one small segment each (automatic merging is off).
    for (let seq = 1; seq <= 12; seq++) {
      await db.write(() => {
        db.run(
          "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (1, ?, 'user', ?, 3, 1, ?)",
          seq, `word${seq} shared text`, `k${seq}`,
        );
        index.indexChunk(10);
      });
    }
    const unmerged = segmentRows();
    await commit(db, WORKER_AFTER_COMMITS + 1);
    await until(() => autocheckpoint(db) === 0);
    expect(db.checkpointer!.requestIndexMerge()).toBe(true);
    await until(() => segmentRows() < unmerged);
    expect(db.get<{ n: number }>("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'shared'")!.n).toBe(12);
    db.raw.prepare("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)").run();
    db.close();
  });

  it("starts the worker for a merge when asked to, before the connection has made many commits", async () => {
    const db = openDatabase(tempDatabasePath());
    expect(db.checkpointer!.requestIndexMerge(true)).toBe(true);
    await until(() => autocheckpoint(db) === 0); // the worker is running and has taken over checkpoints
    db.close();
  });
});
