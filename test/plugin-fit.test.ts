/**
 * The plugin in ordinary OpenClaw setups (issue 16): recall tools offered under the coding and messaging profiles,
 * settings changed while the gateway runs applied without a plugin reload, an invalid LCM_* variable ignored with a
 * warning instead of losing the engine, and the database connections released when the last registration retires.
 */
import { describe, expect, it, vi } from "vitest";
import { resolveConfig } from "../src/config.js";
import { buildManifest, DECLARED_TOOLS } from "../src/manifest.js";
import plugin from "../src/plugin.js";
import { ConnectionHolds } from "../src/sqlite/connection-holds.js";
import { FakePluginApi } from "./fakes/fake-plugin-api.js";
import { tempDatabasePath } from "./helpers/temp-dir.js";

describe("recall tools and tool profiles", () => {
  it("the manifest contributes every recall tool to the coding, messaging and full profiles", () => {
    const manifest = buildManifest() as { toolMetadata: Record<string, { profiles: string[] }>; contracts: { tools: string[] } };
    expect(Object.keys(manifest.toolMetadata).sort()).toEqual([...manifest.contracts.tools].sort());
    for (const tool of DECLARED_TOOLS) expect(manifest.toolMetadata[tool]!.profiles).toEqual(["coding", "messaging", "full"]);
  });

  it("registers a catalog name and one-line description for each tool", () => {
    const api = new FakePluginApi({ databasePath: tempDatabasePath() });
    plugin.register(api);
    expect(api.toolMetadata.map((entry) => entry.toolName).sort()).toEqual([...DECLARED_TOOLS].sort());
    for (const entry of api.toolMetadata) {
      expect(entry.displayName).toBeTruthy();
      expect(entry.description!.length).toBeLessThan(140);
    }
  });
});

describe("settings changed while the gateway runs", () => {
  it("are a dynamic read for OpenClaw: editing them does not retire and reload the plugin", () => {
    expect(plugin.reload).toEqual({ noopPrefixes: ["plugins.entries.lcm.config"] });
  });

  it("apply from the next use, and the log says which changed", async () => {
    const databasePath = tempDatabasePath();
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    const heartbeat = { agentId: "main", sessionKey: "agent:main:ops", sessionId: "s-ops" };
    expect(api.tool("lcm_grep", heartbeat).name).toBe("lcm_grep");
    api.setLiveConfig({ databasePath, ignoreSessionPatterns: ["agent:main:ops"] });
    expect(() => api.tool("lcm_grep", heartbeat)).toThrow(/No tool/);
    expect(api.logs.map((line) => line.message).join("\n"))
      .toMatch(/Settings changed \(ignoreSessionPatterns .* → \["agent:main:ops"\]\): applied from the next turn, no restart needed/);
  });

  it("switched off, the engine steps aside for OpenClaw's own; switched on again, LCM serves the next turn", async () => {
    const databasePath = tempDatabasePath();
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    api.setLiveConfig({ databasePath, enabled: false });
    expect(api.engine().info).toMatchObject({ ownsCompaction: false });
    api.setLiveConfig({ databasePath });
    expect(api.engine().info).toMatchObject({ ownsCompaction: true });
  });

  it("a change LCM cannot use keeps the previous settings and says so", () => {
    const databasePath = tempDatabasePath();
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    api.setLiveConfig({ databasePath, freshTailCount: -1 });
    expect(api.engine().info).toMatchObject({ ownsCompaction: true });
    expect(api.errors().join("\n")).toMatch(/The new LCM settings cannot be used: .*freshTailCount.* LCM keeps the previous settings/);
  });
});

describe("an invalid LCM_* environment variable", () => {
  it("is ignored with a warning naming it: the engine is registered with the plugin config's value", () => {
    vi.stubEnv("LCM_FRESH_TAIL_COUNT", "lots");
    try {
      const api = new FakePluginApi({ databasePath: tempDatabasePath(), freshTailCount: 6 });
      plugin.register(api);
      expect([...api.engines.keys()]).toEqual(["lcm"]);
      const warning = api.logs.find((line) => line.level === "warn")?.message ?? "";
      expect(warning).toMatch(/Invalid environment variable LCM_FRESH_TAIL_COUNT: "lots"\. Expected an integer/);
      expect(warning).toMatch(/The variable is ignored: "freshTailCount" keeps its value from the plugin config or its default/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("resolveConfig reports and ignores instead of throwing when asked to", () => {
    const problems: string[] = [];
    const config = resolveConfig({ freshTailCount: 6 }, { LCM_FRESH_TAIL_COUNT: "lots", LCM_CONDENSED_MIN_FANOUT_HARD: "9" }, {
      reportProblem: (problem) => problems.push(problem),
    });
    expect(config.freshTailCount).toBe(6);
    expect(config.condensedMinFanoutHard).toBe(config.condensedMinFanout);
    expect(problems).toHaveLength(2);
  });

  it("lists parse from a comma-separated variable; none is the empty list", () => {
    expect(resolveConfig({}, { LCM_STATELESS_SESSION_PATTERNS: " agent:*:cron:* , agent:ops:* " }).statelessSessionPatterns)
      .toEqual(["agent:*:cron:*", "agent:ops:*"]);
    expect(resolveConfig({}, { LCM_IGNORE_SESSION_PATTERNS: "none" }).ignoreSessionPatterns).toEqual([]);
    expect(() => resolveConfig({ ignoreSessionPatterns: "agent:*" })).toThrow(/Expected a list of at most 100 non-empty patterns/);
  });
});

describe("database connections", () => {
  it("close when the last registration holding them is retired, once", () => {
    let closed = 0;
    const holds = new ConnectionHolds(() => closed++);
    const first = holds.hold();
    const second = holds.hold();
    first();
    first();
    expect(closed).toBe(0);
    second();
    expect(closed).toBe(1);
  });

  it("stay open for work still running when the last registration is retired, and close after it (or after the wait)", async () => {
    let closed = 0;
    const holds = new ConnectionHolds(() => closed++, 200);
    let finish!: () => void;
    holds.whileBusy(new Promise<void>((resolve) => { finish = resolve; }));
    holds.hold()();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(0);
    finish();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(1);

    holds.whileBusy(new Promise<void>(() => {})); // never settles: closed after the wait
    holds.hold()();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(closed).toBe(2);
  });

  it("are held by each full registration until OpenClaw disposes it", async () => {
    const api = new FakePluginApi({ databasePath: tempDatabasePath() });
    plugin.register(api);
    expect(api.disposers).toHaveLength(1);
    await expect(api.retire()).resolves.toBeUndefined();
  });
});
