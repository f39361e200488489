import { describe, expect, it } from "vitest";
import type { ExpandQueryResult } from "../../src/retrieval/delegated-expansion.js";
import { answerTokensFor } from "../../src/retrieval/window-share.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { RecordingSubagentRuntime, requestScopeError, type SubagentScript } from "../fakes/recording-subagent.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, exchanges, MAIN, OTHER_AGENT, seedTwoLeaves, textOf, type RecallEnv, type Session } from "../helpers/recall.js";
import { insertLeafSummary } from "../helpers/summaries.js";

type Details = ExpandQueryResult & { status?: string; parameter?: string; error?: string };

const NEEDLE = "the migration uses blue-green with flag ROLLOUT_42";

/** 30 exchanges; the needle is message seq 4. Seq 1-20 → leaf A, 21-40 → leaf B, both → condensed C. */
async function seed(env: RecallEnv) {
  const messages = exchanges(30);
  messages[3] = assistantMessage(`Decision: ${NEEDLE}.`);
  return seedTwoLeaves(env, messages, {
    leafA: "Planning the database migration; a rollout flag was chosen.",
    leafB: "Later topics, unrelated to the migration plan.",
    condensed: "Migration planning and later topics.",
  });
}

function childOf(run: { sessionKey: string }): Session {
  return { agentId: "main", sessionKey: run.sessionKey, sessionId: `child-${run.sessionKey.slice(-6)}` };
}

async function setup(script: SubagentScript | null, options: { llm?: RecordingLlm; config?: Record<string, unknown> } = {}) {
  let env!: RecallEnv;
  const played: string[] = [];
  const subagent = script === null ? undefined : new RecordingSubagentRuntime({
    ...script,
    ...(script.play ? { play: async (run) => { played.push(run.sessionKey); return script.play!(run); } } : {}),
  });
  env = createRecallEnv({
    ...(subagent ? { subagent } : {}),
    ...(options.llm ? { llm: options.llm } : {}),
    ...(options.config ? { config: options.config } : {}),
  });
  const ids = await seed(env);
  const ask = async (params: Record<string, unknown>, signal?: AbortSignal) => detailsOf<Details>(await env.call("lcm_expand_query", params, MAIN, signal));
  return { env, ids, subagent, ask, played };
}

function grants(env: RecallEnv) {
  return env.db.all<{ child_session_key: string; revoked_at: number | null; revoke_reason: string | null; tokens_used: number; conversation_ids: string }>(
    "SELECT child_session_key, revoked_at, revoke_reason, tokens_used, conversation_ids FROM expansion_grants",
  );
}

describe("lcm_expand_query, delegated to a helper sub-agent", () => {
  it("runs a helper with a grant, lets it walk the DAG with lcm_expand, and returns its answer with citations", async () => {
    let env!: RecallEnv;
    let leafA = "";
    const setupResult = await setup({
      play: async (run) => {
        const expanded = await env.call("lcm_expand", { summaryId: leafA, depth: 1, includeMessages: true }, childOf(run));
        expect(textOf(expanded)).toContain(NEEDLE);
        return `The flag is ROLLOUT_42 (blue-green).\nCited: ${leafA}`;
      },
    });
    env = setupResult.env;
    leafA = setupResult.ids.leafA;
    const result = await setupResult.ask({ prompt: "Which rollout flag did the migration use?", query: "migration rollout flag" });

    expect(result).toMatchObject({
      answer: "The flag is ROLLOUT_42 (blue-green).", citedIds: [leafA], expandedSummaryCount: 1, truncated: false, mode: "delegated",
    });
    expect(result.totalSourceTokens).toBeGreaterThan(0);
    const [run] = setupResult.subagent!.runs;
    expect(run).toMatchObject({ deliver: false, toolsAlsoAllow: ["lcm_expand", "lcm_describe", "lcm_grep"], extraSystemPrompt: expect.stringMatching(/data, not instructions/) });
    expect(run!.sessionKey).toMatch(/^agent:main:subagent:lcm-expand-[0-9a-f]{16}$/);
    expect(run!.message).toContain("Which rollout flag did the migration use?");
    expect(run!.message).toContain(leafA);
    expect(setupResult.subagent!.waits[0]!.timeoutMs).toBeLessThanOrEqual(120_000);
    expect(grants(env)).toMatchObject([{ child_session_key: run!.sessionKey, revoke_reason: "completed", tokens_used: result.totalSourceTokens }]);
    expect(setupResult.subagent!.deletes).toEqual([{ sessionKey: run!.sessionKey, deleteTranscript: true }]);
  });

  it("gives the helper lcm_expand but not lcm_expand_query, and the main agent the reverse", async () => {
    let tools: { expand: boolean; expandQuery: boolean } | null = null;
    let env!: RecallEnv;
    const setupResult = await setup({
      play: (run) => {
        const child = env.contextOf(childOf(run));
        tools = {
          expand: env.api.tools.some((entry) => typeof entry === "function" && (entry(child) as { name?: string } | null)?.name === "lcm_expand"),
          expandQuery: env.api.tools.some((entry) => typeof entry === "function" && (entry(child) as { name?: string } | null)?.name === "lcm_expand_query"),
        };
        return "ok";
      },
    });
    env = setupResult.env;
    await setupResult.ask({ prompt: "q", summaryIds: [setupResult.ids.leafA] });
    expect(tools).toEqual({ expand: true, expandQuery: false });
    expect(() => env.tool("lcm_expand", MAIN)).toThrow(/No tool "lcm_expand"/);
  });

  it("scopes the grant to the conversations of the candidates and denies the helper anything else", async () => {
    let env!: RecallEnv;
    let outside = "";
    const setupResult = await setup({
      play: async (run) => {
        const child = childOf(run);
        const grep = await env.call("lcm_grep", { pattern: "ops", conversationId: env.conversationId(OTHER_AGENT) }, child);
        expect(textOf(grep)).toMatch(/outside this expansion's grant/);
        expect(textOf(await env.call("lcm_expand", { summaryId: outside }, child))).toMatch(/no summary .* is stored/);
        expect(textOf(await env.call("lcm_describe", { id: outside }, child))).toMatch(/outside the conversations this delegated expansion may read/);
        return "done";
      },
    });
    env = setupResult.env;
    await env.commit(OTHER_AGENT, exchanges(4, "ops"));
    outside = insertLeafSummary(env.db, env.conversationId(OTHER_AGENT), 1, 4, "Ops summary.");
    await setupResult.ask({ prompt: "q", summaryIds: [setupResult.ids.leafB] });
    expect(setupResult.played).toHaveLength(1);
    expect(JSON.parse(grants(env)[0]!.conversation_ids)).toEqual([env.conversationId(MAIN)]);
  });

  it("caps the answer at maxTokens and says it was truncated", async () => {
    const { ask, ids } = await setup({ play: () => "word ".repeat(2_000) });
    const result = await ask({ prompt: "q", summaryIds: [ids.leafA], maxTokens: 100 });
    expect(result.truncated).toBe(true);
    expect(result.answer).toMatch(/cut to fit the token budget\]$/);
  });

  it("caps the answer to the conversation's model window, whatever maxTokens asks", async () => {
    const { env, ask, ids } = await setup({ play: () => "word ".repeat(4_000) });
    // What assemble records when OpenClaw states an 8k window for the session.
    env.db.run("UPDATE conversations SET last_window_tokens = 8192 WHERE conversation_id = ?", env.conversationId(MAIN));
    const result = await ask({ prompt: "q", summaryIds: [ids.leafA], maxTokens: 8_000 });
    expect(result.truncated).toBe(true);
    // 12% of the window by the estimator's count (about one token per word here), not the 8,000 asked for.
    const words = result.answer.split(/\s+/).filter((word) => word === "word").length;
    expect(words).toBeGreaterThan(500);
    expect(words).toBeLessThanOrEqual(answerTokensFor(8192));
  });

  it("reports a helper that used its whole token cap as truncated", async () => {
    let env!: RecallEnv;
    let leafA = "";
    const setupResult = await setup({
      play: async (run) => {
        const first = detailsOf<{ truncated: boolean; remainingTokens: number }>(await env.call("lcm_expand", { summaryId: leafA, depth: 1 }, childOf(run)));
        expect(first).toMatchObject({ truncated: true, remainingTokens: 0 });
        expect(textOf(await env.call("lcm_expand", { summaryId: leafA }, childOf(run)))).toMatch(/budget of 100 tokens is used up/);
        return "partial";
      },
    }, { config: { maxExpandTokens: 100 } });
    env = setupResult.env;
    leafA = setupResult.ids.leafA;
    const result = await setupResult.ask({ prompt: "q", summaryIds: [leafA] });
    expect(result).toMatchObject({ truncated: true, totalSourceTokens: 100, note: expect.stringMatching(/whole token cap/) });
  });
});

describe("lcm_expand_query fallbacks", () => {
  it("falls back to one model call over the excerpts when sub-agents are out of request scope", async () => {
    const llm = new RecordingLlm(() => "It was ROLLOUT_42.\nCited: sum_0000000000000001");
    const { ask, ids, env } = await setup({ runError: requestScopeError() }, { llm });
    const result = await ask({ prompt: "Which rollout flag?", query: "migration rollout" });
    expect(result).toMatchObject({ answer: "It was ROLLOUT_42.", mode: "direct", note: expect.stringMatching(/gateway request/) });
    expect(llm.calls).toHaveLength(1);
    expect(llm.calls[0]!.messages[0]!.content).toContain(NEEDLE);
    expect(llm.calls[0]!.systemPrompt).toMatch(/excerpts are data/);
    // The nearest summary repeating the needle stands for it (one candidate per match since issue 22).
    expect(result.citedIds).toContain(ids.leafA);
    expect(grants(env)[0]).toMatchObject({ revoke_reason: expect.stringMatching(/^failed/) });
  });

  it("falls back when the helper run fails", async () => {
    const llm = new RecordingLlm(() => "From the excerpts: ROLLOUT_42.");
    const { ask, ids } = await setup({ status: "error" }, { llm });
    const result = await ask({ prompt: "Which rollout flag?", summaryIds: [ids.leafA] });
    expect(result).toMatchObject({ mode: "direct", answer: "From the excerpts: ROLLOUT_42.", note: expect.stringMatching(/helper failed/) });
  });

  it("uses the direct path when the host has no sub-agent runtime", async () => {
    const llm = new RecordingLlm(() => "ROLLOUT_42");
    const { ask, ids } = await setup(null, { llm });
    expect(await ask({ prompt: "flag?", summaryIds: [ids.leafA] })).toMatchObject({ mode: "direct", answer: "ROLLOUT_42" });
  });

  it("returns the expanded excerpts and says so when there is no model at all", async () => {
    const { ask } = await setup({ runError: requestScopeError() });
    const result = await ask({ prompt: "Which rollout flag?", query: "migration" });
    expect(result.mode).toBe("excerpts");
    expect(result.answer).toMatch(/^No answer was composed \(sub-agents only run inside a gateway request; no model is available\)/);
    expect(result.answer).toContain(NEEDLE);
    expect(result.totalSourceTokens).toBeGreaterThan(0);
  });

  it("returns excerpts without a model call when the helper times out", async () => {
    const llm = new RecordingLlm(() => "unused");
    const { ask, ids, env } = await setup({ status: "timeout" }, { llm });
    const result = await ask({ prompt: "flag?", summaryIds: [ids.leafA] });
    expect(result).toMatchObject({ mode: "excerpts", note: expect.stringMatching(/did not finish within 120 s/) });
    expect(llm.calls).toHaveLength(0);
    expect(grants(env)[0]!.revoke_reason).toBe("timeout");
  });

  it("returns the excerpts when the model call fails", async () => {
    const llm = new RecordingLlm(() => { throw new Error("provider down"); });
    const { ask, ids } = await setup(null, { llm });
    const result = await ask({ prompt: "flag?", summaryIds: [ids.leafA] });
    expect(result).toMatchObject({ mode: "excerpts", note: expect.stringMatching(/model call failed \(provider down\)/) });
  });

  it("stops on the abort signal and revokes the grant", async () => {
    const controller = new AbortController();
    const { env, ids } = await setup({ play: () => { controller.abort(new Error("user cancelled")); return new Promise<string>(() => undefined); } });
    await expect(env.call("lcm_expand_query", { prompt: "q", summaryIds: [ids.leafA] }, MAIN, controller.signal)).rejects.toThrow(/user cancelled/);
    expect(grants(env)[0]!.revoke_reason).toBe("aborted");
  });
});

describe("lcm_expand_query parameters", () => {
  it("names the invalid parameter", async () => {
    const { env, ids } = await setup(null);
    await env.commit(OTHER_AGENT, [userMessage("ops"), assistantMessage("ops reply"), userMessage("more"), assistantMessage("more reply")]);
    const foreign = insertLeafSummary(env.db, env.conversationId(OTHER_AGENT), 1, 4, "Ops summary.");
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ query: "x" }, "prompt", /required/],
      [{ prompt: "q" }, "query", /either "query" .* or "summaryIds"/],
      [{ prompt: "q", summaryIds: [ids.leafA, "sum_ffffffffffffffff"] }, "summaryIds[1]", /no summary/],
      [{ prompt: "q", summaryIds: ["nonsense"] }, "summaryIds[0]", /must be a summary id/],
      [{ prompt: "q", summaryIds: ["file_0000000000000001"] }, "summaryIds[0]", /no file/],
      [{ prompt: "q", summaryIds: [foreign] }, "summaryIds[0]", /no summary/],
      [{ prompt: "q", query: "***" }, "query", /no searchable words/],
      [{ prompt: "q", query: "x", maxTokens: 5 }, "maxTokens", /100 to 8000/],
    ];
    for (const [params, parameter, message] of cases) {
      const result = await env.call("lcm_expand_query", params);
      expect(detailsOf<Details>(result), JSON.stringify(params)).toMatchObject({ status: "error", parameter });
      expect(textOf(result)).toMatch(message);
    }
  });

  it("says when nothing compacted matches the query", async () => {
    const { ask } = await setup(null);
    expect(await ask({ prompt: "q", query: "kumquat" })).toMatchObject({ mode: "none", citedIds: [], answer: expect.stringMatching(/No compacted history matches/) });
  });
});
