/**
 * A turn is acknowledged only when it is stored, on PostgreSQL too (issue 13, issue 28). The server is made to refuse
 * message rows past a seq the way a full disk does (a test trigger raising SQLSTATE 53100): commitTurn then throws a
 * storage error, so OpenClaw keeps the turn in its outbox, and the retry with the same advancement key, from this
 * gateway or another, stores the rest of a turn too large for one transaction exactly once.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import { CHUNK_MESSAGES } from "../../src/store/turn-chunks.js";
import { openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };

/** Message rows with a seq above `afterSeq` are refused as by a full disk until `allow()`. */
async function refuseMessagesAfter(backend: PostgresBackend, afterSeq: number): Promise<{ allow: () => Promise<void> }> {
  await backend.database.run("CREATE TABLE test_refuse (after_seq BIGINT NOT NULL)");
  await backend.database.run(`CREATE FUNCTION test_refuse_messages() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM test_refuse WHERE NEW.seq > after_seq) THEN
        RAISE EXCEPTION 'could not extend file (test): No space left on device' USING ERRCODE = '53100';
      END IF;
      RETURN NEW;
    END $$`);
  await backend.database.run("CREATE TRIGGER test_refuse BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION test_refuse_messages()");
  await backend.database.run("INSERT INTO test_refuse (after_seq) VALUES ($1)", [afterSeq]);
  return { allow: async () => void (await backend.database.run("DELETE FROM test_refuse")) };
}

describe("commitTurn on PostgreSQL when the server cannot take the turn", () => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend("postgres");
  });
  afterEach(async () => {
    await opened.close();
  });

  it("throws a storage error, keeps the chunks stored before, and stores the rest once when another gateway retries", async () => {
    const backend = opened.backend as PostgresBackend;
    const { newEngine, logger } = createTestEngine({ backend });
    const total = CHUNK_MESSAGES * 4 + 10;
    const messages = Array.from({ length: total }, (_, index) =>
      index % 2 === 0 ? userMessage(`question ${index} ${"x".repeat(200)}`) : assistantMessage(`answer ${index} ${"y".repeat(200)}`));
    const refusal = await refuseMessagesAfter(backend, CHUNK_MESSAGES * 2);
    await expect(newEngine().commitTurn({ ...SESSION, advancementKey: "big", messages })).rejects.toMatchObject({ code: "storage" });
    expect(logger.errors().join("\n")).toMatch(/The turn is not stored; OpenClaw keeps it in its outbox/);
    const conversation = (await backend.store.findConversation({ agentId: "main", sessionId: "s1" }))!;
    expect(conversation.messageCount).toBe(CHUNK_MESSAGES * 2);
    expect(await backend.database.row("SELECT stored_messages FROM committed_turns WHERE advancement_key = 'big'"))
      .toEqual({ stored_messages: CHUNK_MESSAGES * 2 });
    await refusal.allow();

    const other = createTestEngine({ backend: opened.reopen() });
    expect(await other.newEngine().commitTurn({ ...SESSION, advancementKey: "big", messages })).toEqual({ status: "committed" });
    expect(await newEngine().commitTurn({ ...SESSION, advancementKey: "big", messages })).toEqual({ status: "duplicate" });
    const stored = await backend.store.getMessagesBySeq(conversation.conversationId, 1, Number.MAX_SAFE_INTEGER, 100_000);
    expect(stored.map((message) => message.seq)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
    expect(stored.map((message) => message.content.split(" ").slice(0, 2).join(" ")))
      .toEqual(messages.map((message, index) => `${message.role === "user" ? "question" : "answer"} ${index}`));
    expect(await backend.database.row("SELECT stored_messages FROM committed_turns WHERE advancement_key = 'big'")).toEqual({ stored_messages: null });
  });
});
