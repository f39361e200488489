/**
 * The two readers beside the agent's tools, on each backend: the inspector's API (what its page and the Control UI tab
 * show: the overview, the DAG, the next context, search, a summary) and `lcm mcp` over stdio (another agent's recall),
 * on the same history stored and compacted by the engine on that backend.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config.js";
import { systemClock } from "../../src/contracts.js";
import { inspectorApiOn } from "../../src/inspector/inspector-wiring.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine, RecordingLogger } from "../helpers/engine.js";
import { exchanges } from "../cli/cli-harness.js";
import { startStdioServer } from "../mcp/mcp-harness.js";

const SESSION = { sessionKey: "agent:main:readers", sessionId: "s-readers" };
const NEEDLE = "markerr5";

describe.each(backendKinds())("the inspector and the MCP server on %s", (kind) => {
  let opened: TestBackend;
  let conversationId: number;

  beforeAll(async () => {
    opened = await openTestBackend(kind);
    const harness = createTestEngine({ backend: opened.backend, config: { leafChunkTokens: 2_000 } });
    await harness.newEngine().ingestBatch({ ...SESSION, messages: exchanges(40, 30, "r") });
    await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 8_000 });
    await harness.newEngine().compact({ ...SESSION, force: true, compactionTarget: "threshold" });
    conversationId = (await opened.backend.store.findConversation({ agentId: "main", sessionId: SESSION.sessionId }))!.conversationId;
  });
  afterAll(async () => {
    await opened?.close();
  });

  it("serves the inspector's overview, DAG, context, search and summary views", async () => {
    const api = inspectorApiOn({
      backend: opened.backend, config: resolveConfig({ databasePath: "/unused/lcm.db" }, {}), tokens: new DefaultTokenEstimator(),
      clock: systemClock, logger: new RecordingLogger(), readOnlyReason: "read-only in this test",
    });
    const get = async (path: string, query = "") => {
      const response = await api.handle({ method: "GET", path, query: new URLSearchParams(query), body: undefined });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body as Record<string, unknown>;
    };
    const overview = JSON.stringify(await get("overview"));
    expect(overview).toContain(SESSION.sessionKey);
    const dag = await get(`conversations/${conversationId}/dag`);
    const summaryId = /sum_[0-9a-f]{16}/.exec(JSON.stringify(dag))?.[0];
    expect(summaryId).toBeDefined();
    expect(JSON.stringify(await get(`summaries/${summaryId}`))).toContain(summaryId!);
    expect(JSON.stringify(await get(`conversations/${conversationId}/context`))).toContain("summary");
    expect(JSON.stringify(await get("search", `q=${NEEDLE}`))).toContain(NEEDLE);
  });

  it("answers another agent's lcm_grep over MCP (stdio) with the compacted detail", async () => {
    const target = kind === "postgres" ? ["--database-url", opened.location] : ["--db", opened.location];
    const server = await startStdioServer([...target, "--agent", "main"]);
    try {
      const result = await server.client.callTool({ name: "lcm_grep", arguments: { pattern: `${NEEDLE}\\b` } });
      expect(result.isError, server.stderr()).toBeUndefined();
      const matches = (result.structuredContent as { matches: { type: string; conversationId: number }[] }).matches;
      expect(matches[0]).toMatchObject({ type: "message", conversationId });
    } finally {
      await server.close();
    }
  });
});
