import { afterEach, describe, expect, it } from "vitest";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { checkInvariants } from "../helpers/dag-invariants.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { playTurn, playTurns } from "../helpers/turn-driver.js";

afterEach(() => resetSharedCircuitBreakers());

/** `count` distinct words: with WordTokenEstimator a message of n words costs n + 4 tokens. */
function words(count: number, prefix = "w"): string {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`).join(" ");
}

/** A user + assistant exchange of 50 + 50 tokens (46 words + 4 framing each). */
function exchange(turn: number): AgentMessage[] {
  return sizedExchange(turn, 50);
}

/** A user + assistant exchange of `size` + `size` tokens. */
function sizedExchange(turn: number, size: number): AgentMessage[] {
  return [userMessage(`${words(size - 4, `u${turn}x`)}`), assistantMessage(`${words(size - 4, `a${turn}x`)}`)];
}

const SMALL = {
  freshTailCount: 4,
  leafMinFanout: 4,
  leafChunkTokens: 256,
  leafTargetTokens: 64,
  condensedTargetTokens: 64,
  condensedMinFanout: 3,
  condensedMinFanoutHard: 2,
};

function setup(config: Record<string, unknown> = {}, respond?: (prompt: string) => string) {
  const llm = new RecordingLlm((params) => respond?.(params.messages[0]!.content) ?? "The user and assistant exchanged notes.\nExpand for details about: the exact notes");
  const harness = createTestEngine({ config: { ...SMALL, ...config }, tokens: new WordTokenEstimator() });
  return { ...harness, llm };
}

async function conversationOf(harness: ReturnType<typeof setup>) {
  return (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!;
}

describe("maintain after a committed turn", () => {
  it("does nothing while the raw backlog outside the fresh tail is at most leafChunkTokens", async () => {
    const harness = setup();
    // 4 turns = 8 messages x 50 tokens; 4 are fresh, so the backlog is 4 x 50 = 200 <= 256.
    const results = await playTurns(harness.newEngine, [1, 2, 3, 4].map(exchange), { llm: harness.llm });
    expect(results.every((result) => !result.changed)).toBe(true);
    expect(harness.llm.calls).toHaveLength(0);
  });

  it("runs one leaf pass once the backlog passes leafChunkTokens, and never touches the fresh tail", async () => {
    const harness = setup();
    await playTurns(harness.newEngine, [1, 2, 3, 4].map(exchange), { llm: harness.llm });
    // Turn 5: 10 messages, 6 outside the fresh tail = 300 > 256 tokens. The chunk takes 5 messages
    // (250 tokens); a 6th would pass 256.
    const result = await playTurn(harness.newEngine, exchange(5), { llm: harness.llm });
    expect(result.changed).toBe(true);
    expect(harness.llm.calls).toHaveLength(1);
    const items = await harness.compactionStore.listCompactionItems((await conversationOf(harness)).conversationId);
    expect(items.map((item) => (item.summaryRowId === null ? "m" : `s${item.depth}`)).join("")).toBe("s0mmmmm");
    const conversation = await conversationOf(harness);
    expect(conversation.contextRawTokens).toBe(5 * 50);
    expect(checkInvariants(harness.db, conversation.conversationId)).toEqual([]);
  });

  it("sends the leaf prompt to the session's model with summaryModel/summaryProvider as model", async () => {
    const harness = setup({ summaryModel: "haiku-9", summaryProvider: "anthropic" });
    await playTurns(harness.newEngine, [1, 2, 3, 4, 5].map(exchange), { llm: harness.llm });
    const call = harness.llm.calls[0]!;
    expect(call.model).toBe("anthropic/haiku-9");
    expect(call.purpose).toBe("lcm-summary");
    expect(call.signal).toBeInstanceOf(AbortSignal);
    expect(call.systemPrompt).toMatch(/never addressed to you/);
    expect(call.messages[0]!.content).toContain("u1x0 u1x1");
  });

  it("uses api.runtime.llm when the hook has no runtimeContext.llm", async () => {
    const pluginLlm = new RecordingLlm(() => "Short.\nExpand for details about: everything");
    const harness = createTestEngine({ config: SMALL, tokens: new WordTokenEstimator(), pluginLlm });
    await playTurns(harness.newEngine, [1, 2, 3, 4, 5].map(exchange));
    expect(pluginLlm.calls).toHaveLength(1);
  });

  it("summarizes without any model (extractive) when none is reachable", async () => {
    const harness = createTestEngine({ config: SMALL, tokens: new WordTokenEstimator() });
    await playTurns(harness.newEngine, [1, 2, 3, 4, 5].map(exchange));
    const summary = harness.db.get<{ level: string; content: string }>("SELECT level, content FROM summaries")!;
    expect(summary.level).toBe("normal");
    expect(summary.content).toMatch(/Expand for details about:/);
  });

  it("condenses up to incrementalMaxDepth after the leaf pass", async () => {
    const harness = setup({ incrementalMaxDepth: 1 });
    await playTurns(harness.newEngine, Array.from({ length: 14 }, (_, index) => exchange(index + 1)), { llm: harness.llm });
    const depths = harness.db.all<{ depth: number }>("SELECT depth FROM summaries ORDER BY id").map((row) => row.depth);
    expect(depths).toContain(1);
    expect(Math.max(...depths)).toBe(1);
    expect(checkInvariants(harness.db, (await conversationOf(harness)).conversationId)).toEqual([]);
  });

  it("runs a full sweep when context tokens pass contextThreshold x the last assemble budget", async () => {
    const harness = setup({ leafChunkTokens: 100_000 });
    // Budget 4,000 x 0.75 = 3,000; 8 turns of 200 + 200 = 3,200 tokens > 3,000. The big leafChunkTokens keeps the
    // incremental pass out of it; the sweep summarizes everything outside the fresh tail.
    const results = await playTurns(harness.newEngine, Array.from({ length: 8 }, (_, index) => sizedExchange(index + 1, 200)), {
      llm: harness.llm,
      tokenBudget: 4_000,
    });
    expect(results.slice(0, 7).every((result) => !result.changed)).toBe(true);
    expect(results[7]!.changed).toBe(true);
    const conversation = await conversationOf(harness);
    expect(conversation.contextTokens).toBeLessThan(3_000);
    expect(conversation.lastCompaction).toMatchObject({ trigger: "maintain:threshold", compacted: true, tokensBefore: 3_200 });
  });

  it("plans for 3,200 tokens when the budget is smaller: no sweep after every turn, no 32-token summary prompts", async () => {
    const harness = setup({ leafChunkTokens: 100_000, leafTargetTokens: 1_200, condensedTargetTokens: 2_000 });
    // A 300-token budget would put the threshold at 225 (every turn past it). Planned at 3,200: threshold 2,400,
    // passed by the seventh turn of 200 + 200 (2,800 tokens), not before; the summaries asked for are 8% of 3,200 =
    // 256 (condensed: 12% = 384).
    const results = await playTurns(harness.newEngine, Array.from({ length: 8 }, (_, index) => sizedExchange(index + 1, 200)), {
      llm: harness.llm,
      tokenBudget: 300,
    });
    expect(results.map((result) => result.changed)).toEqual([false, false, false, false, false, false, true, false]);
    const prompts = harness.llm.calls.map((call) => call.messages[0]!.content);
    expect(prompts.length).toBeGreaterThan(0);
    for (const prompt of prompts) expect(prompt).toMatch(/Aim for at most about (256|384) tokens\./);
  });

  it("does nothing when autocompactDisabled is set", async () => {
    const harness = setup({ autocompactDisabled: true });
    const results = await playTurns(harness.newEngine, [1, 2, 3, 4, 5, 6].map(exchange), { llm: harness.llm, tokenBudget: 300 });
    expect(results.every((result) => !result.changed && /disabled/.test(result.reason ?? ""))).toBe(true);
    expect(harness.llm.calls).toHaveLength(0);
  });

  it("records file ids found in the sources on the leaf summary", async () => {
    const harness = setup();
    const turns = [1, 2, 3, 4, 5].map(exchange);
    turns[0]![0] = userMessage(`see [LCM File: file_0123456789abcdef] ${words(40, "f")}`);
    await playTurns(harness.newEngine, turns, { llm: harness.llm });
    const summary = harness.db.get<{ file_ids: string }>("SELECT file_ids FROM summaries")!;
    expect(JSON.parse(summary.file_ids)).toEqual(["file_0123456789abcdef"]);
  });
});
