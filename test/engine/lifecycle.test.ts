import { describe, expect, it } from "vitest";
import { closeAllDatabases } from "../../src/sqlite/connection-registry.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, conversation, toolCallMessage, toolResultMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";

function count(db: { get<T>(sql: string, ...params: never[]): T | undefined }, sql: string): number {
  return (db.get<{ n: number }>(sql) as { n: number }).n;
}

function turn(key: string, text: string): AgentMessage[] {
  return [withIdempotencyKey(userMessage(`${text} question`), `${key}:user`), assistantMessage(`${text} answer`)];
}

describe("commitTurn", () => {
  it("stores a turn once and answers a replay of the same advancement key with duplicate", async () => {
    const { newEngine, db } = createTestEngine();
    const messages = turn("run1", "first");
    expect(await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages })).toEqual({ status: "committed" });
    expect(await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages })).toEqual({ status: "duplicate" });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(2);
    expect(count(db, "SELECT count(*) AS n FROM committed_turns")).toBe(1);
  });

  it("never duplicates a message that arrives again under another advancement key", async () => {
    const { newEngine, db } = createTestEngine();
    const messages = turn("run1", "first");
    await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages });
    await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t2", messages: [...messages, userMessage("new")] });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(3);
  });

  it("recognizes a message whose key order and tool-call ids the host rewrote as the same message", async () => {
    const { newEngine, db } = createTestEngine();
    const call = toolCallMessage([{ id: "call_2", name: "read", arguments: { path: "/a", depth: 1 } }]);
    const result = toolResultMessage("call_2", "read", "contents of a", { details: { bytes: 12 } });
    await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [call, result] });
    // What assemble's history shows later: ids sanitized, details dropped, keys reordered.
    const sanitizedCall = {
      ...call,
      content: [{ type: "toolCall", name: "read", id: "call2", arguments: { depth: 1, path: "/a" } }],
    };
    const sanitizedResult: AgentMessage = { ...result, toolCallId: "call2" };
    delete sanitizedResult.details;
    await newEngine().ingestBatch({ sessionId: "s1", messages: [sanitizedCall, sanitizedResult] });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(2);
  });

  it("stores the excluded custom entry of a tool turn but never assembles it", async () => {
    const { newEngine, db } = createTestEngine();
    const nested: AgentMessage = {
      role: "custom", customType: "openclaw.nested-tool.v1", display: true, content: "", excludeFromContext: true,
      timestamp: Date.now(), idempotencyKey: "scope:nested",
    };
    await newEngine().commitTurn({
      sessionId: "s1", advancementKey: "t1",
      messages: [userMessage("go"), toolCallMessage([{ id: "c1", name: "t", arguments: {} }]), nested, toolResultMessage("c1", "t", "ok"), assistantMessage("done")],
    });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(5);
    const assembled = await newEngine().assemble({ sessionId: "s1", messages: [] });
    expect(assembled.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
  });

  it("keeps conversations of different sessions apart and owned by the agent in the session key", async () => {
    const { newEngine, store } = createTestEngine();
    await newEngine().commitTurn({ sessionId: "a", sessionKey: "agent:ops:main", advancementKey: "t1", messages: turn("r1", "ops") });
    await newEngine().commitTurn({ sessionId: "b", sessionKey: "agent:main:main", advancementKey: "t1", messages: turn("r2", "main") });
    expect((await store.findConversation({ agentId: "ops", sessionId: "a" }))?.agentId).toBe("ops");
    expect((await store.findConversation({ agentId: "main", sessionId: "b" }))?.agentId).toBe("main");
    const assembled = await newEngine().assemble({ sessionId: "a", sessionKey: "agent:ops:main", messages: [] });
    expect(JSON.stringify(assembled.messages)).toContain("ops question");
    expect(JSON.stringify(assembled.messages)).not.toContain("main question");
  });

  it("ignores heartbeat turns", async () => {
    const { newEngine, db } = createTestEngine();
    await newEngine().commitTurn({ sessionId: "s1", advancementKey: "hb", messages: turn("r", "beat"), isHeartbeat: true });
    await newEngine().ingest({ sessionId: "s1", message: userMessage("beat"), isHeartbeat: true });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(0);
  });
});

describe("ingest, ingestBatch and afterTurn (non-durable hosts)", () => {
  it("store through the same path and skip what is already stored", async () => {
    const { newEngine, db } = createTestEngine();
    const messages = conversation(3);
    expect(await newEngine().ingest({ sessionId: "s1", message: messages[0]! })).toEqual({ ingested: true });
    expect(await newEngine().ingest({ sessionId: "s1", message: messages[0]! })).toEqual({ ingested: false });
    expect(await newEngine().ingestBatch({ sessionId: "s1", messages: messages.slice(0, 4) })).toEqual({ ingestedCount: 3 });
    await newEngine().afterTurn({ sessionId: "s1", sessionFile: "", messages, prePromptMessageCount: 4 });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(6);
    const seqs = db.all<{ seq: number }>("SELECT seq FROM messages ORDER BY message_id").map((row) => row.seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe("assemble imports host history", () => {
  it("imports the host's history into an empty conversation once", async () => {
    const { newEngine, db } = createTestEngine();
    const history = conversation(4);
    const first = await newEngine().assemble({ sessionId: "s1", messages: history });
    expect(first.messages).toEqual(history.map((message) => expect.objectContaining({ role: message.role })));
    await newEngine().assemble({ sessionId: "s1", messages: history });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(8);
  });

  it("appends only what follows the newest message it already has", async () => {
    const { newEngine, db } = createTestEngine();
    const history = conversation(4);
    await newEngine().assemble({ sessionId: "s1", messages: history.slice(0, 4) });
    await newEngine().assemble({ sessionId: "s1", messages: history.slice(2) }); // host view capped: older ones gone
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(8);
    const contents = db.all<{ content: string }>("SELECT content FROM messages ORDER BY seq").map((row) => row.content);
    expect(contents.at(-1)).toContain("turn 4 answer");
  });

  it("leaves history of durable hosts to commitTurn and bootstrap", async () => {
    const { newEngine, db } = createTestEngine();
    await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages: turn("r1", "one") });
    await newEngine().assemble({ sessionId: "s1", messages: [...turn("r1", "other view")] });
    expect(count(db, "SELECT count(*) AS n FROM messages")).toBe(2);
  });
});

describe("restart", () => {
  it("finds every stored turn after the connection is closed and reopened", async () => {
    const setup = createTestEngine();
    for (let index = 1; index <= 5; index++) {
      await setup.newEngine().commitTurn({ sessionId: "s1", advancementKey: `t${index}`, messages: turn(`r${index}`, `turn${index}`) });
    }
    closeAllDatabases();
    const again = createTestEngine({ databasePath: setup.config.databasePath });
    const engine = again.newEngine();
    expect(await engine.commitTurn({ sessionId: "s1", advancementKey: "t3", messages: turn("r3", "turn3") })).toEqual({ status: "duplicate" });
    const assembled = await engine.assemble({ sessionId: "s1", messages: [] });
    expect(assembled.messages).toHaveLength(10);
  });
});
