import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "../../src/compaction/circuit-breaker.js";
import { CompactionEngine } from "../../src/compaction/compaction-engine.js";
import { silentLogger } from "../../src/contracts.js";
import type { MessageId } from "../../src/records.js";
import type { CompactionItem, CompactionStore } from "../../src/store/compaction-store.js";
import { FakeSummarizer } from "../fakes/fake-summarizer.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { checkInvariants } from "../helpers/dag-invariants.js";
import { configuredSizes, createTestEngine } from "../helpers/engine.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";

const tokens = new WordTokenEstimator();

function words(count: number, prefix: string): string {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`).join(" ");
}

/**
 * An item list that counts how many of its items are read (by index, as the planners and the engine read them):
 * the planners' work, whatever shape it takes.
 */
function countingItems(items: CompactionItem[], counter: { reads: number }): CompactionItem[] {
  return new Proxy(items, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) counter.reads++;
      return Reflect.get(target, key, receiver);
    },
  });
}

/**
 * `turns` turns of user (50 tokens), assistant tool call, tool result (50 tokens), answer (24 tokens): 4 items and
 * about 135 tokens per turn.
 */
async function backlogSession(turns: number) {
  const harness = createTestEngine({
    tokens,
    config: { freshTailCount: 8, leafMinFanout: 4, leafChunkTokens: 1_000, leafTargetTokens: 32, condensedTargetTokens: 32 },
  });
  const messages = Array.from({ length: turns }, (_, turn) => [
    userMessage(words(46, `u${turn}x`)),
    toolCallMessage([{ id: `call${turn}`, name: "read", arguments: { path: `f${turn}` } }]),
    toolResultMessage(`call${turn}`, "read", words(46, `r${turn}x`)),
    assistantMessage(words(20, `a${turn}x`)),
  ]).flat();
  await harness.newEngine().commitTurn({ sessionId: "s1", advancementKey: "backlog", messages });
  const conversationId = (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId;
  return { ...harness, conversationId, items: messages.length };
}

describe("a sweep over a long raw backlog", () => {
  it("plans in work proportional to the backlog, and each pass reads only its own chunk", async () => {
    // 1,000 turns = 4,000 items, ~135k tokens; chunks of at most 1,000 tokens (7 turns, 28 items): ~140 leaf passes.
    // Planning that re-read the whole list per pass would read ~150 x 4,000 = 600,000 items.
    const harness = await backlogSession(1_000);
    const planner = { reads: 0 };
    const sourcesPerPass: number[] = [];
    const compactionStore: CompactionStore = {
      listCompactionItems: async (id) => countingItems(await harness.compactionStore.listCompactionItems(id), planner),
      applyLeafSummary: (range, draft, contextTokens) => harness.compactionStore.applyLeafSummary(range, draft, contextTokens),
      applyCondensedSummary: (range, draft, contextTokens) => harness.compactionStore.applyCondensedSummary(range, draft, contextTokens),
      getSummarySources: (id) => harness.compactionStore.getSummarySources(id),
    };
    const store = {
      getConversation: harness.store.getConversation.bind(harness.store),
      getSummariesByRowIds: harness.store.getSummariesByRowIds.bind(harness.store),
      getMessages: async (ids: MessageId[]) => {
        sourcesPerPass.push(ids.length);
        return harness.store.getMessages(ids);
      },
    };
    const engine = new CompactionEngine({
      store, compactionStore, summarizer: new FakeSummarizer(() => "short"), breaker: new CircuitBreaker(), tokens,
      clock: harness.clock, config: harness.config, logger: silentLogger,
    });

    const run = await engine.sweep(harness.conversationId, { deadlineMs: 120_000, hard: false, sizes: configuredSizes(harness.config) });

    const leafPasses = run.passes.filter((pass) => pass.kind === "leaf").length;
    expect(leafPasses).toBeGreaterThan(100);
    // Each item is read a bounded number of times over the whole sweep (~3 measured): the tail, each unit as a plan
    // grows over it, the chunk copied into its plan, the list rebuilt.
    expect(planner.reads).toBeLessThan(6 * harness.items);
    // Every pass loads the messages of its chunk (at most 1,000 tokens: ~30 items), never the backlog.
    expect(sourcesPerPass).toHaveLength(leafPasses);
    expect(Math.max(...sourcesPerPass)).toBeLessThanOrEqual(40);
    expect(sourcesPerPass.reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(harness.items);
    expect(checkInvariants(harness.db, harness.conversationId)).toEqual([]);
  }, 60_000);

  it("reads the context once per phase, not once per pass", async () => {
    // 300 turns = 1,200 items, ~40 leaf passes; the item list is read at the start and never again (no stale pass).
    const harness = await backlogSession(300);
    let lists = 0;
    const compactionStore: CompactionStore = {
      listCompactionItems: (id) => {
        lists++;
        return harness.compactionStore.listCompactionItems(id);
      },
      applyLeafSummary: (range, draft, contextTokens) => harness.compactionStore.applyLeafSummary(range, draft, contextTokens),
      applyCondensedSummary: (range, draft, contextTokens) => harness.compactionStore.applyCondensedSummary(range, draft, contextTokens),
      getSummarySources: (id) => harness.compactionStore.getSummarySources(id),
    };
    const engine = new CompactionEngine({
      store: harness.store, compactionStore, summarizer: new FakeSummarizer(() => "short"), breaker: new CircuitBreaker(), tokens,
      clock: harness.clock, config: harness.config, logger: silentLogger,
    });

    const run = await engine.sweep(harness.conversationId, { deadlineMs: 120_000, hard: false, sizes: configuredSizes(harness.config) });

    expect(run.passes.length).toBeGreaterThan(30);
    expect(lists).toBe(1);
  });

  it("lets the event loop turn between passes when the summarizer answers at once", async () => {
    // A summarizer without I/O (the deterministic summary) resolves as microtasks: without a turn of the event loop
    // between passes, the whole sweep would be one synchronous block. Each summary here "takes" 20 ms of the
    // engine's clock, more than the 10 ms after which the engine takes a turn, so every pass after the first
    // follows one.
    const harness = await backlogSession(300);
    let now = 0;
    const engine = new CompactionEngine({
      store: harness.store, compactionStore: harness.compactionStore,
      summarizer: new FakeSummarizer(() => {
        now += 20;
        return "short";
      }),
      breaker: new CircuitBreaker(), tokens, clock: harness.clock, config: harness.config, logger: silentLogger,
      monotonicNow: () => now,
    });
    let turns = 0;
    let isSweeping = true;
    const countTurns = () => {
      turns++;
      if (isSweeping) setImmediate(countTurns);
    };
    setImmediate(countTurns);

    const run = await engine.sweep(harness.conversationId, { deadlineMs: 120_000, hard: false, sizes: configuredSizes(harness.config) });
    isSweeping = false;

    expect(run.passes.length).toBeGreaterThan(30);
    expect(turns).toBeGreaterThanOrEqual(run.passes.length - 1);
  });
});
