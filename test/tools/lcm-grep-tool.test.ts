import { beforeAll, describe, expect, it } from "vitest";
import type { GrepMatch } from "../../src/search/grep.js";
import { toolResultCharsFor } from "../../src/retrieval/window-share.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, exchanges, MAIN, OTHER_AGENT, seedTwoLeaves, sessionOf, textOf, type RecallEnv } from "../helpers/recall.js";

interface GrepDetails {
  matchCount: number;
  matches: GrepMatch[];
  truncated: boolean;
  limitReached: boolean;
  searchedConversations: number;
  strategy?: string;
  sort: string;
  note?: string;
  status?: string;
  parameter?: string;
}

const T0 = Date.UTC(2026, 1, 10, 8, 0, 0);
const HOUR = 3_600_000;

/**
 * MAIN: 40 exchanges (80 messages, seq 1-80), one per hour from T0. Seq 1-20 → leaf A, 21-40 → leaf B,
 * A+B → condensed C (in context); 41-80 stay raw. Exchange 3 holds the needle "zebra-7731".
 */
async function seed(env: RecallEnv): Promise<{ leafA: string; leafB: string; condensed: string }> {
  const messages = exchanges(40).map((message, index) => ({ ...message, timestamp: T0 + index * HOUR }));
  messages[5] = { ...messages[5]!, content: [{ type: "text", text: "the deploy key is zebra-7731, keep it" }] };
  return seedTwoLeaves(env, messages, {
    leafA: "Early setup: questions about topic1 to topic10; a deploy key was shared.",
    leafB: "Middle part: topic11 to topic20 were discussed.",
    condensed: "Setup and the first twenty topics; deploy key shared.",
  });
}

describe("lcm_grep", () => {
  let env: RecallEnv;
  let ids: Awaited<ReturnType<typeof seed>>;
  const grep = async (params: Record<string, unknown>, session = MAIN) => detailsOf<GrepDetails>(await env.call("lcm_grep", params, session));

  beforeAll(async () => {
    env = createRecallEnv();
    ids = await seed(env);
    await env.commit(OTHER_AGENT, [userMessage("ops secret zebra-9999 lives here"), assistantMessage("noted topic1 for ops")]);
  });

  it("is visible to the model directly, with a schema and a description that says when to use it", () => {
    const tool = env.tool("lcm_grep");
    expect(tool.catalogMode).toBe("direct-only");
    expect(tool.description).toMatch(/regex/);
    expect(tool.description).toMatch(/full_text/);
    expect(tool.parameters).toMatchObject({ type: "object", required: ["pattern"] });
  });

  it("lists only the matches that fit the conversation's model window, and says how many it left out and how to narrow", async () => {
    const small = createRecallEnv();
    await small.commit(MAIN, exchanges(40)); // 80 messages, each with "topic"
    const everything = detailsOf<GrepDetails & { shown?: number }>(await small.call("lcm_grep", { pattern: "topic", scope: "messages" }));
    expect(everything.matches).toHaveLength(50); // the window is not known yet: the default limit only
    expect(everything.shown).toBeUndefined();

    // What assemble records when OpenClaw states an 8k window for the session.
    small.db.run("UPDATE conversations SET last_window_tokens = 8192 WHERE conversation_id = ?", small.conversationId(MAIN));
    const result = await small.call("lcm_grep", { pattern: "topic", scope: "messages" });
    const fitted = detailsOf<GrepDetails & { shown?: number }>(result);
    expect(textOf(result).length).toBeLessThanOrEqual(toolResultCharsFor(8192));
    expect(fitted.matchCount).toBe(50);
    expect(fitted.shown).toBeGreaterThan(0);
    expect(fitted.shown).toBeLessThan(50);
    expect(fitted.matches).toEqual(everything.matches.slice(0, fitted.shown));
    expect(fitted.note).toMatch(new RegExp(`${50 - fitted.shown!} more match\\(es\\) not shown, to fit this conversation's model window \\(8192 tokens\\): narrow the pattern`));

    // A 128k window holds all 50.
    small.db.run("UPDATE conversations SET last_window_tokens = 131072 WHERE conversation_id = ?", small.conversationId(MAIN));
    expect(detailsOf<GrepDetails>(await small.call("lcm_grep", { pattern: "topic", scope: "messages" })).matches).toHaveLength(50);
  });

  it("finds a raw message that was compacted away and names the summary that now covers it", async () => {
    const result = await grep({ pattern: "zebra-\\d+" });
    expect(result.matches).toHaveLength(1);
    const hit = result.matches[0]!;
    expect(hit).toMatchObject({ type: "message", seq: 6, coveringSummaryId: ids.condensed, conversationId: env.conversationId(MAIN) });
    expect(hit.type === "message" && hit.snippet).toContain("«zebra-7731»");
    expect(hit.createdAt).toBe(new Date(T0 + 5 * HOUR).toISOString());
  });

  it("reports no covering summary for a message still in the context", async () => {
    const result = await grep({ pattern: "topic39\\b", scope: "messages" });
    expect(result.matches.map((match) => match.type === "message" && match.coveringSummaryId)).toEqual([null, null]);
  });

  it("searches summaries, with kind, depth and time range", async () => {
    const result = await grep({ pattern: "deploy key", scope: "summaries" });
    expect(result.matches.map((match) => match.id)).toEqual([ids.condensed, ids.leafA]);
    expect(result.matches[0]).toMatchObject({ type: "summary", kind: "condensed", depth: 1, summaryId: ids.condensed });
  });

  it("searches full text with phrase, prefix and OR, sorted by recency or relevance", async () => {
    // topic4* matches topic4 (seq 7-8) and topic40 (seq 79-80); topic12 is seq 23-24.
    const byRecency = await grep({ pattern: "topic12 OR topic4*", mode: "full_text", scope: "messages", sort: "recency" });
    expect(byRecency.matches.map((match) => match.type === "message" && match.seq)).toEqual([80, 79, 24, 23, 8, 7]);
    // The message saying it comes first; the summaries that repeat it (they cover seq 6) are folded under it.
    const phrase = await grep({ pattern: '"deploy key"', mode: "full_text" });
    expect(phrase.matches[0]).toMatchObject({ type: "message", seq: 6, alsoIn: expect.arrayContaining([ids.leafA, ids.condensed]) });
    expect(phrase.matches.map((match) => match.id)).not.toContain(ids.leafA);
    const byRelevance = await grep({ pattern: "deploy zebra", mode: "full_text", sort: "relevance" });
    expect(byRelevance.sort).toBe("relevance");
    expect(byRelevance.matches[0]).toMatchObject({ type: "message", seq: 6, snippet: expect.stringContaining("«zebra»") });
  });

  it("marks full-text hits in the snippet", async () => {
    const result = await grep({ pattern: "zebra", mode: "full_text", scope: "messages" });
    expect(result.matches[0]!.type === "message" && result.matches[0]!.snippet).toMatch(/«zebra»/);
  });

  it("filters by since and before (ISO times)", async () => {
    const since = new Date(T0 + 70 * HOUR).toISOString();
    const before = new Date(T0 + 74 * HOUR).toISOString();
    const result = await grep({ pattern: "topic", scope: "messages", since, before });
    expect(result.matches.map((match) => match.type === "message" && match.seq)).toEqual([74, 73, 72, 71]);
    const dateOnly = await grep({ pattern: "topic", scope: "messages", before: "2026-02-10" });
    expect(dateOnly.matches).toEqual([]);
  });

  it("returns at most limit matches and says when the limit was reached", async () => {
    const result = await grep({ pattern: "question", scope: "messages", limit: 3 });
    expect(result.matches).toHaveLength(3);
    expect(result.limitReached).toBe(true);
    expect((await grep({ pattern: "question", scope: "messages" })).matches).toHaveLength(40);
  });

  it("names the invalid parameter", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{}, "pattern", /required/],
      [{ pattern: "x", limit: 0 }, "limit", /1 to 200/],
      [{ pattern: "x", limit: 500 }, "limit", /1 to 200/],
      [{ pattern: "x", mode: "fuzzy" }, "mode", /"regex", "full_text"/],
      [{ pattern: "x", scope: "all" }, "scope", /"messages", "summaries", "both"/],
      [{ pattern: "x", sort: "oldest" }, "sort", /"recency", "relevance"/],
      [{ pattern: "x", since: "yesterday" }, "since", /ISO 8601/],
      [{ pattern: "x", conversation_id: 3 }, "conversation_id", /not a parameter/],
      [{ pattern: "x", conversationId: 99_999 }, "conversationId", /does not exist or belongs to another agent/],
      [{ pattern: "x", conversationId: 1, allConversations: true }, "conversationId", /either/],
      [{ pattern: "(unclosed" }, "pattern", /not a valid JavaScript regular expression/],
      [{ pattern: "***", mode: "full_text" }, "pattern", /no searchable words/],
    ];
    for (const [params, parameter, message] of cases) {
      const result = await env.call("lcm_grep", params);
      expect(detailsOf<GrepDetails>(result)).toMatchObject({ status: "error", parameter });
      expect(textOf(result)).toMatch(message);
    }
  });

  it("accepts numbers and booleans sent as strings", async () => {
    const result = await grep({ pattern: "question", scope: "messages", limit: "2", allConversations: "false" });
    expect(result.matches).toHaveLength(2);
  });

  it("never reads another agent's history, by default, by conversationId or with allConversations", async () => {
    expect((await grep({ pattern: "zebra" })).matches.every((match) => match.conversationId === env.conversationId(MAIN))).toBe(true);
    expect((await grep({ pattern: "zebra", allConversations: true })).matches).toHaveLength(1);
    const other = await env.call("lcm_grep", { pattern: "zebra", conversationId: env.conversationId(OTHER_AGENT) });
    expect(detailsOf<GrepDetails>(other)).toMatchObject({ status: "error", parameter: "conversationId" });
    expect(textOf(other)).not.toContain("zebra-9999");
    const fromOps = await grep({ pattern: "zebra", allConversations: true }, OTHER_AGENT);
    expect(fromOps.matches.map((match) => match.snippet)).toEqual(["ops secret «zebra»-9999 lives here"]);
  });

  it("reads the agent's other conversations with allConversations or conversationId", async () => {
    const second = sessionOf("main", "second");
    await env.commit(second, [userMessage("second session mentions zebra-0001")]);
    const all = await grep({ pattern: "zebra-\\d+", allConversations: true });
    expect(all.searchedConversations).toBe(2);
    expect(all.matches.map((match) => match.snippet)).toEqual(["second session mentions «zebra-0001»", expect.stringContaining("«zebra-7731»")]);
    const named = await grep({ pattern: "zebra", conversationId: env.conversationId(second) });
    expect(named.matches).toHaveLength(1);
  });

  it("reads every agent's history when allowCrossAgentRecall is set", async () => {
    const open = createRecallEnv({ config: { allowCrossAgentRecall: true } });
    await open.commit(MAIN, [userMessage("main knows kiwi-1")]);
    await open.commit(OTHER_AGENT, [userMessage("ops knows kiwi-2")]);
    const result = detailsOf<GrepDetails>(await open.call("lcm_grep", { pattern: "kiwi", allConversations: true }));
    expect(result.matches).toHaveLength(2);
    const named = detailsOf<GrepDetails>(await open.call("lcm_grep", { pattern: "kiwi", conversationId: open.conversationId(OTHER_AGENT) }));
    expect(named.matches).toHaveLength(1);
  });

  it("answers an empty result for a session with nothing stored yet", async () => {
    const result = await grep({ pattern: "anything" }, sessionOf("main", "fresh"));
    expect(result).toMatchObject({ matchCount: 0, searchedConversations: 0, note: expect.stringMatching(/No history/) });
  });

  it("shows every documented field in the text the model reads", async () => {
    const text = textOf(await env.call("lcm_grep", { pattern: "zebra-7731" }));
    for (const field of ["matchCount", "truncated", "limitReached", "coveringSummaryId", "snippet", "createdAt", "conversationId"]) {
      expect(text).toContain(`"${field}"`);
    }
  });
});
