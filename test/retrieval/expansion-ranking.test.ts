/**
 * lcm_expand_query ranks its sources by how well they match the question (issue 14): its starting summaries come
 * from a search that answers questions (some words), the helper is told the best-matching messages, and the
 * excerpt fallback quotes the best-matching message first, as a window around its hit, within the budget.
 */
import { describe, expect, it } from "vitest";
import type { ExpandQueryResult } from "../../src/retrieval/delegated-expansion.js";
import { RecordingSubagentRuntime } from "../fakes/recording-subagent.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, exchanges, MAIN, type RecallEnv } from "../helpers/recall.js";
import { insertLeafSummary } from "../helpers/summaries.js";

type Details = ExpandQueryResult & { status?: string };
const failingModel = { complete: async () => { throw new Error("no model in this test"); } } as never;
const NEEDLE = "the staging cluster certificate renews through the acme-dns01 issuer";

/**
 * Decoys share the question's common words, six older than the needle and six newer (so neither newest-first nor
 * oldest-first puts the needle first); the needle sits in the middle of a 30 KB tool output.
 */
async function seed(env: RecallEnv): Promise<void> {
  // Built in order: a message's time is taken when it is built.
  const decoys = (from: number) => Array.from({ length: 6 }, (_, index) =>
    assistantMessage(`The cluster staging notes ${from + index}: the certificate was mentioned, nothing renews here.`));
  const filler = "log line without anything of interest\n".repeat(400);
  await env.commit(MAIN, [
    ...exchanges(5),
    ...decoys(0),
    toolCallMessage([{ id: "t1", name: "read", arguments: { path: "ops/notes.md" } }]),
    toolResultMessage("t1", "read", `${filler}Note: ${NEEDLE}.\n${filler}`),
    ...decoys(6),
    ...exchanges(5, "topic", 6),
  ]);
  const conversation = env.conversationId(MAIN);
  insertLeafSummary(env.db, conversation, 1, 40, "Operations notes and cluster chatter; certificates were discussed.");
}

describe("lcm_expand_query ranks its sources", () => {
  it("quotes the best-matching message first, as a window around its hit, and stays within its budget", async () => {
    const env = createRecallEnv({ llm: failingModel });
    await seed(env);
    const result = detailsOf<Details>(await env.call("lcm_expand_query", {
      prompt: "How does the staging certificate renew?", query: "staging certificate renews issuer", maxTokens: 600,
    }));
    expect(result.mode).toBe("excerpts");
    const excerpts = result.answer.split(/\n(?=\[(?:message \d+|sum_))/).filter((block) => block.startsWith("[message "));
    expect(excerpts[0]).toMatch(/^\[message \d+ · toolResult/);
    expect(excerpts[0]).toContain(NEEDLE);
    // A window around the hit, not the 30 KB message from its top.
    expect(excerpts[0]!.length).toBeLessThan(2_000);
    expect(result.answer.length).toBeLessThan(600 * 4);
  });

  it("finds its starting summaries for a question in natural language and names the matching messages to the helper", async () => {
    const subagent = new RecordingSubagentRuntime({ play: async () => "The issuer is acme-dns01.\nCited: none" });
    const env = createRecallEnv({ subagent });
    await seed(env);
    const result = detailsOf<Details>(await env.call("lcm_expand_query", {
      prompt: "Which issuer renews the staging certificate?", query: "Which issuer renews the staging certificate?",
    }));
    expect(result.mode).toBe("delegated");
    expect(result.candidateSummaryIds).toHaveLength(1);
    const task = subagent.runs[0]!.message;
    expect(task).toContain("match the question best");
    expect(task).toMatch(/message \d+ under sum_[0-9a-f]{16}: .*«issuer»/);
  });

  it("quotes a message found only through a form of a word: the start of a hash, a sprained for sprain", async () => {
    const env = createRecallEnv({ llm: failingModel });
    await env.commit(MAIN, [
      ...exchanges(10),
      assistantMessage("Pushed 4f2a9c1d7e3b5a6c to origin: it removes the legacy fallback."),
      userMessage("I sprained my ankle while bouldering last weekend."),
      ...exchanges(10, "topic", 11),
    ]);
    insertLeafSummary(env.db, env.conversationId(MAIN), 1, 44, "Pushes, weekend news and chatter.");
    const hash = detailsOf<Details>(await env.call("lcm_expand_query", { prompt: "What did commit 4f2a9c1 change?", query: "4f2a9c1" }));
    expect(hash.answer).toContain("4f2a9c1d7e3b5a6c");
    const ankle = detailsOf<Details>(await env.call("lcm_expand_query", { prompt: "How did they sprain the ankle?", query: "sprain ankle" }));
    expect(ankle.answer.indexOf("bouldering")).toBeGreaterThan(-1);
    expect(ankle.answer.indexOf("bouldering")).toBeLessThan(ankle.answer.indexOf("question 1 "));
  });
});
