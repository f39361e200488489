/**
 * Which sessions LCM stores, serves without storing, or leaves alone (issue 16): the filter itself, the defaults
 * against OpenClaw's own session-key shapes, and the engine and tools through the plugin.
 */
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { planCarryOver } from "../../src/sessions/session-lifecycle.js";
import { globToRegExp, SessionFilter } from "../../src/sessions/session-filter.js";
import plugin from "../../src/plugin.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

describe("session patterns", () => {
  it("match whole keys, case-insensitively, with * for any characters (colons included) and ? for one", () => {
    expect(globToRegExp("agent:*:cron:*").test("agent:main:cron:nightly:run:8821")).toBe(true);
    expect(globToRegExp("agent:*:cron:*").test("agent:main:main")).toBe(false);
    expect(globToRegExp("*:heartbeat").test("agent:main:main:HEARTBEAT")).toBe(true);
    expect(globToRegExp("agent:ops?:main").test("agent:ops1:main")).toBe(true);
    expect(globToRegExp("agent:(x).main").test("agent:(x).main")).toBe(true); // regex characters are literal
  });

  it("default to cron jobs and sub-agents kept stateless, heartbeats and memory helpers ignored", () => {
    const filter = new SessionFilter(resolveConfig({}, {}));
    expect(filter.treatmentOf("agent:main:main")).toBe("store");
    expect(filter.treatmentOf("agent:main:telegram:group:-100123")).toBe("store");
    expect(filter.treatmentOf("agent:main:cron:nightly")).toBe("stateless");
    expect(filter.treatmentOf("agent:main:cron:nightly:run:8821")).toBe("stateless");
    expect(filter.treatmentOf("agent:main:subagent:lcm-expand-1")).toBe("stateless");
    expect(filter.treatmentOf("agent:main:main:heartbeat")).toBe("ignore");
    expect(filter.treatmentOf("agent:main:internal-session-effects:flush-1")).toBe("ignore");
    expect(filter.treatmentOf("agent:main:dreaming-narrative-2026-11-23")).toBe("ignore");
    expect(filter.treatmentOf(undefined)).toBe("store");
  });

  it("ignore wins over stateless, and empty lists store everything", () => {
    expect(new SessionFilter({ ignoreSessionPatterns: ["agent:*"], statelessSessionPatterns: ["agent:*"] }).treatmentOf("agent:a:b")).toBe("ignore");
    expect(new SessionFilter({ ignoreSessionPatterns: [], statelessSessionPatterns: [] }).treatmentOf("agent:main:cron:x")).toBe("store");
  });
});

describe("sessions LCM does not store", () => {
  function setup() {
    const databasePath = tempDatabasePath();
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    return { api, db: openSharedDatabase(databasePath) };
  }
  const cron = { sessionId: "s-cron", sessionKey: "agent:main:cron:nightly:run:1" };
  const heartbeat = { sessionId: "s-hb", sessionKey: "agent:main:main:heartbeat" };

  it("a stateless session's turns are acknowledged, served with OpenClaw's own messages, and never stored", async () => {
    const { api, db } = setup();
    const messages = [userMessage("nightly digest"), assistantMessage("done")];
    expect(await api.engine().commitTurn({ ...cron, advancementKey: "t1", messages })).toEqual({ status: "committed" });
    const assembled = await api.engine().assemble({ ...cron, messages, tokenBudget: 10_000 });
    expect(assembled).toEqual({ messages, estimatedTokens: 0 });
    expect(await api.engine().bootstrap({ ...cron, sessionFile: cron.sessionKey })).toMatchObject({ bootstrapped: false, reason: expect.stringMatching(/statelessSessionPatterns/) });
    expect(db.get<{ n: number }>("SELECT count(*) AS n FROM conversations")!.n).toBe(0);
  });

  it("a stateless session keeps the recall tools (to read the agent's stored conversations); an ignored one has none", () => {
    const { api } = setup();
    expect(api.tool("lcm_grep", { agentId: "main", ...cron }).name).toBe("lcm_grep");
    expect(() => api.tool("lcm_grep", { agentId: "main", ...heartbeat })).toThrow(/No tool "lcm_grep"/);
  });

  it("compaction of a session LCM does not store is OpenClaw's own", async () => {
    const calls: unknown[] = [];
    const databasePath = tempDatabasePath();
    const api = new FakePluginApi({ databasePath });
    plugin.register(api, {
      loadCompactionDelegate: async () => ({ delegate: async (params) => {
        calls.push(params);
        return { ok: true, compacted: true, reason: "host compacted" };
      } }),
    });
    const result = await api.engine().compact({ ...heartbeat, force: true });
    expect(result).toMatchObject({ ok: true, compacted: true, reason: "host compacted" });
    expect(calls).toHaveLength(1);
  });
});

describe("the carry-over into a new session", () => {
  const item = (ordinal: number, depth: number | null, tokenCount: number) =>
    ({ ordinal, depth, tokenCount, messageId: depth === null ? ordinal : null, summaryRowId: depth === null ? null : ordinal });

  it("takes the deepest summaries first, newest first within a depth, while they fit; never raw messages", () => {
    // depth 2 (300) fits; depth 1 newest (250) would pass 500 → skipped; depth 1 older (150) fits: 450 of 500.
    const items = [item(1, 2, 300), item(2, 1, 150), item(3, 1, 250), item(4, null, 10), item(5, 0, 100)];
    expect(planCarryOver(items, 500)).toEqual([1, 2]);
    expect(planCarryOver(items, 0)).toEqual([]);
    expect(planCarryOver([item(1, null, 5)], 1_000)).toEqual([]);
  });
});
