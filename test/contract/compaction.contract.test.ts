/**
 * The compaction store contract on every backend the run tests: each apply replaces exactly the planned range with one
 * summary item (or writes nothing and says "stale"), links the summary to its sources, keeps the counters true and
 * never deletes a message; and, through the engine, turns played with a small budget compact into a lineage that
 * loses nothing and assembles within the budget.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { condensedDraft, leafDraft } from "../../src/compaction/summary-draft.js";
import type { PlannedRange } from "../../src/store/compaction-store.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { generateSession } from "../helpers/agent-session.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { conversation } from "../helpers/messages.js";
import { checkStoreInvariants } from "../helpers/store-invariants.js";
import { playTurns } from "../helpers/turn-driver.js";

const tokens = new WordTokenEstimator();

describe.each(backendKinds())("compaction on %s", (kind) => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
  });
  afterEach(async () => {
    resetSharedCircuitBreakers();
    await opened.close();
  });

  async function stored(turns: number) {
    const harness = createTestEngine({ tokens, backend: opened.backend });
    await harness.newEngine().commitTurn({ sessionId: "s1", advancementKey: "k1", messages: conversation(turns) });
    const conversationId = (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId;
    const items = await harness.compactionStore.listCompactionItems(conversationId);
    const range = (from: number, to: number): PlannedRange => ({ conversationId, items: items.slice(from, to) });
    const summarizeLeaf = async (from: number, to: number, content = "leaf summary") => {
      const messages = await harness.store.getMessages(items.slice(from, to).map((item) => item.messageId!));
      const draft = leafDraft(messages, { content, level: "normal", createdAt: 5, tokens });
      return { draft, result: await harness.compactionStore.applyLeafSummary(range(from, to), draft, 7) };
    };
    const invariants = () => checkStoreInvariants(opened.backend, conversationId);
    return { ...harness, conversationId, items, range, summarizeLeaf, invariants };
  }

  it("replaces exactly the planned range with one summary item and keeps the counters true", async () => {
    const { summarizeLeaf, compactionStore, conversationId, store, invariants } = await stored(4);
    // conversation(4) = 8 messages of 9 tokens each (5 words + 4): 72 tokens, 36 replaced by a 7-token item.
    const { result } = await summarizeLeaf(0, 4);
    expect(result).toMatchObject({ kind: "applied", tokensRemoved: 36, tokensAdded: 7 });
    const after = await compactionStore.listCompactionItems(conversationId);
    expect(after.map((item) => item.summaryRowId === null ? "m" : `s${item.depth}`).join("")).toBe("s0mmmm");
    expect(after[0]!.ordinal).toBe(1);
    expect(await store.getConversation(conversationId)).toMatchObject({ contextTokens: 43, contextRawTokens: 36, contextItemCount: 5, messageCount: 8 });
    expect(await invariants()).toEqual([]);
  });

  it("answers the memory floor's read: the newest older item's time and the newest summary within reach", async () => {
    const { summarizeLeaf, store, conversationId, items } = await stored(4);
    const { draft } = await summarizeLeaf(0, 4);
    // Context now: the summary at ordinal 1, then the messages at ordinals 5 to 8.
    const summary = (await store.getSummary(draft.summaryId))!;
    const [newest] = await store.getMessages([items[7]!.messageId!]);
    expect(await store.olderContext(conversationId, 8, 10)).toEqual({ newestAt: newest!.createdAt, newestSummary: summary });
    // Four items back from ordinal 8 reach ordinal 5: no summary among them.
    expect(await store.olderContext(conversationId, 8, 4)).toEqual({ newestAt: newest!.createdAt, newestSummary: null });
    // At or before ordinal 3 is the summary alone (ordinals 2 to 4 were replaced by it): its latest source's time.
    expect(summary.latestAt).toBeLessThan(newest!.createdAt);
    expect(await store.olderContext(conversationId, 3, 1)).toEqual({ newestAt: summary.latestAt, newestSummary: summary });
    expect(await store.olderContext(conversationId, 0, 10)).toEqual({ newestAt: 0, newestSummary: null });
    expect(await store.olderContext(987_654, 8, 10)).toEqual({ newestAt: 0, newestSummary: null });
  });

  it("never deletes messages or their parts", async () => {
    const { summarizeLeaf, store, conversationId } = await stored(4);
    const before = await store.getMessagesBySeq(conversationId, 1, 100, 100);
    await summarizeLeaf(0, 6);
    expect(await store.getMessagesBySeq(conversationId, 1, 100, 100)).toEqual(before);
  });

  it("writes nothing and reports stale when the range changed since planning", async () => {
    const { summarizeLeaf, store, compactionStore, conversationId, invariants } = await stored(4);
    const { result: first } = await summarizeLeaf(0, 4);
    const itemsAfter = await compactionStore.listCompactionItems(conversationId);
    const conversationAfter = await store.getConversation(conversationId);
    const replay = await summarizeLeaf(0, 4, "the same plan again");
    expect(replay.result).toMatchObject({ kind: "stale", reason: expect.stringMatching(/context item|context items/) });
    expect(await store.getSummary(replay.draft.summaryId)).toBeNull();
    expect(await compactionStore.listCompactionItems(conversationId)).toEqual(itemsAfter);
    expect(await store.getConversation(conversationId)).toEqual(conversationAfter);
    expect(first.kind).toBe("applied");
    expect(await invariants()).toEqual([]);
  });

  it("answers stale, writing nothing, when a planned item names another message than the one stored at its ordinal", async () => {
    const { compactionStore, conversationId, store, items, invariants } = await stored(3);
    const messages = await store.getMessages(items.slice(0, 3).map((item) => item.messageId!));
    const draft = leafDraft(messages, { content: "leaf", level: "normal", createdAt: 5, tokens });
    // Ordinals and kinds as stored; the second item names the fourth item's message.
    const forged = [items[0]!, { ...items[1]!, messageId: items[3]!.messageId }, items[2]!];
    const before = await compactionStore.listCompactionItems(conversationId);
    const result = await compactionStore.applyLeafSummary({ conversationId, items: forged }, draft, 3);
    expect(result).toEqual({ kind: "stale", reason: expect.stringContaining(`context item at ordinal ${items[1]!.ordinal} changed`) });
    expect(await store.getSummary(draft.summaryId)).toBeNull();
    expect(await compactionStore.listCompactionItems(conversationId)).toEqual(before);
    expect(await invariants()).toEqual([]);
  });

  it("answers stale for an empty plan", async () => {
    const { compactionStore, conversationId, store, items } = await stored(1);
    const draft = leafDraft(await store.getMessages([items[0]!.messageId!]), { content: "x", level: "normal", createdAt: 1, tokens });
    expect(await compactionStore.applyLeafSummary({ conversationId, items: [] }, draft, 1)).toEqual({ kind: "stale", reason: "the planned range is empty" });
    expect(await store.getSummary(draft.summaryId)).toBeNull();
  });

  it("computes the leaf's metadata from its sources, and reads summaries by row id in the order asked", async () => {
    const { summarizeLeaf, store } = await stored(4);
    const { draft, result } = await summarizeLeaf(2, 6);
    const summary = (await store.getSummary(draft.summaryId))!;
    expect(summary).toMatchObject({ kind: "leaf", depth: 0, seqStart: 3, seqEnd: 6, sourceMessageCount: 4, sourceTokenCount: 36, descendantCount: 0, content: "leaf summary" });
    expect(summary.earliestAt).toBeLessThan(summary.latestAt);
    if (result.kind !== "applied") throw new Error("not applied");
    expect(await store.getSummariesByRowIds([987_654, result.summaryRowId])).toEqual([summary]);
    expect(await store.getSummariesByRowIds([])).toEqual([]);
    expect(await store.getSummary("sum_unknown")).toBeNull();
  });

  it("links a condensed summary to its parents and carries their lineage", async () => {
    const { summarizeLeaf, compactionStore, conversationId, store, invariants } = await stored(6);
    await summarizeLeaf(0, 4);
    const items = await compactionStore.listCompactionItems(conversationId);
    const second = await store.getMessages(items.slice(1, 5).map((item) => item.messageId!));
    const secondDraft = leafDraft(second, { content: "second leaf \u0000\u2028😀", level: "normal", createdAt: 6, tokens });
    await compactionStore.applyLeafSummary({ conversationId, items: items.slice(1, 5) }, secondDraft, 7);
    expect((await store.getSummary(secondDraft.summaryId))?.content).toBe("second leaf \u0000\u2028😀");
    const leaves = (await compactionStore.listCompactionItems(conversationId)).slice(0, 2);
    const parents = await store.getSummariesByRowIds(leaves.map((item) => item.summaryRowId!));
    const draft = condensedDraft(parents, { content: "condensed", level: "aggressive", createdAt: 7, tokens });
    const result = await compactionStore.applyCondensedSummary({ conversationId, items: leaves }, draft, 5);
    expect(result.kind).toBe("applied");
    const condensed = (await store.getSummary(draft.summaryId))!;
    expect(condensed).toMatchObject({ kind: "condensed", depth: 1, descendantCount: 2, sourceMessageCount: 8, seqStart: 1, seqEnd: 8 });
    expect(condensed.parentSummaryIds).toEqual(parents.map((parent) => parent.summaryId));
    if (result.kind !== "applied") throw new Error("not applied");
    // By row id, as assemble reads the context's summaries: parents in their order, the list's order kept, unknown ids left out.
    expect((await store.getSummariesByRowIds([result.summaryRowId, 987_654, leaves[1]!.summaryRowId!])).map((summary) => [summary.summaryId, summary.parentSummaryIds]))
      .toEqual([[draft.summaryId, parents.map((parent) => parent.summaryId)], [parents[1]!.summaryId, []]]);
    expect((await compactionStore.getSummarySources(result.summaryRowId)).parentRowIds).toEqual(leaves.map((item) => item.summaryRowId));
    // What lcm_describe reads of each: children, sources in order (up to the limit), parents, whether it is in the context.
    const firstSources = (await store.getMessagesBySeq(conversationId, 1, 3, 10)).map((message) => message.messageId);
    expect(await opened.backend.retrieval.summaryLineage(leaves[0]!.summaryRowId!, conversationId, 3)).toEqual({
      childSummaryIds: [draft.summaryId], sourceMessageIds: firstSources, parentRowIds: [], inContext: false, archivedSources: [],
    });
    expect(await opened.backend.retrieval.summaryLineage(result.summaryRowId, conversationId, 500)).toEqual({
      childSummaryIds: [], sourceMessageIds: [], parentRowIds: leaves.map((item) => item.summaryRowId), inContext: true, archivedSources: [],
    });
    // By the summary's id (lcm_describe reads it while the id is located): the same lineage; null for an unknown id.
    expect(await opened.backend.retrieval.summaryLineageById(parents[0]!.summaryId, 3))
      .toEqual(await opened.backend.retrieval.summaryLineage(leaves[0]!.summaryRowId!, conversationId, 3));
    expect(await opened.backend.retrieval.summaryLineageById(draft.summaryId, 500))
      .toEqual(await opened.backend.retrieval.summaryLineage(result.summaryRowId, conversationId, 500));
    expect(await opened.backend.retrieval.summaryLineageById("sum_0000000000000000", 500)).toBeNull();
    expect(await compactionStore.getSummarySources(987_654)).toEqual({ messageIds: [], parentRowIds: [] });
    expect(await invariants()).toEqual([]);
  });

  it("refuses to condense a range that holds a raw message", async () => {
    const { summarizeLeaf, compactionStore, conversationId, store } = await stored(4);
    await summarizeLeaf(0, 4);
    const items = await compactionStore.listCompactionItems(conversationId);
    const parents = await store.getSummariesByRowIds([items[0]!.summaryRowId!]);
    const draft = condensedDraft(parents, { content: "x", level: "normal", createdAt: 1, tokens });
    const result = await compactionStore.applyCondensedSummary({ conversationId, items: items.slice(0, 2) }, draft, 1);
    expect(result).toMatchObject({ kind: "stale", reason: expect.stringContaining("not a summary") });
    expect(await store.getSummary(draft.summaryId)).toBeNull();
  });

  it("compacts turns played with a small budget into a lineage that loses nothing, and assembles within the budget", async () => {
    const config = { freshTailCount: 4, leafMinFanout: 4, leafChunkTokens: 256, leafTargetTokens: 64, condensedTargetTokens: 64, condensedMinFanout: 3, condensedMinFanoutHard: 2 };
    const harness = createTestEngine({ config, tokens, backend: opened.backend });
    const turns = generateSession({ seed: 28, turns: 30, maxWords: 40 });
    await playTurns(harness.newEngine, turns, { tokenBudget: 1_500 });
    const compacted = await harness.newEngine().compact({ sessionId: "s1", sessionKey: "agent:main:main", force: true, tokenBudget: 600, compactionTarget: "threshold" });
    expect(compacted).toMatchObject({ ok: true, compacted: true });
    const conversationRecord = (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!;
    const items = await harness.compactionStore.listCompactionItems(conversationRecord.conversationId);
    expect(items.some((item) => item.depth !== null && item.depth >= 1)).toBe(true);
    expect(conversationRecord.messageCount).toBe(turns.flat().length);
    expect(await checkStoreInvariants(opened.backend, conversationRecord.conversationId)).toEqual([]);
    // Status groups the summaries by depth: at least those the context shows, each with its tokens.
    const stats = await opened.backend.status.summaryStats(conversationRecord.conversationId);
    expect(stats.map((row) => row.depth)).toEqual([...new Set(stats.map((row) => row.depth))].sort());
    for (const item of items.filter((entry) => entry.depth !== null)) {
      expect(stats.find((row) => row.depth === item.depth)?.count).toBeGreaterThan(0);
    }
    expect(stats.every((row) => row.tokens > 0 && row.fallbackCount === 0)).toBe(true);
    const assembled = await harness.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 1_500 });
    expect(assembled.estimatedTokens).toBeLessThanOrEqual(1_500);
    expect(assembled.messages.length).toBeGreaterThan(0);
  });
});
