/**
 * `openclaw lcm mcp` in the real host (issue 29): OpenClaw's own CLI starts the MCP server on the running gateway's
 * database (named by OpenClaw's config), and the MCP SDK's client drives it over stdio. That stdout carries only MCP
 * messages under OpenClaw (the descriptor's machineOutput) is proven by the client connecting at all; the needle of a
 * turn the gateway stored is found, and another agent's name is refused.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";
import { hostEnv } from "./harness/openclaw-cli.js";
import { OPENCLAW_ENTRY } from "./harness/paths.js";

const NEEDLE = "MCP-NEEDLE-3319";

describe("openclaw lcm mcp beside a running gateway", () => {
  let suite: HostSuite;
  let client: Client | null = null;
  let stderr = "";

  beforeAll(async () => {
    suite = await HostSuite.create({ name: "mcp" });
    await suite.gateway.start();
    await new HostConversation(suite, "agent:main:mcp").say(`remember this: the vault code is ${NEEDLE}`);
  });

  afterAll(async () => {
    await client?.close();
    await suite?.dispose();
  });

  it("serves the gateway's history to an MCP client over stdio", async () => {
    const env = Object.fromEntries(Object.entries(hostEnv(suite.home)).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const transport = new StdioClientTransport({
      command: process.execPath, args: [OPENCLAW_ENTRY, "lcm", "mcp", "--agent", "main"], env, cwd: suite.dir, stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: "lcm-host-test", version: "1.0.0" });
    const started = performance.now();
    await client.connect(transport, { timeout: 120_000 });
    console.log(`[mcp] openclaw lcm mcp answered initialize after ${Math.round(performance.now() - started)} ms`);
    expect(stderr).toContain(suite.database.location);

    const found = await client.callTool({ name: "lcm_grep", arguments: { pattern: NEEDLE } }, undefined, { timeout: 60_000 });
    expect(found.structuredContent).toMatchObject({ matches: [{ type: "message", role: "user" }] });
    const status = await client.callTool({ name: "lcm_status", arguments: {} });
    expect(status.structuredContent).toMatchObject({ readOnly: true, agents: ["main"] });
    const other = await client.callTool({ name: "lcm_conversations", arguments: { agentId: "ops" } });
    expect(other).toMatchObject({ isError: true, structuredContent: { code: "not_found" } });
  });
});
