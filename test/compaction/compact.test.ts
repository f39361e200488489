import { afterEach, describe, expect, it } from "vitest";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import type { AgentMessage, CompactParams } from "../../src/host/openclaw-types.js";
import { SUMMARY_ID_PATTERN } from "../../src/records.js";
import { ITEM_PAGE_SIZE } from "../../src/sqlite/sqlite-compaction-store.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { checkInvariants } from "../helpers/dag-invariants.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { playTurns } from "../helpers/turn-driver.js";

afterEach(() => resetSharedCircuitBreakers());

function words(count: number, prefix: string): string {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`).join(" ");
}

/** 50 + 50 tokens with WordTokenEstimator (200 + 200 with `size` 200). */
function exchange(turn: number, size = 50): AgentMessage[] {
  return [userMessage(words(size - 4, `u${turn}x`)), assistantMessage(words(size - 4, `a${turn}x`))];
}

const CONFIG = {
  freshTailCount: 4,
  leafMinFanout: 4,
  leafChunkTokens: 100_000,
  leafTargetTokens: 64,
  condensedTargetTokens: 64,
  condensedMinFanout: 3,
  condensedMinFanoutHard: 2,
  autocompactDisabled: true,
};

async function seeded(
  turns: number, config: Record<string, unknown> = {}, llm = new RecordingLlm(() => "Notes were exchanged.\nExpand for details about: the notes"),
  scale: { messageTokens: number; tokenBudget: number } = { messageTokens: 50, tokenBudget: 1_000 },
) {
  const harness = createTestEngine({ config: { ...CONFIG, ...config }, tokens: new WordTokenEstimator() });
  await playTurns(harness.newEngine, Array.from({ length: turns }, (_, index) => exchange(index + 1, scale.messageTokens)), { tokenBudget: scale.tokenBudget });
  const conversationId = (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId;
  const compact = (params: Partial<CompactParams> = {}) =>
    harness.newEngine().compact({ sessionId: "s1", sessionKey: "agent:main:main", runtimeContext: { llm }, ...params });
  return { ...harness, llm, conversationId, compact };
}

/** Messages of 200 tokens and a 4,000-token budget: above the smallest budget compaction plans for (3,200). */
const LARGE = { messageTokens: 200, tokenBudget: 4_000 };

describe("compact", () => {
  it("/compact <text> sweeps everything outside the fresh tail and passes the text to every prompt", async () => {
    const { compact, llm, db, conversationId } = await seeded(10);
    // 20 messages x 50 = 1,000 tokens; 4 fresh. Budget 1,000 (last assemble) x 0.75 = 750 target.
    const result = await compact({ force: true, compactionTarget: "threshold", customInstructions: "focus on alpha", tokenBudget: 32_000 });
    expect(result).toMatchObject({ ok: true, compacted: true, result: { tokensBefore: 1_000 } });
    expect(result.result!.tokensAfter).toBeLessThan(750);
    expect(llm.calls.length).toBeGreaterThan(0);
    expect(llm.calls.every((call) => call.messages[0]!.content.includes("focus on alpha"))).toBe(true);
    const raw = db.get<{ count: number }>("SELECT COUNT(*) AS count FROM context_items WHERE message_id IS NOT NULL")!;
    expect(raw.count).toBe(4);
    expect(checkInvariants(db, conversationId)).toEqual([]);
  });

  it("/compact summarizes all but the last 4 messages even when the automatic fresh tail holds the whole conversation", async () => {
    const { compact, db, conversationId, llm } = await seeded(
      10, { freshTailCount: 32, autocompactDisabled: false }, undefined, { messageTokens: 200, tokenBudget: 12_000 },
    );
    // 20 messages x 200 = 4,000 tokens, under the threshold (0.75 x 12,000) and all inside the automatic fresh tail
    // (32 messages within 0.4 x 12,000 = 4,800 tokens): nothing was compacted after the turns. /compact keeps 4.
    expect(llm.calls).toHaveLength(0);
    const result = await compact({ force: true, compactionTarget: "threshold" });
    expect(result).toMatchObject({ ok: true, compacted: true, result: { tokensBefore: 4_000 } });
    const raw = db.all<{ seq: number }>(
      "SELECT m.seq FROM context_items c JOIN messages m ON m.message_id = c.message_id WHERE c.conversation_id = ? ORDER BY c.ordinal",
      conversationId,
    );
    expect(raw.map((row) => row.seq)).toEqual([17, 18, 19, 20]);
    expect(checkInvariants(db, conversationId)).toEqual([]);
  });

  it("answers a /compact that finds nothing older to summarize in LCM's words and figures, not OpenClaw's benign skip", async () => {
    const { compact } = await seeded(10);
    await compact({ force: true, compactionTarget: "threshold" });
    const again = await compact({ force: true, compactionTarget: "threshold" });
    expect(again).toMatchObject({ ok: true, compacted: false });
    // OpenClaw replaces "already under target" and "nothing to compact" by its own sentence and its own figures.
    expect(again.reason).not.toMatch(/already under target|nothing to compact|below threshold/);
    expect(again.reason).toMatch(/^only the newest 4 messages .* LCM's context uses \d+ tokens of its 3,200-token budget$/);
  });

  it("reports compacted: false with equal token counts when nothing is left to compact", async () => {
    const { compact } = await seeded(10);
    await compact({ force: true, compactionTarget: "threshold" });
    const second = await compact({ force: true, compactionTarget: "threshold" });
    expect(second.compacted).toBe(false);
    expect(second.ok).toBe(true);
    expect(second.result!.tokensAfter).toBe(second.result!.tokensBefore);
  });

  it("without force, does nothing below the threshold and says so", async () => {
    const { compact, llm } = await seeded(4, { autocompactDisabled: false });
    const result = await compact({ compactionTarget: "threshold" });
    expect(result).toMatchObject({ ok: true, compacted: false });
    expect(result.reason).toMatch(/^already under target/); // the wording OpenClaw takes as a benign skip
    expect(llm.calls).toHaveLength(0);
  });

  it("refuses non-forced compaction when autocompactDisabled is set", async () => {
    const { compact } = await seeded(10);
    const result = await compact({ compactionTarget: "budget" });
    expect(result).toMatchObject({ ok: true, compacted: false });
    expect(result.reason).toMatch(/autocompactDisabled/);
  });

  it("overflow recovery sheds at least the excess the provider reported", async () => {
    const { compact } = await seeded(10);
    // Window 1,200 (reserve 300 => limit 900); the provider measured 1,400: excess 500. Target = min(1,000 budget,
    // 1,000 context - 500) = 500.
    const result = await compact({ force: true, compactionTarget: "budget", tokenBudget: 1_200, currentTokenCount: 1_400 });
    expect(result.ok).toBe(true);
    expect(result.compacted).toBe(true);
    expect(result.result!.tokensAfter).toBeLessThanOrEqual(500);
    expect(result.result!.details).toMatchObject({ targetTokens: 500 });
  });

  it("overflow recovery sheds half the context when the provider counts more than the whole context holds", async () => {
    const { compact, llm } = await seeded(10);
    // Window 1,200 (limit 900); the provider measured 3,000: an excess of 2,100 the 1,000-token context cannot
    // explain, with a short prompt: the provider counts this context larger than the estimate. Target = 500.
    const result = await compact({ force: true, compactionTarget: "budget", tokenBudget: 1_200, currentTokenCount: 3_000 });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect(result.result!.details).toMatchObject({ targetTokens: 500 });
    expect(result.result!.tokensAfter).toBeLessThanOrEqual(500);
    expect(result.reason).not.toMatch(/prompt/);
    expect(llm.calls.length).toBeGreaterThan(0);
  });

  it("bounds the fresh tail by its share of the budget, not only by its count", async () => {
    const { compact, conversationId, db } = await seeded(10, { freshTailCount: 12 }, undefined, LARGE);
    // 20 messages x 200 = 4,000 tokens. By count the tail is 12 x 200 = 2,400 tokens, more than the target min(4,000
    // budget, 4,000 context - 2,000 excess) = 2,000; freshTailBudgetShare 0.4 x 4,000 = 1,600 protects only the newest 8.
    const result = await compact({ force: true, compactionTarget: "budget", tokenBudget: 4_800, currentTokenCount: 5_600 });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect(result.result!.details).toMatchObject({ stopReason: "under-target", reachedIntoTail: false, freshTailTokens: 1_600 });
    expect(result.result!.tokensAfter).toBeLessThanOrEqual(2_000);
    expect(checkInvariants(db, conversationId)).toEqual([]);
  });

  it("reaches into the fresh tail when even the share-bounded tail does not fit the target", async () => {
    const { compact, conversationId, db } = await seeded(10, { freshTailCount: 12 });
    // Excess 1,700 - 900 = 800: target 1,000 - 800 = 200 tokens, below the 400-token tail.
    const result = await compact({ force: true, compactionTarget: "budget", tokenBudget: 1_200, currentTokenCount: 1_700 });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect(result.result!.details).toMatchObject({ stopReason: "under-target", reachedIntoTail: true, targetTokens: 200 });
    expect(result.reason).toMatch(/^\d+ summaries written; LCM's context uses \d+ tokens of its [\d,]+-token budget$/); // plain words; mechanics in details
    expect(result.result!.tokensAfter).toBeLessThanOrEqual(200);
    expect(checkInvariants(db, conversationId)).toEqual([]);
  });

  it("keeps the context when the provider's excess is larger than all of it: the current message is the problem", async () => {
    const { newEngine, llm } = await seeded(5, { freshTailCount: 100 });
    // The turn's first assemble saw a prompt of 1,000 host tokens (4,000 characters); the window is 1,200 (limit 900).
    const engine = newEngine();
    await engine.assemble({ sessionId: "s1", sessionKey: "agent:main:main", messages: [], tokenBudget: 1, prompt: "p".repeat(4_000) });
    // Context 500 tokens; the provider measured 1,400: an excess of 500, the whole context.
    const result = await engine.compact({
      sessionId: "s1", sessionKey: "agent:main:main", runtimeContext: { llm },
      force: true, compactionTarget: "budget", tokenBudget: 1_200, currentTokenCount: 1_400,
    });
    expect(result).toMatchObject({ ok: true, compacted: false });
    expect(result.reason).toMatch(/^already under target/); // OpenClaw's benign wording: it does not fail the turn
    expect(result.reason).toMatch(/the current message alone is larger than the model's window allows/);
    expect(result.result!.tokensAfter).toBe(500);
    expect(llm.calls).toHaveLength(0);
  });

  it("answers a benign skip, never a failure, when there is nothing left that would help", async () => {
    const { compact } = await seeded(10, { freshTailCount: 100 }, undefined, LARGE);
    // Excess 7,580 - 3,600 = 3,980 of a 4,000-token context: target 20, below what any summary costs.
    const first = await compact({ force: true, compactionTarget: "budget", tokenBudget: 4_800, currentTokenCount: 7_580 });
    expect(first).toMatchObject({ ok: true, compacted: true });
    expect(first.result!.details).toMatchObject({ stopReason: "cannot-fit", targetTokens: 20 });
    const again = await compact({ force: true, compactionTarget: "budget", tokenBudget: 4_800, currentTokenCount: 7_580 });
    expect(again).toMatchObject({ ok: true, compacted: false });
    expect(again.reason).toMatch(/^(nothing to compact|already under target)/);
    expect(again.result!.tokensAfter).toBe(again.result!.tokensBefore);
  });

  it("aims the host's preflight at the threshold, not at the excess its own measure reports", async () => {
    const { compact } = await seeded(10, { freshTailCount: 100 }, undefined, LARGE);
    // Preflight: the host's usage (system prompt, tools, tool loop) says 8,000 against a 3,600 limit. The context
    // (4,000) is over the threshold 3,000 (budget 4,000): compacted to it, not to 4,000 - 4,400.
    const result = await compact({
      force: true, compactionTarget: "budget", tokenBudget: 4_800, currentTokenCount: 8_000,
      runtimeContext: { llm: new RecordingLlm(() => "Notes.\nExpand for details about: notes"), forceReason: "preflight_required" },
    });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect(result.result!.details).toMatchObject({ targetTokens: 3_000 });
    expect(result.result!.tokensAfter).toBeLessThanOrEqual(3_000);
    expect(result.result!.tokensAfter).toBeGreaterThan(1_200); // the newest turns stay raw
  });

  it("stops at once and writes nothing when the host aborts", async () => {
    const { compact, db } = await seeded(10);
    const controller = new AbortController();
    controller.abort();
    const result = await compact({ force: true, compactionTarget: "threshold", abortSignal: controller.signal });
    expect(result).toMatchObject({ ok: false, compacted: false });
    expect(result.reason).toMatch(/aborted/);
    expect(db.get<{ count: number }>("SELECT COUNT(*) AS count FROM summaries")!.count).toBe(0);
  });

  it("gives summaries sum_ + 16 hex ids and records the outcome on the conversation", async () => {
    const { compact, db, store } = await seeded(10);
    await compact({ force: true, compactionTarget: "threshold" });
    for (const row of db.all<{ summary_id: string }>("SELECT summary_id FROM summaries")) {
      expect(row.summary_id).toMatch(SUMMARY_ID_PATTERN);
    }
    const conversation = await store.findConversation({ agentId: "main", sessionId: "s1" });
    expect(conversation!.lastCompaction).toMatchObject({ trigger: "compact:threshold", compacted: true, tokensBefore: 1_000 });
  });

  it("answers truthfully for a session it never stored", async () => {
    const { newEngine } = await seeded(1);
    const result = await newEngine().compact({ sessionId: "unknown", sessionKey: "agent:main:other", force: true });
    expect(result).toEqual({ ok: true, compacted: false, reason: "nothing to compact: no stored conversation for this session" });
  });

  it("keeps a concurrent commit and a compaction of the same session from interleaving", async () => {
    const { compact, newEngine, db, conversationId } = await seeded(10);
    const commit = newEngine().commitTurn({ sessionId: "s1", advancementKey: "late", messages: exchange(99) });
    const compaction = compact({ force: true, compactionTarget: "threshold" });
    const [committed, compacted] = await Promise.all([commit, compaction]);
    expect(committed.status).toBe("committed");
    expect(compacted.ok).toBe(true);
    expect(checkInvariants(db, conversationId)).toEqual([]);
  });

  it("sweeps a context longer than one page of items (read in pages) and leaves every invariant intact", async () => {
    const harness = createTestEngine({ config: { ...CONFIG, leafChunkTokens: 2_000 }, tokens: new WordTokenEstimator() });
    const messages = Array.from({ length: ITEM_PAGE_SIZE + 600 }, (_, index) =>
      index % 2 === 0 ? userMessage(`question ${index} about item${index}`) : assistantMessage(`answer ${index} on item${index}`));
    await harness.newEngine().ingestBatch({ sessionId: "s1", sessionKey: "agent:main:main", messages });
    const conversationId = (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId;
    const llm = new RecordingLlm(() => "Items were discussed.\nExpand for details about: items");
    const result = await harness.newEngine().compact({
      sessionId: "s1", sessionKey: "agent:main:main", runtimeContext: { llm }, force: true, compactionTarget: "threshold", tokenBudget: 1_000,
    });
    expect(result).toMatchObject({ ok: true, compacted: true });
    const raw = harness.db.get<{ count: number }>("SELECT count(*) AS count FROM context_items WHERE message_id IS NOT NULL")!.count;
    expect(raw).toBe(CONFIG.freshTailCount);
    // Every message is under exactly one leaf summary or still raw in context.
    const summarized = harness.db.get<{ count: number }>("SELECT count(DISTINCT message_id) AS count FROM summary_messages")!.count;
    expect(summarized + raw).toBe(messages.length);
    expect(checkInvariants(harness.db, conversationId)).toEqual([]);
  });
});
