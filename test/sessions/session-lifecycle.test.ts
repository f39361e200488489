/**
 * New sessions, archives and ended sessions (issue 16, specs/016-session-lifecycle.md), through the plugin's public
 * surface: OpenClaw's `session_end` hook, its session records, the engine's hooks, the recall tools and /lcm status.
 * OpenClaw 2026.9.6 resets a session in place (same key, same session id, a new sessionStartedAt).
 */
import { describe, expect, it } from "vitest";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import plugin from "../../src/plugin.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { FakeTranscriptSource } from "../fakes/fake-transcript-source.js";
import { assistantMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";
import { textOf } from "../helpers/recall.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

const SESSION = { sessionId: "s-life", sessionKey: "agent:main:life" };
const CONTEXT = { agentId: "main", ...SESSION };
const STARTED = Date.UTC(2026, 10, 1, 7, 0, 0);

/** A plugin on a fresh database with small compaction sizes, so a few turns make summaries. */
function setup(config: Record<string, unknown> = {}, transcript = new FakeTranscriptSource()) {
  const databasePath = tempDatabasePath();
  const api = new FakePluginApi(
    { databasePath, freshTailCount: 2, leafChunkTokens: 256, leafMinFanout: 2, leafTargetTokens: 40, condensedMinFanout: 2, ...config },
    { llm: new RecordingLlm(() => "summary of an earlier stretch") },
  );
  api.sessionEntries.set(SESSION.sessionKey, { sessionId: SESSION.sessionId, sessionStartedAt: STARTED });
  plugin.register(api, { transcriptSource: transcript });
  const db = openSharedDatabase(databasePath);
  let turn = 0;
  return {
    api, db, transcript,
    async commit(messages: AgentMessage[]) {
      await api.engine().commitTurn({ ...SESSION, advancementKey: `t${++turn}`, messages });
    },
    /** Ten turns, each mentioning its own word, then a forced compaction: summaries plus a raw tail. */
    async history() {
      for (let index = 1; index <= 10; index++) {
        await this.commit([userMessage(`turn ${index} mentions marker${index} ${"word ".repeat(40)}`), assistantMessage(`reply ${index}`)]);
      }
      await api.engine().compact({ ...SESSION, force: true, compactionTarget: "threshold", tokenBudget: 2_000 });
    },
    assemble: () => api.engine().assemble({ ...SESSION, messages: [], tokenBudget: 20_000 }),
    grep: async (params: Record<string, unknown>) => textOf(await api.tool("lcm_grep", CONTEXT).execute("c1", params)),
    status: async () => (await api.command("lcm").handler({ ...CONTEXT, args: "status" })).text,
    conversations: () => db.all<{ conversation_id: number; archived_at: number | null; ended_at: number | null; end_reason: string | null; previous_conversation_id: number | null }>(
      "SELECT conversation_id, archived_at, ended_at, end_reason, previous_conversation_id FROM conversations ORDER BY conversation_id",
    ),
    /** OpenClaw's /new or /reset: a new sessionStartedAt on the record, then its session_end hook. */
    async endSession(reason: string) {
      api.sessionEntries.set(SESSION.sessionKey, { sessionId: SESSION.sessionId, sessionStartedAt: Date.now() });
      await api.emit("session_end", { ...SESSION, reason, nextSessionId: SESSION.sessionId }, { agentId: "main" });
    },
  };
}

/** The visible text of assembled messages, one per line. */
const textsOf = (messages: AgentMessage[]) => messages.map((message) => typeof message.content === "string"
  ? message.content
  : (message.content as { text?: string }[]).map((block) => block.text ?? "").join("")).join("\n");

describe("after /new", () => {
  it("the model starts fresh with at most the carry-over of the earlier session's top summaries", async () => {
    const env = setup({ newSessionCarryOverTokens: 200 });
    await env.history();
    const before = await env.assemble();
    expect(textsOf(before.messages)).toMatch(/<summary id="sum_/);
    await env.endSession("new");
    const after = await env.assemble();
    // Only summaries, within 200 tokens (one condensed summary of 148); none of the earlier raw turns.
    expect(after.messages.length).toBeGreaterThan(0);
    expect(after.messages.every((message) => textsOf([message]).includes("<summary id="))).toBe(true);
    expect(after.estimatedTokens).toBeLessThanOrEqual(200 + 200 /* the system prompt addition */);
    expect(textsOf(after.messages)).not.toMatch(/marker10/);
  });

  it("carries nothing when the setting is 0, and keeps every earlier message searchable with lcm_grep", async () => {
    const env = setup({ newSessionCarryOverTokens: 0 });
    await env.history();
    await env.endSession("new");
    expect((await env.assemble()).messages).toEqual([]);
    expect(await env.grep({ pattern: "marker10" })).toMatch(/marker10/);
    expect(await env.grep({ pattern: "marker1\\b" })).toMatch(/marker1/);
  });

  it("continues the same conversation: the next turns are stored after it, and /lcm status says what happened", async () => {
    const env = setup({ newSessionCarryOverTokens: 0 });
    await env.history();
    await env.endSession("new");
    await env.commit([userMessage("first turn of the new session"), assistantMessage("hello again")]);
    const assembled = await env.assemble();
    expect(textsOf(assembled.messages)).toMatch(/first turn of the new session/);
    expect(textsOf(assembled.messages)).not.toMatch(/marker/);
    expect(env.conversations()).toHaveLength(1);
    expect(await env.status()).toMatch(/New session: (just now|\d+ s ago) \(\/new\): nothing carried over; the \d+ earlier messages stay searchable/);
  });

  it("is applied once however often the host reports it", async () => {
    const env = setup({ newSessionCarryOverTokens: 0 });
    await env.history();
    await env.endSession("new");
    await env.commit([userMessage("after the reset"), assistantMessage("ok")]);
    await env.api.emit("session_end", { ...SESSION, reason: "new" }, { agentId: "main" });
    expect(textsOf((await env.assemble()).messages)).toMatch(/after the reset/);
  });

  it("is noticed by the next turn when no hook reported it (the host's sessionStartedAt moved)", async () => {
    const env = setup({ newSessionCarryOverTokens: 0 });
    await env.history();
    await env.assemble(); // the turn records the session's start
    env.api.sessionEntries.set(SESSION.sessionKey, { sessionId: SESSION.sessionId, sessionStartedAt: Date.now() + 1_000 });
    expect((await env.assemble()).messages).toEqual([]);
    expect(await env.status()).toMatch(/New session: .*\(a new session\)/);
  });

  it("also follows an idle or daily reset the same way", async () => {
    const env = setup({ newSessionCarryOverTokens: 0 });
    await env.history();
    await env.endSession("idle");
    expect((await env.assemble()).messages).toEqual([]);
  });
});

describe("after /reset", () => {
  it("archives the conversation as it is and continues the session in a new one; recall reaches the archive on request", async () => {
    const transcript = new FakeTranscriptSource();
    const env = setup({}, transcript);
    await env.history();
    // What the host's transcript holds so far, read by a bootstrap before the reset.
    transcript.messages.push(userMessage("already imported before the reset"));
    await env.api.engine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    await env.endSession("reset");
    const [archived, live] = env.conversations();
    expect(archived).toMatchObject({ archived_at: expect.any(Number) });
    expect(live).toMatchObject({ archived_at: null, previous_conversation_id: archived!.conversation_id });
    // The transcript's earlier messages are not imported again into the new conversation.
    await env.api.engine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect((await env.assemble()).messages).toEqual([]);
    expect(await env.grep({ pattern: "marker10" })).not.toMatch(/marker10/);
    expect(await env.grep({ pattern: "marker10", allConversations: true })).toMatch(/marker10/);
    expect(await env.status()).toMatch(new RegExp(`archived as conversation ${archived!.conversation_id}`));
    expect(await env.status()).toMatch(/Database: 2 conversations \(1 archived\)/);
  });
});

describe("a session OpenClaw deleted", () => {
  it("leaves its conversation stored and marked ended, not orphaned", async () => {
    const env = setup();
    await env.commit([userMessage("soon deleted"), assistantMessage("ok")]);
    await env.api.emit("session_end", { ...SESSION, reason: "deleted" }, { agentId: "main" });
    expect(env.conversations()).toMatchObject([{ ended_at: expect.any(Number), end_reason: "deleted" }]);
    expect(await env.grep({ pattern: "soon deleted", allConversations: true })).toMatch(/soon deleted/);
  });

  it("is reopened when the same session stores again", async () => {
    const env = setup();
    await env.commit([userMessage("before"), assistantMessage("ok")]);
    await env.api.emit("session_end", { ...SESSION, reason: "deleted" }, { agentId: "main" });
    await env.commit([userMessage("after"), assistantMessage("ok")]);
    expect(env.conversations()).toMatchObject([{ ended_at: null, end_reason: null }]);
  });
});

describe("/lcm doctor all", () => {
  it("marks conversations whose OpenClaw session is gone or holds another session now, and keeps them", async () => {
    const env = setup();
    await env.commit([userMessage("still here"), assistantMessage("ok")]);
    const gone = { sessionId: "s-gone", sessionKey: "agent:main:gone" };
    await env.api.engine().commitTurn({ ...gone, advancementKey: "g1", messages: [userMessage("deleted while the gateway was down")] });
    const report = (await env.api.command("lcm").handler({ ...CONTEXT, args: "doctor all" })).text;
    expect(report).toMatch(/Sessions: 1 of 2 conversations checked belong to a session OpenClaw no longer has; marked ended/);
    expect(env.db.all("SELECT session_key, end_reason FROM conversations ORDER BY conversation_id"))
      .toEqual([{ session_key: SESSION.sessionKey, end_reason: null }, { session_key: gone.sessionKey, end_reason: "gone" }]);
  });
});

describe("session_end that LCM has nothing to do with", () => {
  it("changes nothing for a shutdown, nor for a session it does not store", async () => {
    const env = setup({ newSessionCarryOverTokens: 0 });
    await env.history();
    await env.api.emit("session_end", { ...SESSION, reason: "shutdown" }, { agentId: "main" });
    await env.api.emit("session_end", { sessionId: "s-cron", sessionKey: "agent:main:cron:nightly:run:7", reason: "new" }, {});
    expect(textsOf((await env.assemble()).messages)).toMatch(/marker10/);
    expect(env.api.logs.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
  });
});

describe("host commands", () => {
  it("stores /lcm status and the gateway's answer but keeps both out of the context", async () => {
    const transcript = new FakeTranscriptSource([
      withIdempotencyKey(userMessage("a real question"), "run-1:user"), assistantMessage("a real answer"),
      withIdempotencyKey(userMessage("/lcm status"), "chat-1:user"),
      assistantMessage("LCM status · conversation 1", { provider: "openclaw", model: "gateway-injected", idempotencyKey: "chat-1" }),
      withIdempotencyKey(userMessage("/compact focus on the plan"), "chat-2:user"),
      assistantMessage("⚙️ Compacted (4k → 1k)", { provider: "openclaw", model: "gateway-injected", idempotencyKey: "chat-2" }),
    ]);
    const env = setup({}, transcript);
    await env.api.engine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(6);
    const seen = textsOf((await env.assemble()).messages);
    expect(seen).toMatch(/a real question/);
    expect(seen).not.toMatch(/\/lcm status|LCM status|\/compact|Compacted/);
  });

  it("takes a command out of the context when its answer arrives in a later import", async () => {
    const transcript = new FakeTranscriptSource([withIdempotencyKey(userMessage("/lcm doctor"), "chat-9:user")]);
    const env = setup({}, transcript);
    await env.api.engine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect(textsOf((await env.assemble()).messages)).toMatch(/\/lcm doctor/);
    transcript.messages.push(assistantMessage("LCM doctor: no problems", { provider: "openclaw", model: "gateway-injected", idempotencyKey: "chat-9" }));
    await env.api.engine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect((await env.assemble()).messages).toEqual([]);
  });

  it("keeps a slash-like message the model answered: only a gateway answer makes it a command", async () => {
    const transcript = new FakeTranscriptSource([userMessage("/usr/bin is missing, why?"), assistantMessage("Because …")]);
    const env = setup({}, transcript);
    await env.api.engine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect(textsOf((await env.assemble()).messages)).toMatch(/usr\/bin is missing/);
  });
});
