/**
 * The engine's hooks storing and reading turns (commitTurn, ingest, afterTurn, assemble's import of host history, a
 * restart) on every backend the run tests: each message stored once, in order, whichever hook brings it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import type { MessageRecord } from "../../src/records.js";
import type { LcmStore } from "../../src/store/store.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine, type TestEngineOptions } from "../helpers/engine.js";
import { assistantMessage, conversation, toolCallMessage, toolResultMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";

/** Every stored message of every conversation, each conversation's in seq order. */
async function storedMessages(store: LcmStore): Promise<MessageRecord[]> {
  const conversations = await store.listConversations();
  const lists = await Promise.all(conversations.map((row) => store.getMessagesBySeq(row.conversationId, 1, Number.MAX_SAFE_INTEGER, 1_000_000)));
  return lists.flat();
}

async function count(store: LcmStore): Promise<number> {
  return (await storedMessages(store)).length;
}

function turn(key: string, text: string): AgentMessage[] {
  return [withIdempotencyKey(userMessage(`${text} question`), `${key}:user`), assistantMessage(`${text} answer`)];
}

describe.each(backendKinds())("the engine's hooks on %s", (kind) => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
  });
  afterEach(async () => {
    await opened.close();
  });
  /** An engine on this run's backend. */
  const engineOn = (options: TestEngineOptions = {}) => createTestEngine({ ...options, backend: opened.backend });

  describe("commitTurn", () => {
    it("stores a turn once and answers a replay of the same advancement key with duplicate", async () => {
      const { newEngine, store } = engineOn();
      const messages = turn("run1", "first");
      expect(await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages })).toEqual({ status: "committed" });
      expect(await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages })).toEqual({ status: "duplicate" });
      expect(await count(store)).toBe(2);
      expect(await store.hasCommittedTurns((await store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId)).toBe(true);
    });

    it("never duplicates a message that arrives again under another advancement key", async () => {
      const { newEngine, store } = engineOn();
      const messages = turn("run1", "first");
      await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages });
      await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t2", messages: [...messages, userMessage("new")] });
      expect(await count(store)).toBe(3);
    });

    it("recognizes a message whose key order and tool-call ids the host rewrote as the same message", async () => {
      const { newEngine, store } = engineOn();
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
      expect(await count(store)).toBe(2);
    });

    it("stores the excluded custom entry of a tool turn but never assembles it", async () => {
      const { newEngine, store } = engineOn();
      const nested: AgentMessage = {
        role: "custom", customType: "openclaw.nested-tool.v1", display: true, content: "", excludeFromContext: true,
        timestamp: Date.now(), idempotencyKey: "scope:nested",
      };
      await newEngine().commitTurn({
        sessionId: "s1", advancementKey: "t1",
        messages: [userMessage("go"), toolCallMessage([{ id: "c1", name: "t", arguments: {} }]), nested, toolResultMessage("c1", "t", "ok"), assistantMessage("done")],
      });
      expect(await count(store)).toBe(5);
      const assembled = await newEngine().assemble({ sessionId: "s1", messages: [] });
      expect(assembled.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    });

    it("keeps conversations of different sessions apart and owned by the agent in the session key", async () => {
      const { newEngine, store } = engineOn();
      await newEngine().commitTurn({ sessionId: "a", sessionKey: "agent:ops:main", advancementKey: "t1", messages: turn("r1", "ops") });
      await newEngine().commitTurn({ sessionId: "b", sessionKey: "agent:main:main", advancementKey: "t1", messages: turn("r2", "main") });
      expect((await store.findConversation({ agentId: "ops", sessionId: "a" }))?.agentId).toBe("ops");
      expect((await store.findConversation({ agentId: "main", sessionId: "b" }))?.agentId).toBe("main");
      const assembled = await newEngine().assemble({ sessionId: "a", sessionKey: "agent:ops:main", messages: [] });
      expect(JSON.stringify(assembled.messages)).toContain("ops question");
      expect(JSON.stringify(assembled.messages)).not.toContain("main question");
    });

    it("ignores heartbeat turns", async () => {
      const { newEngine, store } = engineOn();
      await newEngine().commitTurn({ sessionId: "s1", advancementKey: "hb", messages: turn("r", "beat"), isHeartbeat: true });
      await newEngine().ingest({ sessionId: "s1", message: userMessage("beat"), isHeartbeat: true });
      expect(await count(store)).toBe(0);
    });
  });

  describe("ingest, ingestBatch and afterTurn (non-durable hosts)", () => {
    it("store through the same path and skip what is already stored", async () => {
      const { newEngine, store } = engineOn();
      const messages = conversation(3);
      expect(await newEngine().ingest({ sessionId: "s1", message: messages[0]! })).toEqual({ ingested: true });
      expect(await newEngine().ingest({ sessionId: "s1", message: messages[0]! })).toEqual({ ingested: false });
      expect(await newEngine().ingestBatch({ sessionId: "s1", messages: messages.slice(0, 4) })).toEqual({ ingestedCount: 3 });
      await newEngine().afterTurn({ sessionId: "s1", sessionFile: "", messages, prePromptMessageCount: 4 });
      expect(await count(store)).toBe(6);
      const seqs = (await storedMessages(store)).map((message) => message.seq);
      expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });

  describe("assemble imports host history", () => {
    it("imports the host's history into an empty conversation once", async () => {
      const { newEngine, store } = engineOn();
      const history = conversation(4);
      const first = await newEngine().assemble({ sessionId: "s1", messages: history });
      expect(first.messages).toEqual(history.map((message) => expect.objectContaining({ role: message.role })));
      await newEngine().assemble({ sessionId: "s1", messages: history });
      expect(await count(store)).toBe(8);
    });

    it("appends only what follows the newest message it already has", async () => {
      const { newEngine, store } = engineOn();
      const history = conversation(4);
      await newEngine().assemble({ sessionId: "s1", messages: history.slice(0, 4) });
      await newEngine().assemble({ sessionId: "s1", messages: history.slice(2) }); // host view capped: older ones gone
      expect(await count(store)).toBe(8);
      const contents = (await storedMessages(store)).map((message) => message.content);
      expect(contents.at(-1)).toContain("turn 4 answer");
    });

    it("leaves history of durable hosts to commitTurn and bootstrap", async () => {
      const { newEngine, store } = engineOn();
      await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages: turn("r1", "one") });
      await newEngine().assemble({ sessionId: "s1", messages: [...turn("r1", "other view")] });
      expect(await count(store)).toBe(2);
    });
  });

  describe("restart", () => {
    it("finds every stored turn after the connection is closed and reopened", async () => {
      const setup = engineOn();
      for (let index = 1; index <= 5; index++) {
        await setup.newEngine().commitTurn({ sessionId: "s1", advancementKey: `t${index}`, messages: turn(`r${index}`, `turn${index}`) });
      }
      // Another process (or this one after a restart) opens the same database with connections of its own.
      const again = createTestEngine({ backend: opened.reopen() });
      const engine = again.newEngine();
      expect(await engine.commitTurn({ sessionId: "s1", advancementKey: "t3", messages: turn("r3", "turn3") })).toEqual({ status: "duplicate" });
      const assembled = await engine.assemble({ sessionId: "s1", messages: [] });
      expect(assembled.messages).toHaveLength(10);
    });
  });
});
