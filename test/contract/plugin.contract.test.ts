/**
 * The plugin as OpenClaw drives it, on each backend: register(api) with databasePath (SQLite) or databaseUrl
 * (PostgreSQL), turns committed and replayed, compaction at a small budget, the context assembled within it, recall
 * tools finding an early detail with their default parameters, /lcm status, and a restart (a new registration on the
 * same database) that sees the same history. `npm test` runs it on SQLite, `npm run test:postgres` on PostgreSQL.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentMessage, ContextEngine } from "../../src/host/openclaw-types.js";
import plugin from "../../src/plugin.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { backendKinds, type TestBackend, openTestBackend } from "../helpers/backends.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { detailsOf, textOf } from "../helpers/recall.js";

const SESSION = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s-contract" };
/** A detail only the second turn holds: found again after compaction summarized it away. */
const EARLY_KEY = "KX-7731-VORTEX";

function turnMessages(turn: number): AgentMessage[] {
  const detail = turn === 2 ? ` The deploy key is ${EARLY_KEY}.` : "";
  return [
    userMessage(`Turn ${turn}: please look at module m${turn} and its tests.${detail} ${"Context words to fill the turn. ".repeat(12)}`),
    assistantMessage(`Turn ${turn}: module m${turn} reviewed; the tests pass and nothing else changed. ${"More words in the answer. ".repeat(12)}`),
  ];
}

describe.each(backendKinds())("the plugin on %s", (kind) => {
  let opened: TestBackend;
  let api: FakePluginApi;

  const registered = (): FakePluginApi => {
    const location = kind === "postgres" ? { databaseUrl: opened.location } : { databasePath: opened.location };
    const fake = new FakePluginApi({ ...location, freshTailCount: 4, leafMinFanout: 4, leafChunkTokens: 800 }, { llm: new RecordingLlm(() => "") });
    plugin.register(fake);
    return fake;
  };
  const engine = (): ContextEngine => api.engine();
  const commit = async (turn: number, advancementKey = `turn-${turn}`) => {
    const instance = engine();
    const result = await instance.commitTurn!({ ...SESSION, advancementKey, messages: turnMessages(turn) });
    await instance.maintain?.({ ...SESSION, runtimeContext: { tokenBudget: 2_000 } });
    await instance.dispose?.();
    return result;
  };
  const tool = (name: string) => api.tool(name, SESSION);

  beforeEach(async () => {
    opened = await openTestBackend(kind);
    api = registered();
  });
  afterEach(async () => {
    await api.retire();
    await opened.close();
  });

  it("stores each turn once, a replayed turn as a duplicate, and assembles the newest turns within the budget", async () => {
    for (let turn = 1; turn <= 3; turn++) await commit(turn);
    const replay = await commit(3, "turn-3");
    expect(replay).toMatchObject({ status: "duplicate" });
    const assembled = await engine().assemble({ sessionId: SESSION.sessionId, sessionKey: SESSION.sessionKey, messages: [], tokenBudget: 100_000 });
    const texts = assembled.messages.map((message) => JSON.stringify(message.content));
    expect(texts).toHaveLength(6);
    expect(texts[0]).toContain("Turn 1:");
    expect(texts[5]).toContain("Turn 3: module m3 reviewed");
  });

  it("compacts a long conversation into summaries, stays within a small budget, and lcm_grep still finds turn 2's detail", async () => {
    for (let turn = 1; turn <= 16; turn++) await commit(turn);
    const assembled = await engine().assemble({ sessionId: SESSION.sessionId, sessionKey: SESSION.sessionKey, messages: [], tokenBudget: 2_000 });
    expect(assembled.estimatedTokens).toBeLessThanOrEqual(2_000);
    const summaries = assembled.messages.filter((message) => JSON.stringify(message.content).includes("<summary"));
    expect(summaries.length).toBeGreaterThan(0);
    const grep = await tool("lcm_grep").execute("call-1", { pattern: EARLY_KEY });
    expect(textOf(grep)).toContain(EARLY_KEY);
    const hits = detailsOf<{ hits?: { seq?: number }[]; messages?: { seq?: number }[] }>(grep);
    expect(JSON.stringify(hits)).toContain(EARLY_KEY);
  });

  it("answers /lcm status for the session", async () => {
    for (let turn = 1; turn <= 2; turn++) await commit(turn);
    const reply = await api.command("lcm").handler({ args: "status", ...SESSION } as never);
    expect(JSON.stringify(reply)).toMatch(/4 messages|messages: 4|4 stored/);
  });

  it("sees the same history after a restart (a new registration on the same database)", async () => {
    for (let turn = 1; turn <= 3; turn++) await commit(turn);
    const before = await engine().assemble({ sessionId: SESSION.sessionId, sessionKey: SESSION.sessionKey, messages: [], tokenBudget: 100_000 });
    await api.retire();
    api = registered();
    const after = await engine().assemble({ sessionId: SESSION.sessionId, sessionKey: SESSION.sessionKey, messages: [], tokenBudget: 100_000 });
    expect(after.messages).toEqual(before.messages);
    expect(await commit(3, "turn-3")).toMatchObject({ status: "duplicate" });
  });
});
