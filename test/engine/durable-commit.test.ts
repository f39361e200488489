/**
 * A turn is acknowledged only when it is stored (issue 13). The store is made to refuse writes the way a full disk
 * does (SQLite's max_page_count gives SQLITE_FULL deterministically): commitTurn then throws, so OpenClaw keeps the
 * turn in its outbox, and the retry OpenClaw makes with the same advancement key stores it exactly once, resuming a
 * turn too large for one transaction where it stopped.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { register as registerPlugin } from "../../src/plugin.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { FakeTranscriptSource } from "../fakes/fake-transcript-source.js";
import { tempDir } from "../helpers/temp-dir.js";
import { CHUNK_MESSAGES } from "../../src/store/turn-chunks.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };
const count = (db: ReturnType<typeof createTestEngine>["db"], sql: string) => db.get<{ n: number }>(sql)!.n;

/** Makes the file refuse to grow: every write that needs a new page fails with SQLITE_FULL. */
function fillDisk(db: ReturnType<typeof createTestEngine>["db"]): () => void {
  const pages = db.get<{ page_count: number }>("PRAGMA page_count")!.page_count;
  db.raw.exec(`PRAGMA max_page_count = ${pages}`);
  return () => db.raw.exec("PRAGMA max_page_count = 1073741823");
}

describe("commitTurn when the store cannot take the turn", () => {
  it("throws instead of acknowledging, stores nothing, and stores the turn once when the host commits it again", async () => {
    const { newEngine, db, logger } = createTestEngine();
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t0", messages: [userMessage("warm up"), assistantMessage("ok")] });
    const freeSpace = fillDisk(db);
    const big = "the disk is full now ".repeat(4_000);
    const messages = [userMessage(big), assistantMessage(big)];
    await expect(newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages })).rejects.toMatchObject({ code: "storage" });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(2);
    expect(logger.errors().join("\n")).toMatch(/The turn is not stored; OpenClaw keeps it in its outbox/);
    freeSpace();
    expect(await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages })).toEqual({ status: "committed" });
    expect(await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages })).toEqual({ status: "duplicate" });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(4);
  });

  it("still answers committed for a call it cannot store because of its own input (no session id)", async () => {
    const { newEngine } = createTestEngine();
    await expect(newEngine().commitTurn({ sessionId: undefined as unknown as string, advancementKey: "t1", messages: [] }))
      .resolves.toEqual({ status: "committed" });
  });
});

describe("a turn too large for one transaction", () => {
  it("is stored in chunks with the event loop running between them, and resumes where it stopped after a failure", async () => {
    const { newEngine, db } = createTestEngine();
    const total = CHUNK_MESSAGES * 4 + 10;
    const messages = Array.from({ length: total }, (_, index) =>
      index % 2 === 0 ? userMessage(`question ${index} ${"x".repeat(200)}`) : assistantMessage(`answer ${index} ${"y".repeat(200)}`));
    // Let the first chunk in, then refuse to grow: a poll between the chunks' transactions fills the disk.
    let polling = true;
    const poll = () => {
      if (!polling) return;
      if (count(db, "SELECT count(*) AS n FROM messages") >= CHUNK_MESSAGES) {
        fillDisk(db);
        return;
      }
      setImmediate(poll);
    };
    setImmediate(poll);
    const failed = newEngine().commitTurn({ ...SESSION, advancementKey: "big", messages });
    await expect(failed).rejects.toMatchObject({ code: "storage" });
    polling = false;
    const stored = count(db, "SELECT count(*) AS n FROM messages");
    expect(stored).toBeGreaterThan(0); // chunks committed before the failure stay, counted on the claim
    expect(stored).toBeLessThan(total);
    db.raw.exec("PRAGMA max_page_count = 1073741823");
    expect(await newEngine().commitTurn({ ...SESSION, advancementKey: "big", messages })).toEqual({ status: "committed" });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(total);
    expect(count(db, "SELECT count(DISTINCT identity_key) AS n FROM messages")).toBe(total);
    expect(db.get<{ stored_messages: number | null }>("SELECT stored_messages FROM committed_turns WHERE advancement_key = 'big'"))
      .toEqual({ stored_messages: null });
  });
});

describe("another process holding the write lock", () => {
  it("holds a turn up only for its commit: bootstrap gives up at its short deadline, assemble does not wait", async () => {
    const { DatabaseSync } = await import("node:sqlite");
    const source = new FakeTranscriptSource([userMessage("from the transcript")]);
    const { newEngine, db, config } = createTestEngine({ transcriptSource: source });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t0", messages: [userMessage("before"), assistantMessage("ok")] });
    const other = new DatabaseSync(config.databasePath, { timeout: 0 });
    other.exec("BEGIN IMMEDIATE");
    const release = setTimeout(() => other.exec("COMMIT"), 3_500);
    try {
      const engine = newEngine();
      const bootstrap = await engine.bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
      expect(bootstrap).toMatchObject({ bootstrapped: false, reason: expect.stringMatching(/stayed locked .* for 2000 ms/) });
      const assembled = await engine.assemble({ ...SESSION, messages: [], tokenBudget: 10_000 });
      expect(JSON.stringify(assembled.messages)).toContain("before"); // reads are not blocked by a writer (WAL)
      // The commit waits for the lock (released after 3.5 s) and stores the turn.
      expect(await engine.commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage("during the lock")] })).toEqual({ status: "committed" });
      expect(count(db, "SELECT count(*) AS n FROM messages WHERE content = 'during the lock'")).toBe(1);
      // The next turn's bootstrap brings what the first could not.
      expect(await newEngine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey })).toMatchObject({ bootstrapped: true, importedMessages: 1 });
    } finally {
      clearTimeout(release);
      if (other.isTransaction) other.exec("COMMIT");
      other.close();
    }
  });
});

describe("a database file deleted or replaced under the process", () => {
  /** Through the plugin's entry: every engine opens its services, as OpenClaw's per-turn factory does. */
  async function plugin(transcript: AgentMessage[] = []) {
    const source = new FakeTranscriptSource(transcript);
    const databasePath = join(tempDir(), "lcm.db");
    const api = new FakePluginApi({ databasePath });
    registerPlugin(api, { transcriptSource: source });
    return { api, source, databasePath, rows: () => openSharedDatabase(databasePath).all<{ content: string }>(
      "SELECT content FROM messages ORDER BY created_at, seq").map((row) => row.content) };
  }

  it("stops acknowledging into a deleted file, opens the path again, and gets the history back from the transcript", async () => {
    const first = [userMessage("first question"), assistantMessage("first answer")];
    const { api, source, databasePath, rows } = await plugin([...first]);
    await api.engine().commitTurn({ ...SESSION, advancementKey: "t1", messages: first });
    const during = api.engine(); // the turn running when the file is deleted
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${databasePath}${suffix}`, { force: true });
    const second = [userMessage("second question"), assistantMessage("second answer")];
    await expect(during.commitTurn({ ...SESSION, advancementKey: "t2", messages: second })).rejects.toMatchObject({
      code: "storage", message: expect.stringMatching(/was deleted while LCM had it open/),
    });
    // The host commits the turn again before the next one, on a new engine: into a new file at the path.
    source.messages.push(...second);
    expect(await api.engine().commitTurn({ ...SESSION, advancementKey: "t2", messages: second })).toEqual({ status: "committed" });
    await api.engine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect(rows()).toEqual(["first question", "first answer", "second question", "second answer"]);
  });

  it("keeps what the write-ahead log held when the -wal file is deleted, and goes on in a new one", async () => {
    const { api, databasePath, rows } = await plugin();
    await api.engine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage("kept in the WAL")] });
    const during = api.engine();
    rmSync(`${databasePath}-wal`);
    await expect(during.commitTurn({ ...SESSION, advancementKey: "t2", messages: [userMessage("next")] })).rejects.toMatchObject({
      code: "storage", message: expect.stringMatching(/write-ahead log/),
    });
    expect(await api.engine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [userMessage("next")] })).toEqual({ status: "committed" });
    expect(rows()).toEqual(["kept in the WAL", "next"]);
  });

  it("opens a replaced file for the next turn instead of writing into the old one", async () => {
    const { copyFileSync } = await import("node:fs");
    const { api, databasePath, rows } = await plugin();
    await api.engine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage("before the swap")] });
    const backup = `${databasePath}.copy`;
    openSharedDatabase(databasePath).raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    copyFileSync(databasePath, backup);
    rmSync(databasePath);
    copyFileSync(backup, databasePath); // an operator restored a backup: same bytes, another file
    expect(await api.engine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [userMessage("after the swap")] }))
      .toEqual({ status: "committed" });
    expect(rows()).toEqual(["before the swap", "after the swap"]);
  });
});
