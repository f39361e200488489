/**
 * `lcm mcp`'s options and limits: a start refused with the CLI's exit codes and a message saying what to do (whose
 * history, the limit, a loopback address, the database); results within --max-result-chars; lcm_expand_query with a
 * model when one is configured. In-process (the command tree as the bin runs it, and the server on the SDK's
 * in-memory transport); the stdio and HTTP suites start the real child process.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliRuntime } from "../../src/cli/cli-runtime.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import type { CompletionModel } from "../../src/contracts.js";
import { createLcmMcpServer } from "../../src/mcp/lcm-mcp-server.js";
import { createMcpBackend } from "../../src/mcp/mcp-backend.js";
import { runLcm } from "../cli/cli-harness.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { tempDir } from "../helpers/temp-dir.js";
import { buildServedDatabase, NEEDLE, type ServedDatabase } from "./mcp-harness.js";

type CallResult = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

let served: ServedDatabase;
const runtimes: CliRuntime[] = [];

beforeAll(async () => {
  served = await buildServedDatabase();
}, 60_000);

afterAll(() => {
  for (const runtime of runtimes) runtime.close();
});

/** A server on its own read-only connection, as `lcm mcp` builds it, with the SDK's client on an in-memory pair. */
async function connect(options: { maxResultChars?: number; model?: CompletionModel; agentIds?: string[] | null } = {}): Promise<Client> {
  const runtime = new CliRuntime({ stdout: process.stdout, stderr: process.stderr, env: {}, setExitCode() {} }, { db: served.env.databasePath });
  runtimes.push(runtime);
  const backend = createMcpBackend({
    backend: runtime.open("read-live").backend,
    settings: { agentIds: options.agentIds === undefined ? ["main"] : options.agentIds, maxResultChars: options.maxResultChars ?? 20_000 },
    config: runtime.settings.config, tokens: runtime.tokens, clock: runtime.clock,
    logger: { debug() {}, info() {}, warn() {}, error() {} }, model: options.model,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createLcmMcpServer(backend).connect(serverSide);
  const client = new Client({ name: "lcm-test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

describe("lcm mcp refuses to start", () => {
  const mcp = (...args: string[]) => runLcm(["mcp", "--db", served.env.databasePath, ...args]);

  it("without being told whose history to serve, or told two ways", async () => {
    const none = await mcp();
    expect(none.code).toBe(EXIT.usage);
    expect(none.stderr).toMatch(/lcm mcp: Say whose history this server may read: --agent <id> \(repeatable, e\.g\. --agent main\) or --all-agents/);
    expect((await mcp("--agent", "main", "--all-agents")).stderr).toMatch(/either --agent <id> \(repeatable\) or --all-agents, not both/);
  });

  it("with a result limit it cannot honour, an address off loopback, or a short token", async () => {
    expect((await mcp("--agent", "main", "--max-result-chars", "500")).stderr).toMatch(/--max-result-chars must be an integer from 2000 to 1000000, got "500"/);
    const network = await mcp("--agent", "main", "--http", "0.0.0.0:8765");
    expect(network.code).toBe(EXIT.usage);
    expect(network.stderr).toMatch(/--http must be a loopback address and port, such as 127\.0\.0\.1:8765 .* never listens on a network/);
    const short = await runLcm(["mcp", "--db", served.env.databasePath, "--agent", "main", "--http", "127.0.0.1:0"], { LCM_MCP_TOKEN: "short" });
    expect(short.stderr).toMatch(/LCM_MCP_TOKEN must be at least 16 characters/);
  });

  it("on a missing database (exit 4) or a file that is not LCM's (exit 5), leaving it untouched", async () => {
    const missing = await runLcm(["mcp", "--agent", "main", "--db", join(tempDir(), "none.db")]);
    expect(missing.code).toBe(EXIT.noDatabase);
    expect(missing.stderr).toMatch(/lcm mcp: No LCM database at .*none\.db \(no such file; path from --db\)/);
    const foreign = join(tempDir(), "notes.txt");
    writeFileSync(foreign, "not a database at all, just some notes\n".repeat(20));
    const refused = await runLcm(["mcp", "--agent", "main", "--db", foreign]);
    expect(refused.code).toBe(EXIT.refused);
    expect(refused.stdout).toBe(""); // stdout belongs to MCP messages
  });
});

describe("lcm mcp results", () => {
  it("fits every result into --max-result-chars, saying what was left out", async () => {
    const client = await connect({ maxResultChars: 2_000 });
    const grep = (await client.callTool({ name: "lcm_grep", arguments: { pattern: "question" } })) as CallResult;
    const fitted = grep.structuredContent as { matchCount: number; shown: number; note: string };
    expect(grep.content[0]!.text.length).toBeLessThanOrEqual(2_000);
    expect(fitted.shown).toBeLessThan(fitted.matchCount);
    expect(fitted.note).toMatch(/more match\(es\) not shown, to fit the result limit of 2000 characters: narrow the pattern/);

    const expanded = (await client.callTool({ name: "lcm_expand", arguments: { summaryId: served.mainSummary } })) as CallResult;
    expect(expanded.content[0]!.text.length).toBeLessThanOrEqual(2_000);
    expect(expanded.structuredContent).toMatchObject({ truncated: true });
    // A summary is not paged: its text is cut at the limit, with a line saying so.
    const largest = served.env.db.get<{ id: string }>("SELECT summary_id AS id FROM summaries WHERE conversation_id = ? ORDER BY length(content) DESC LIMIT 1", served.mainConversation)!.id;
    const described = (await client.callTool({ name: "lcm_describe", arguments: { id: largest } })) as CallResult;
    expect(described.content[0]!.text.length).toBeLessThanOrEqual(2_000);
    expect(described.content[0]!.text).toMatch(/\n…\[cut at 2000 characters, the server's result limit: ask for less .* larger --max-result-chars\]$/);
    const conversation = await client.readResource({ uri: `lcm://conversation/${served.mainConversation}` });
    expect((conversation.contents[0] as { text: string }).text.length).toBeLessThanOrEqual(2_000);
    const answer = (await client.callTool({ name: "lcm_expand_query", arguments: { prompt: "What is the deploy key?", query: "deploy key" } })) as CallResult;
    expect(answer.content[0]!.text.length).toBeLessThanOrEqual(2_000);
    await client.close();
  });

  it("answers lcm_expand_query with one model call when a model is configured", async () => {
    const model = new RecordingLlm(() => `The staging deploy key is ${NEEDLE} [${"sum"}].`);
    const client = await connect({ model });
    const result = (await client.callTool({ name: "lcm_expand_query", arguments: { prompt: "What is the staging deploy key?", query: "staging deploy key" } })) as CallResult;
    expect(result.structuredContent).toMatchObject({ mode: "direct" });
    expect(result.content[0]!.text).toContain(`The staging deploy key is ${NEEDLE}`);
    expect(model.calls).toHaveLength(1);
    expect(JSON.stringify(model.calls[0])).toContain(NEEDLE); // the excerpts it answered from
    await client.close();
  });

  it("serves every agent's history with --all-agents", async () => {
    const client = await connect({ agentIds: null });
    const listed = (await client.callTool({ name: "lcm_conversations", arguments: {} })) as CallResult;
    expect((listed.structuredContent as { conversations: { agentId: string }[] }).conversations.map((row) => row.agentId).sort()).toEqual(["main", "ops"]);
    const status = (await client.callTool({ name: "lcm_status", arguments: {} })) as CallResult;
    expect(status.structuredContent).toMatchObject({ agents: "all", served: { conversations: 2, messages: 240 } });
    await client.close();
  });
});
