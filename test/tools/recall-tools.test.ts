import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentTool, ToolFactory } from "../../src/host/openclaw-types.js";
import { DECLARED_TOOLS } from "../../src/manifest.js";
import plugin from "../../src/plugin.js";
import { RECALL_TOOLS } from "../../src/tools/recall-tools.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { tempDir } from "../helpers/temp-dir.js";

const MAIN_CONTEXT = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" };
const HELPER_CONTEXT = { agentId: "main", sessionKey: "agent:main:subagent:lcm-expand-00000000000000ab", sessionId: "c1" };

function resolve(api: FakePluginApi, context: Record<string, unknown>): AgentTool[] {
  return api.tools.flatMap((entry) => {
    const tool = typeof entry === "function" ? (entry as ToolFactory)(context) : entry;
    return tool ? (Array.isArray(tool) ? tool : [tool]) : [];
  });
}

describe("recall tool registration", () => {
  it("declares exactly the tools it registers in the manifest", () => {
    expect([...DECLARED_TOOLS].sort()).toEqual(RECALL_TOOLS.map((tool) => tool.name).sort());
  });

  it("gives the main agent grep, describe and expand_query, and a helper grep, describe and expand", () => {
    const api = new FakePluginApi({ databasePath: join(tempDir(), "lcm.db") });
    plugin.register(api);
    expect(resolve(api, MAIN_CONTEXT).map((tool) => tool.name)).toEqual(["lcm_grep", "lcm_describe", "lcm_expand_query"]);
    expect(resolve(api, HELPER_CONTEXT).map((tool) => tool.name)).toEqual(["lcm_grep", "lcm_describe", "lcm_expand"]);
  });

  it("keeps every tool out of Tool Search, with plain JSON Schema parameters and enums every provider accepts", () => {
    const api = new FakePluginApi({ databasePath: join(tempDir(), "lcm.db") });
    plugin.register(api);
    for (const tool of [...resolve(api, MAIN_CONTEXT), ...resolve(api, HELPER_CONTEXT)]) {
      expect(tool.catalogMode).toBe("direct-only");
      const schema = JSON.parse(JSON.stringify(tool.parameters)) as { type: string; properties: Record<string, { anyOf?: unknown }> };
      expect(schema.type).toBe("object");
      expect(Object.values(schema.properties).some((property) => property.anyOf !== undefined)).toBe(false);
      expect(tool.description.length).toBeGreaterThan(200);
    }
  });

  it("costs the main agent's requests at most 1.3k tokens of tool schemas by OpenClaw's measure (an 8k window has 1.5k left)", () => {
    const api = new FakePluginApi({ databasePath: join(tempDir(), "lcm.db") });
    plugin.register(api);
    // As OpenClaw sends them to an OpenAI-style endpoint, counted as it counts before sending: characters / 3.2.
    const sent = resolve(api, MAIN_CONTEXT).map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
    expect(Math.ceil(JSON.stringify(sent).length / 3.2)).toBeLessThanOrEqual(1_300);
  });

  it("opens no database while tools are listed", () => {
    const databasePath = join(tempDir(), "nested", "lcm.db");
    const api = new FakePluginApi({ databasePath }, { registrationMode: "tool-discovery" });
    plugin.register(api);
    resolve(api, MAIN_CONTEXT);
    resolve(api, {});
    expect(existsSync(databasePath)).toBe(false);
  });
});
