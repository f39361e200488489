/**
 * A conversation belongs to an agent (issue 13): the key that locates it is the agent and the session together,
 * so a hook or command call for one agent that carries another agent's session id reaches neither that agent's
 * history nor its counters. Through the plugin's entry (register(api)) and real SQLite.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import plugin from "../../index.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";

const ALICE = { sessionId: "shared-session", sessionKey: "agent:alice:main" };
const BOB = { sessionId: "shared-session", sessionKey: "agent:bob:main" };

async function setup() {
  const databasePath = join(tempDir(), "lcm.db");
  const api = new FakePluginApi({ databasePath });
  plugin.register(api);
  await api.engine().commitTurn({
    ...ALICE, advancementKey: "a1", messages: [userMessage("alice's secret is PLUM-7731"), assistantMessage("noted")],
  });
  return { api, db: openSharedDatabase(databasePath) };
}

describe("conversations are keyed by agent and session", () => {
  it("never assembles another agent's history for a call that carries its session id", async () => {
    const { api } = await setup();
    const assembled = await api.engine().assemble({ ...BOB, messages: [], tokenBudget: 10_000 });
    expect(JSON.stringify(assembled.messages)).not.toContain("PLUM-7731");
  });

  it("stores such a call's turn in the calling agent's own conversation", async () => {
    const { api, db } = await setup();
    await api.engine().commitTurn({ ...BOB, advancementKey: "b1", messages: [userMessage("bob's turn"), assistantMessage("ok")] });
    const rows = db.all<{ agent_id: string; message_count: number }>(
      "SELECT agent_id, message_count FROM conversations WHERE session_id = ? ORDER BY agent_id", "shared-session",
    );
    expect(rows).toEqual([{ agent_id: "alice", message_count: 2 }, { agent_id: "bob", message_count: 2 }]);
    const alice = await api.engine().assemble({ ...ALICE, messages: [], tokenBudget: 10_000 });
    expect(JSON.stringify(alice.messages)).not.toContain("bob's turn");
  });

  it("keeps one agent's advancement keys from deduplicating another's turn", async () => {
    const { api } = await setup();
    // The same advancement key under another agent is a different turn.
    expect(await api.engine().commitTurn({ ...BOB, advancementKey: "a1", messages: [userMessage("bob again")] })).toEqual({ status: "committed" });
  });

  it("shows /lcm status of the calling agent's conversation only", async () => {
    const { api } = await setup();
    const bob = (await api.command("lcm").handler({ ...BOB, agentId: "bob", args: "status", commandBody: "/lcm status" })).text;
    expect(bob).toMatch(/nothing is stored for this session yet/);
    const alice = (await api.command("lcm").handler({ ...ALICE, agentId: "alice", args: "status", commandBody: "/lcm status" })).text;
    expect(alice).toMatch(/agent alice/);
  });

  it("compacts only the calling agent's conversation", async () => {
    const { api, db } = await setup();
    const result = await api.engine().compact({ ...BOB, force: true, compactionTarget: "threshold" });
    expect(result).toMatchObject({ ok: true, compacted: false });
    const alice = db.get<{ last_compaction: string | null }>("SELECT last_compaction FROM conversations WHERE agent_id = 'alice'")!;
    expect(alice.last_compaction).toBeNull();
  });
});
