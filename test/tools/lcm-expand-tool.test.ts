import { beforeEach, describe, expect, it } from "vitest";
import { createLcmExpandTool } from "../../src/tools/lcm-expand-tool.js";
import { createLcmExpandQueryTool } from "../../src/tools/lcm-expand-query-tool.js";
import type { ExpandResult } from "../../src/retrieval/summary-expansion.js";
import { SqliteGrantStore } from "../../src/sqlite/sqlite-grant-store.js";
import { expansionSessionKey } from "../../src/store/grant-store.js";
import { systemClock, silentLogger } from "../../src/contracts.js";
import { createRecallEnv, detailsOf, exchanges, MAIN, textOf, type RecallEnv, type Session } from "../helpers/recall.js";
import { insertCondensedSummary, insertLeafSummary } from "../helpers/summaries.js";

type Details = ExpandResult & { remainingTokens: number; status?: string; parameter?: string };

describe("lcm_expand (delegated helpers only)", () => {
  let env: RecallEnv;
  let grants: SqliteGrantStore;
  let leafA: string;
  let condensed: string;
  let child: Session;
  let grantId: string;

  beforeEach(async () => {
    env = createRecallEnv();
    await env.commit(MAIN, exchanges(20));
    const conversation = env.conversationId(MAIN);
    leafA = insertLeafSummary(env.db, conversation, 1, 20, "First ten exchanges.");
    const leafB = insertLeafSummary(env.db, conversation, 21, 40, "Next ten exchanges.");
    condensed = insertCondensedSummary(env.db, conversation, [leafA, leafB], "Twenty exchanges.");
    grants = new SqliteGrantStore(env.db);
    const key = expansionSessionKey("main", "00000000000000ab");
    grantId = `grant_${Math.random().toString(16).slice(2)}`;
    const now = Date.now();
    await grants.createGrant({ grantId, agentId: "main", childSessionKey: key, conversationIds: [conversation], tokenCap: 4_000, createdAt: now, expiresAt: now + 60_000 });
    child = { agentId: "main", sessionKey: key, sessionId: "child-session" };
  });

  const expand = async (params: Record<string, unknown>, session = child) => detailsOf<Details>(await env.call("lcm_expand", params, session));

  it("is offered to expansion helper sessions only", () => {
    const deps = { services: () => { throw new Error("unused"); }, config: { maxExpandTokens: 4_000, expansionTimeoutMs: 120_000 }, logger: silentLogger, clock: systemClock };
    expect(createLcmExpandTool(deps, env.contextOf(MAIN))).toBeNull();
    expect(createLcmExpandTool(deps, {})).toBeNull();
    expect(createLcmExpandTool(deps, env.contextOf(child))?.name).toBe("lcm_expand");
    expect(createLcmExpandQueryTool(deps, env.contextOf(child))).toBeNull();
  });

  it("opens one level: a condensed summary's parents", async () => {
    const result = await expand({ summaryId: condensed });
    expect(result.items.map((item) => item.type === "summary" && item.summaryId)).toEqual([leafA, expect.any(String)]);
    expect(result).toMatchObject({ truncated: false, unexpandedSummaryIds: [leafA, expect.any(String)] });
  });

  it("goes deeper with depth and includes the source messages of leaves", async () => {
    const deep = await expand({ summaryId: condensed, depth: 2 });
    expect(deep.items.filter((item) => item.type === "message")).toHaveLength(40);
    expect(deep.unexpandedSummaryIds).toEqual([]);
    const summariesOnly = await expand({ summaryId: condensed, depth: 2, includeMessages: false });
    expect(summariesOnly.items.every((item) => item.type === "summary")).toBe(true);
    const leaf = await expand({ summaryId: leafA });
    expect(leaf.items.map((item) => item.type === "message" && item.seq)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
  });

  it("stops at tokenCap, cuts the last item and charges the grant", async () => {
    const result = await expand({ summaryId: leafA, tokenCap: 30 });
    expect(result).toMatchObject({ truncated: true, estimatedTokens: expect.any(Number), remainingTokens: 4_000 - 30 });
    expect(result.estimatedTokens).toBeLessThanOrEqual(30);
    const full = await expand({ summaryId: leafA });
    expect(full.remainingTokens).toBe(4_000 - 30 - full.estimatedTokens);
    expect((await grants.getGrant(grantId))!.summariesExpanded).toBe(2);
  });

  it("refuses the main agent and any session without a grant", async () => {
    const tool = createLcmExpandTool(
      { services: () => ({ access: { activeGrant: async () => { throw new Error("must check the grant"); } } }) as never, config: { maxExpandTokens: 1, expansionTimeoutMs: 1 }, logger: silentLogger, clock: systemClock },
      env.contextOf({ agentId: "main", sessionKey: expansionSessionKey("main", "ffffffffffffffff"), sessionId: "x" }),
    )!;
    expect(textOf(await tool.execute("c", { summaryId: leafA }))).toMatch(/must check the grant/);
    const stranger = { agentId: "main", sessionKey: expansionSessionKey("main", "0000000000000fff"), sessionId: "stranger" };
    expect(textOf(await env.call("lcm_expand", { summaryId: leafA }, stranger))).toMatch(/only available inside a delegated expansion/);
  });

  it("refuses after the grant expires", async () => {
    env.db.writeNow(() => env.db.run("UPDATE expansion_grants SET expires_at = ? WHERE grant_id = ?", Date.now() - 1, grantId));
    expect(textOf(await env.call("lcm_expand", { summaryId: leafA }, child))).toMatch(/grant of this session has expired/);
  });

  it("refuses after the helper's run ends: onSubagentEnded revokes the grant", async () => {
    const engine = env.api.engine();
    await engine.onSubagentEnded({ childSessionKey: child.sessionKey, reason: "completed" });
    expect(await grants.getGrant(grantId)).toMatchObject({ revokeReason: "sub-agent ended: completed" });
    expect(textOf(await env.call("lcm_expand", { summaryId: leafA }, child))).toMatch(/was revoked \(sub-agent ended: completed\)/);
  });

  it("ignores onSubagentEnded for sessions that are not expansion helpers", async () => {
    await env.api.engine().onSubagentEnded({ childSessionKey: "agent:main:subagent:other", reason: "completed" });
    expect((await grants.getGrant(grantId))!.revokedAt).toBeNull();
  });

  it("names invalid parameters", async () => {
    expect(await expand({})).toMatchObject({ status: "error", parameter: "summaryId" });
    expect(await expand({ summaryId: leafA, depth: 9 })).toMatchObject({ status: "error", parameter: "depth" });
    expect(await expand({ summaryId: "file_0000000000000001" })).toMatchObject({ status: "error", parameter: "summaryId" });
    expect(await expand({ summaryId: "sum_ffffffffffffffff" })).toMatchObject({ status: "error", parameter: "summaryId" });
  });
});
