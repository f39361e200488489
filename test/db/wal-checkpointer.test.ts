import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/connection-registry.js";
import type { Database } from "../../src/db/database.js";
import { RESTART_AFTER_FRAMES, WORKER_AFTER_COMMITS } from "../../src/db/wal-checkpointer.js";
import { SqliteSearchIndex } from "../../src/store/sqlite/sqlite-search-index.js";
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

  it("keeps the write-ahead log from growing without bound while writes go on", async () => {
    const path = tempDatabasePath();
    const db = openDatabase(path);
    await commit(db, WORKER_AFTER_COMMITS + 1);
    await until(() => autocheckpoint(db) === 0);
    // 4 x the restart threshold in 16 KiB rows, with pauses for the worker to run.
    const pageSize = db.get<{ page_size: number }>("PRAGMA page_size")!.page_size;
    const rounds = 8;
    const perRound = Math.ceil((4 * RESTART_AFTER_FRAMES * pageSize) / rounds / 16_384);
    for (let round = 0; round < rounds; round++) {
      await commit(db, perRound, 16_384);
      await sleep(300);
    }
    const written = rounds * perRound * 16_384;
    expect(statSync(`${path}-wal`).size).toBeLessThan(written / 2);
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
