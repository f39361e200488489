/**
 * `lcm mcp --http`: the SDK's Streamable HTTP transport on 127.0.0.1, driven by the SDK's own HTTP client, behind a
 * bearer token and a loopback Host check. The child is started in its own process group and stopped by its PID.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, buildServedDatabase, NEEDLE, OPS_SECRET, ROOT, type ServedDatabase } from "./mcp-harness.js";

const TOKEN = "test-token-0123456789abcdef";

let served: ServedDatabase;
let child: ChildProcess;
let url: URL;
let stderr = "";

beforeAll(async () => {
  served = await buildServedDatabase();
  child = spawn(process.execPath, ["--import", "tsx", BIN, "mcp", "--http", "127.0.0.1:0", "--agent", "main", "--db", served.env.databasePath], {
    cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-home", LCM_MCP_TOKEN: TOKEN }, stdio: ["ignore", "ignore", "pipe"], detached: true,
  });
  url = await new Promise<URL>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const found = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
      if (found) resolve(new URL(found[1]!));
    });
    child.once("exit", (code) => reject(new Error(`lcm mcp --http exited (${code}): ${stderr}`)));
  });
}, 60_000);

afterAll(async () => {
  if (child?.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(child.pid!, "SIGTERM");
    await exited;
  }
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "lcm-http-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** One raw POST: its status code. */
function post(headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", reject);
    request.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }));
  });
}

describe("lcm mcp --http", () => {
  it("serves the recall tools to the SDK's HTTP client with the bearer token", async () => {
    expect(stderr).toContain("bearer token from LCM_MCP_TOKEN");
    const client = await connect(TOKEN);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("lcm_grep");
    const found = await client.callTool({ name: "lcm_grep", arguments: { pattern: NEEDLE } });
    expect(found.structuredContent).toMatchObject({ matchCount: 1, matches: [{ type: "message", conversationId: served.mainConversation }] });
    const refused = await client.callTool({ name: "lcm_grep", arguments: { pattern: OPS_SECRET } });
    expect(refused.structuredContent).toMatchObject({ matchCount: 0 });
    const summary = await client.readResource({ uri: `lcm://summary/${served.mainSummary}` });
    expect((summary.contents[0] as { text: string }).text).toContain(served.mainSummary);
    await client.close();
  });

  it("refuses a request without the token, with a wrong one, or with a Host that is not its loopback address", async () => {
    await expect(connect("wrong-token-0123456789")).rejects.toThrow();
    expect(await post({})).toBe(401);
    expect(await post({ Authorization: "Bearer wrong-token-0123456789" })).toBe(401);
    expect(await post({ Authorization: `Bearer ${TOKEN}`, Host: "evil.example" })).toBe(403);
    expect(await post({ Authorization: `Bearer ${TOKEN}` })).toBe(200);
  });
});
