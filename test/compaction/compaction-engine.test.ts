import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "../../src/compaction/circuit-breaker.js";
import { CompactionEngine } from "../../src/compaction/compaction-engine.js";
import { leafDraft } from "../../src/compaction/summary-draft.js";
import { silentLogger } from "../../src/contracts.js";
import { FakeSummarizer } from "../fakes/fake-summarizer.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { checkInvariants } from "../helpers/dag-invariants.js";
import { configuredSizes, createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";

const tokens = new WordTokenEstimator();

function words(count: number, prefix: string): string {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`).join(" ");
}

/** 40 messages of 50 tokens (46 words + 4), stored in one commit. */
async function storedSession(config: Record<string, unknown> = {}) {
  const harness = createTestEngine({
    tokens,
    config: { freshTailCount: 4, leafMinFanout: 4, leafChunkTokens: 256, leafTargetTokens: 32, condensedTargetTokens: 32, ...config },
  });
  const messages = Array.from({ length: 20 }, (_, turn) => [userMessage(words(46, `u${turn}x`)), assistantMessage(words(46, `a${turn}x`))]).flat();
  await harness.newEngine().commitTurn({ sessionId: "s1", advancementKey: "all", messages });
  const conversationId = (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId;
  return { ...harness, conversationId };
}

function engineFor(harness: Awaited<ReturnType<typeof storedSession>>, summarizer: FakeSummarizer, monotonicNow?: () => number) {
  return new CompactionEngine({
    store: harness.store,
    compactionStore: harness.compactionStore,
    summarizer,
    breaker: new CircuitBreaker(),
    tokens,
    clock: harness.clock,
    config: harness.config,
    logger: silentLogger,
    ...(monotonicNow ? { monotonicNow } : {}),
  });
}

describe("CompactionEngine", () => {
  it("stops a sweep at its deadline, between passes", async () => {
    const harness = await storedSession();
    let now = 0;
    // Each summary "takes" 100 s of the 150 s deadline: pass 1 starts at 0, pass 2 at 100, pass 3 would start at 200.
    const summarizer = new FakeSummarizer(() => {
      now += 100_000;
      return "short";
    });
    const run = await engineFor(harness, summarizer, () => now).sweep(harness.conversationId, { deadlineMs: 150_000, hard: false, sizes: configuredSizes(harness.config) });
    expect(run.passes).toHaveLength(2);
    expect(run.stopReason).toBe("deadline");
    expect(run.tokensAfter).toBeLessThan(run.tokensBefore);
    expect(checkInvariants(harness.db, harness.conversationId)).toEqual([]);
  });

  it("re-reads and re-plans when another writer changed the planned range, writing nothing stale", async () => {
    const harness = await storedSession();
    let interfered = false;
    // While our first pass waits on the model, "another process" summarizes the same first five messages.
    const summarizer = new FakeSummarizer(async () => {
      if (!interfered) {
        interfered = true;
        const items = (await harness.compactionStore.listCompactionItems(harness.conversationId)).slice(0, 5);
        const messages = await harness.store.getMessages(items.map((item) => item.messageId!));
        const draft = leafDraft(messages, { content: "theirs", level: "normal", createdAt: 1, tokens });
        await harness.compactionStore.applyLeafSummary({ conversationId: harness.conversationId, items }, draft, 20);
      }
      return "ours";
    });
    const run = await engineFor(harness, summarizer).sweep(harness.conversationId, { deadlineMs: 60_000, hard: false, sizes: configuredSizes(harness.config) });
    expect(run.passes.length).toBeGreaterThan(0);
    const contents = harness.db.all<{ content: string }>("SELECT content FROM summaries ORDER BY id").map((row) => row.content);
    expect(contents[0]).toBe("theirs");
    expect(checkInvariants(harness.db, harness.conversationId)).toEqual([]);
  });

  it("condenses depth by depth in a full sweep until no depth has enough summaries", async () => {
    const harness = await storedSession({ condensedMinFanout: 3 });
    const run = await engineFor(harness, new FakeSummarizer(() => "short")).sweep(harness.conversationId, { deadlineMs: 60_000, hard: false, sizes: configuredSizes(harness.config) });
    const depths = harness.db.all<{ depth: number; count: number }>(
      `SELECT s.depth, COUNT(*) AS count FROM context_items c JOIN summaries s ON s.id = c.summary_id GROUP BY s.depth`,
    );
    expect(run.stopReason).toBe("done");
    for (const row of depths) expect(row.count).toBeLessThan(3);
    expect(Math.max(...depths.map((row) => row.depth))).toBeGreaterThanOrEqual(1);
  });

  it("reaches into the fresh tail when the tail itself is what does not fit the target", async () => {
    // 40 messages x 50 tokens, all within freshTailCount 40: the configured tail covers the whole context.
    const harness = await storedSession({ freshTailCount: 40 });
    const summarizer = new FakeSummarizer(() => "short");
    const run = await engineFor(harness, summarizer).compactUntilUnder(harness.conversationId, 500, {
      deadlineMs: 60_000, hard: true, fullFirstRound: false, sizes: configuredSizes(harness.config),
    });
    expect(run.stopReason).toBe("under-target");
    expect(run.reachedIntoTail).toBe(true);
    expect(run.tokensAfter).toBeLessThanOrEqual(500);
    expect(checkInvariants(harness.db, harness.conversationId)).toEqual([]);
  });

  it("plans a sweep over a long backlog in work proportional to the backlog", async () => {
    // 40 messages, chunks of 256 tokens = 5 messages: 7 leaf passes over the 36 messages outside the tail (4).
    const harness = await storedSession();
    const reads: number[] = [];
    const counting = {
      ...harness.compactionStore,
      listCompactionItems: async (id: number) => {
        const items = await harness.compactionStore.listCompactionItems(id);
        reads.push(items.length);
        return items;
      },
      applyLeafSummary: harness.compactionStore.applyLeafSummary.bind(harness.compactionStore),
      applyCondensedSummary: harness.compactionStore.applyCondensedSummary.bind(harness.compactionStore),
      getSummarySources: harness.compactionStore.getSummarySources.bind(harness.compactionStore),
    };
    const engine = new CompactionEngine({
      store: harness.store, compactionStore: counting, summarizer: new FakeSummarizer(() => "short"),
      breaker: new CircuitBreaker(), tokens, clock: harness.clock, config: harness.config, logger: silentLogger,
    });
    const run = await engine.sweep(harness.conversationId, { deadlineMs: 60_000, hard: false, sizes: configuredSizes(harness.config) });
    expect(run.passes.filter((pass) => pass.kind === "leaf").length).toBeGreaterThanOrEqual(7);
    expect(reads).toEqual([40]); // the item list is read once per run, however many passes follow
  });
});
