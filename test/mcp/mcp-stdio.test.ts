/**
 * `lcm mcp` over stdio, as a client sees it: the bin started as a child process and driven by the MCP SDK's own
 * client, on a database made through the plugin. The recall tools answer as the agent tools do (the same matches,
 * the same summary), resources read, another agent's history is refused, and a malformed call is an MCP error or an
 * error result, never a crash.
 */
import { existsSync } from "node:fs";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { LCM_GREP_PARAMETERS } from "../../src/tools/lcm-grep-tool.js";
import type { ConversationsOutput } from "../../src/cli/commands/conversations-command.js";
import { runLcm } from "../cli/cli-harness.js";
import { detailsOf, MAIN, OTHER_AGENT } from "../helpers/recall.js";
import { userMessage } from "../helpers/messages.js";
import { buildServedDatabase, NEEDLE, OPS_SECRET, type ServedDatabase, startStdioServer, type StdioServer } from "./mcp-harness.js";

type CallResult = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

let served: ServedDatabase;
let server: StdioServer;

async function call(name: string, args: Record<string, unknown>, target: StdioServer = server): Promise<CallResult> {
  return (await target.client.callTool({ name, arguments: args })) as CallResult;
}

const textOf = (result: CallResult) => result.content.map((part) => part.text).join("\n");

beforeAll(async () => {
  served = await buildServedDatabase();
  server = await startStdioServer(["--db", served.env.databasePath, "--agent", "main"]);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe("lcm mcp over stdio", () => {
  it("lists the recall tools with the agent tools' own parameter schemas, and the resource templates", async () => {
    const { tools } = await server.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["lcm_grep", "lcm_describe", "lcm_expand", "lcm_expand_query", "lcm_conversations", "lcm_status"]);
    expect(tools[0]!.inputSchema).toEqual(JSON.parse(JSON.stringify(LCM_GREP_PARAMETERS)));
    expect(tools.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);
    const { resourceTemplates } = await server.client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(["lcm://conversation/{conversationId}", "lcm://summary/{summaryId}"]);
    expect(server.stderr()).toMatch(/serving the conversations of agent\(s\) main of .* \(read-only\) over stdio/);
  });

  it("finds a compacted needle with the same matches as the agent's lcm_grep, summary and copies named", async () => {
    const result = await call("lcm_grep", { pattern: NEEDLE });
    expect(result.isError).toBeUndefined();
    const agent = await served.env.call("lcm_grep", { pattern: NEEDLE }, MAIN);
    const matches = (result.structuredContent as { matches: unknown[] }).matches;
    expect(matches).toEqual(detailsOf<{ matches: unknown[] }>(agent).matches);
    expect(matches[0]).toMatchObject({ type: "message", conversationId: served.mainConversation, coveringSummaryId: expect.stringMatching(/^sum_[0-9a-f]{16}$/),
      alsoIn: expect.arrayContaining([served.mainSummary]),
    });
    expect(textOf(result)).toContain(`«${NEEDLE}»`);
  });

  it("describes the summary covering the needle as lcm_describe does, and expands it down to the needle's message", async () => {
    const described = await call("lcm_describe", { id: served.mainSummary });
    const agent = await served.env.call("lcm_describe", { id: served.mainSummary }, MAIN);
    expect(described.structuredContent).toEqual(detailsOf(agent));
    expect(described.structuredContent).toMatchObject({ type: "summary", summaryId: served.mainSummary, kind: "leaf" });

    const expanded = await call("lcm_expand", { summaryId: served.mainSummary });
    const items = (expanded.structuredContent as { items: { type: string; content: string }[] }).items;
    expect(items.some((item) => item.type === "message" && item.content.includes(NEEDLE))).toBe(true);
    expect(expanded.structuredContent).not.toHaveProperty("remainingTokens");
  });

  it("answers a question with the excerpts holding the needle when no model is configured", async () => {
    const result = await call("lcm_expand_query", { prompt: "What is the staging deploy key?", query: "staging deploy key" });
    expect(result.structuredContent).toMatchObject({ mode: "excerpts" });
    expect(textOf(result)).toContain(NEEDLE);
  });

  it("reads a summary and a conversation as resources, and lists only the served agent's conversations", async () => {
    const summary = await server.client.readResource({ uri: `lcm://summary/${served.mainSummary}` });
    expect(summary.contents[0]).toMatchObject({ uri: `lcm://summary/${served.mainSummary}`, mimeType: "text/plain" });
    expect((summary.contents[0] as { text: string }).text).toContain(`"summaryId": "${served.mainSummary}"`);

    const conversation = await server.client.readResource({ uri: `lcm://conversation/${served.mainConversation}` });
    const text = (conversation.contents[0] as { text: string }).text;
    expect(text).toMatch(new RegExp(`^Conversation ${served.mainConversation} · agent main · session agent:main:main`));
    expect(text).toContain("m60 answer"); // the newest message, as the model sees it

    const { resources } = await server.client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([`lcm://conversation/${served.mainConversation}`]);
  });

  it("lists the served conversations and reports what it serves", async () => {
    const listed = await call("lcm_conversations", {});
    const rows = (listed.structuredContent as { conversations: { conversationId: number }[] }).conversations;
    expect(rows.map((row) => row.conversationId)).toEqual([served.mainConversation]);
    // The same row `lcm conversations` shows (one mapping, services/status-service.ts).
    const cli = JSON.parse((await runLcm(["conversations", "--agent", "main", "--json", "--db", served.env.databasePath])).stdout) as ConversationsOutput;
    expect(rows).toEqual(cli.conversations);
    const status = await call("lcm_status", { conversationId: served.mainConversation });
    expect(status.structuredContent).toMatchObject({
      readOnly: true, agents: ["main"], expandQuery: "excerpts", served: { conversations: 1, messages: 120 },
      conversation: { conversationId: served.mainConversation, agentId: "main", messages: 120 },
    });
  });

  it("refuses another agent's history without revealing it exists", async () => {
    const grep = await call("lcm_grep", { pattern: OPS_SECRET });
    expect(grep.structuredContent).toMatchObject({ matchCount: 0, searchedConversations: 1 });

    const describeOps = await call("lcm_describe", { id: served.opsSummary });
    expect(describeOps.isError).toBe(true);
    expect(describeOps.structuredContent).toMatchObject({ status: "error", code: "not_found" });
    expect(textOf(describeOps)).not.toMatch(new RegExp(`conversation ${served.opsConversation}\\b`));

    const scoped = await call("lcm_grep", { pattern: "o3", conversationId: served.opsConversation });
    expect(scoped).toMatchObject({ isError: true, structuredContent: { code: "not_found", parameter: "conversationId" } });
    const expand = await call("lcm_expand", { summaryId: served.opsSummary });
    expect(expand).toMatchObject({ isError: true, structuredContent: { code: "not_found" } });
    const listed = await call("lcm_conversations", { agentId: OTHER_AGENT.agentId });
    expect(listed).toMatchObject({ isError: true, structuredContent: { code: "not_found", parameter: "agentId" } });

    await expect(server.client.readResource({ uri: `lcm://conversation/${served.opsConversation}` })).rejects.toMatchObject({ code: -32002 });
    await expect(server.client.readResource({ uri: `lcm://summary/${served.opsSummary}` })).rejects.toMatchObject({ code: -32002 });
  });

  it("answers a malformed call with an MCP error or an error result naming the problem, and keeps serving", async () => {
    const unknownTool = server.client.callTool({ name: "lcm_delete_everything", arguments: {} });
    await expect(unknownTool).rejects.toBeInstanceOf(McpError);
    await expect(unknownTool).rejects.toMatchObject({ code: ErrorCode.InvalidParams });

    const badLimit = await call("lcm_grep", { pattern: NEEDLE, limit: "many" });
    expect(badLimit).toMatchObject({ isError: true, structuredContent: { code: "invalid_input", parameter: "limit" } });
    expect(textOf(badLimit)).toMatch(/Parameter "limit" must be an integer from 1 to 200, got "many"/);
    const unknownParameter = await call("lcm_describe", { id: served.mainSummary, summary: true });
    expect(textOf(unknownParameter)).toMatch(/Parameter "summary" is not a parameter of this tool/);
    const badRegex = await call("lcm_grep", { pattern: "(unclosed" });
    expect(badRegex).toMatchObject({ isError: true, structuredContent: { code: "invalid_input" } });
    await expect(server.client.readResource({ uri: "lcm://nothing/1" })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });

    const still = await call("lcm_grep", { pattern: NEEDLE });
    expect(still.structuredContent).toMatchObject({ matchCount: 1 });
  });

  it("sees a turn the gateway commits while it serves, and leaves the full-text index as it was (read-only)", async () => {
    const indexed = () => served.env.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = 'messages_fts'")!.through;
    const before = indexed();
    await served.env.commit(MAIN, [userMessage("late detail: the canary flag is CANARY-5521")]);
    const found = await call("lcm_grep", { pattern: "CANARY-5521" });
    expect(found.structuredContent).toMatchObject({ matchCount: 1, matches: [{ type: "message", coveringSummaryId: null }] });
    expect(indexed()).toBe(before);
  });
});

describe("lcm mcp --writable", () => {
  it("opens the database for writing, so a search indexes the messages waiting for the full-text index", async () => {
    const writable = await startStdioServer(["--db", served.env.databasePath, "--agent", "main", "--writable"]);
    try {
      await served.env.commit(MAIN, [userMessage("later still: the rollback flag is ROLLBACK-8830")]);
      const indexed = () => served.env.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = 'messages_fts'")!.through;
      const newest = served.env.db.get<{ id: number }>("SELECT max(message_id) AS id FROM messages")!.id;
      expect(indexed()).toBeLessThan(newest);
      const found = await call("lcm_grep", { pattern: "rollback flag", mode: "full_text" }, writable);
      expect((found.structuredContent as { matches: { snippet: string }[] }).matches[0]!.snippet).toContain("-8830");
      expect(indexed()).toBe(newest);
      expect(writable.stderr()).toMatch(/\(writable \(searches may index what waits\)\) over stdio/);
    } finally {
      await writable.close();
    }
  });
});

describe("lcm mcp started before the gateway", () => {
  it("sees what a gateway writes after it started on a file with no write-ahead log (never opened immutable)", async () => {
    const quiet = await buildServedDatabase();
    closeSharedDatabase(quiet.env.databasePath); // as when no gateway runs: the last connection removes the -wal
    expect(existsSync(`${quiet.env.databasePath}-wal`)).toBe(false);
    const early = await startStdioServer(["--db", quiet.env.databasePath, "--agent", "main"]);
    try {
      expect((await call("lcm_grep", { pattern: NEEDLE }, early)).structuredContent).toMatchObject({ matchCount: 1 });
      await quiet.env.commit(MAIN, [userMessage("after the server started: the release tag is TAG-6610")]);
      const found = await call("lcm_grep", { pattern: "TAG-6610" }, early);
      expect(found.structuredContent).toMatchObject({ matchCount: 1 });
    } finally {
      await early.close();
    }
  });
});
