/**
 * A turn is acknowledged only when it is stored (issue 13). The store is made to refuse writes the way a full disk
 * does (SQLite's max_page_count gives SQLITE_FULL deterministically): commitTurn then throws, so OpenClaw keeps the
 * turn in its outbox, and the retry OpenClaw makes with the same advancement key stores it exactly once, resuming a
 * turn too large for one transaction where it stopped.
 */
import { describe, expect, it } from "vitest";
import { CHUNK_MESSAGES } from "../../src/store/sqlite/sqlite-store.js";
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
    // Fail the third chunk: let the first two in, then refuse to grow.
    let ticks = 0;
    const timer = setInterval(() => {
      ticks++;
      if (ticks === 2) fillDisk(db);
    }, 0);
    const failed = newEngine().commitTurn({ ...SESSION, advancementKey: "big", messages });
    await expect(failed).rejects.toMatchObject({ code: "storage" });
    clearInterval(timer);
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
