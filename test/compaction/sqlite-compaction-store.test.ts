import { describe, expect, it } from "vitest";
import { condensedDraft, leafDraft } from "../../src/compaction/summary-draft.js";
import type { PlannedRange } from "../../src/store/compaction-store.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { checkInvariants } from "../helpers/dag-invariants.js";
import { createTestEngine } from "../helpers/engine.js";
import { conversation } from "../helpers/messages.js";

const tokens = new WordTokenEstimator();

async function stored(turns: number) {
  const harness = createTestEngine({ tokens });
  await harness.newEngine().commitTurn({ sessionId: "s1", advancementKey: "k1", messages: conversation(turns) });
  const conversationId = (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId;
  const items = await harness.compactionStore.listCompactionItems(conversationId);
  const range = (from: number, to: number): PlannedRange => ({ conversationId, items: items.slice(from, to) });
  const summarizeLeaf = async (from: number, to: number, content = "leaf summary") => {
    const messages = await harness.store.getMessages(items.slice(from, to).map((item) => item.messageId!));
    const draft = leafDraft(messages, { content, level: "normal", createdAt: 5, tokens });
    return { draft, result: await harness.compactionStore.applyLeafSummary(range(from, to), draft, 7) };
  };
  return { ...harness, conversationId, items, range, summarizeLeaf };
}

describe("SqliteCompactionStore", () => {
  it("replaces exactly the planned range with one summary item and keeps the counters true", async () => {
    const { summarizeLeaf, compactionStore, conversationId, store, db } = await stored(4);
    // conversation(4) = 8 messages of 9 tokens each (5 words + 4): 72 tokens, 36 replaced by a 7-token item.
    const { result } = await summarizeLeaf(0, 4);
    expect(result).toMatchObject({ kind: "applied", tokensRemoved: 36, tokensAdded: 7 });
    const after = await compactionStore.listCompactionItems(conversationId);
    expect(after.map((item) => item.summaryRowId === null ? "m" : `s${item.depth}`).join("")).toBe("s0mmmm");
    expect(after[0]!.ordinal).toBe(1);
    const conversationRecord = (await store.getConversation(conversationId))!;
    expect(conversationRecord).toMatchObject({ contextTokens: 43, contextRawTokens: 36, contextItemCount: 5, messageCount: 8 });
    expect(checkInvariants(db, conversationId)).toEqual([]);
  });

  it("never deletes messages or their parts", async () => {
    const { summarizeLeaf, db } = await stored(4);
    const before = db.get<{ messages: number; parts: number }>(
      "SELECT (SELECT COUNT(*) FROM messages) AS messages, (SELECT COUNT(*) FROM message_parts) AS parts",
    );
    await summarizeLeaf(0, 6);
    expect(db.get("SELECT (SELECT COUNT(*) FROM messages) AS messages, (SELECT COUNT(*) FROM message_parts) AS parts")).toEqual(before);
  });

  it("writes nothing and reports stale when the range changed since planning", async () => {
    const { summarizeLeaf, db } = await stored(4);
    await summarizeLeaf(0, 4);
    const replay = await summarizeLeaf(0, 4, "the same plan again");
    expect(replay.result).toMatchObject({ kind: "stale" });
    expect(db.get<{ count: number }>("SELECT COUNT(*) AS count FROM summaries")!.count).toBe(1);
  });

  it("computes the leaf's metadata from its sources", async () => {
    const { summarizeLeaf, store } = await stored(4);
    const { draft } = await summarizeLeaf(2, 6);
    const summary = (await store.getSummary(draft.summaryId))!;
    expect(summary).toMatchObject({ kind: "leaf", depth: 0, seqStart: 3, seqEnd: 6, sourceMessageCount: 4, sourceTokenCount: 36, descendantCount: 0 });
    expect(summary.earliestAt).toBeLessThan(summary.latestAt);
  });

  it("links a condensed summary to its parents and carries their lineage", async () => {
    const { summarizeLeaf, compactionStore, conversationId, store, db } = await stored(6);
    await summarizeLeaf(0, 4);
    // The context is now [s0, m5 .. m12]: summarize m5..m8 as a second leaf.
    const items = await compactionStore.listCompactionItems(conversationId);
    const second = await store.getMessages(items.slice(1, 5).map((item) => item.messageId!));
    const secondDraft = leafDraft(second, { content: "second leaf", level: "normal", createdAt: 6, tokens });
    await compactionStore.applyLeafSummary({ conversationId, items: items.slice(1, 5) }, secondDraft, 7);
    const leaves = (await compactionStore.listCompactionItems(conversationId)).slice(0, 2);
    const parents = await store.getSummariesByRowIds(leaves.map((item) => item.summaryRowId!));
    const draft = condensedDraft(parents, { content: "condensed", level: "aggressive", createdAt: 7, tokens });
    const result = await compactionStore.applyCondensedSummary({ conversationId, items: leaves }, draft, 5);
    expect(result.kind).toBe("applied");
    const condensed = (await store.getSummary(draft.summaryId))!;
    expect(condensed).toMatchObject({ kind: "condensed", depth: 1, descendantCount: 2, sourceMessageCount: 8, seqStart: 1, seqEnd: 8 });
    expect(condensed.parentSummaryIds).toEqual(parents.map((parent) => parent.summaryId));
    if (result.kind === "applied") {
      expect((await compactionStore.getSummarySources(result.summaryRowId)).parentRowIds).toEqual(leaves.map((item) => item.summaryRowId));
    }
    expect(checkInvariants(db, conversationId)).toEqual([]);
  });

  it("refuses to condense a range that holds a raw message", async () => {
    const { summarizeLeaf, compactionStore, conversationId, store } = await stored(4);
    await summarizeLeaf(0, 4);
    const items = await compactionStore.listCompactionItems(conversationId);
    const parents = await store.getSummariesByRowIds([items[0]!.summaryRowId!]);
    const draft = condensedDraft(parents, { content: "x", level: "normal", createdAt: 1, tokens });
    const result = await compactionStore.applyCondensedSummary({ conversationId, items: items.slice(0, 2) }, draft, 1);
    expect(result).toMatchObject({ kind: "stale" });
  });

  it("reads the context for planning through the primary key, not a scan", async () => {
    const { db } = await stored(1);
    const plan = db.all<{ detail: string }>(
      `EXPLAIN QUERY PLAN SELECT c.ordinal, c.message_id, c.summary_id, c.token_count, c.flags, s.depth
       FROM context_items c LEFT JOIN summaries s ON s.id = c.summary_id WHERE c.conversation_id = ? ORDER BY c.ordinal`,
      1,
    ).map((row) => row.detail);
    expect(plan.join(" | ")).toMatch(/SEARCH c USING PRIMARY KEY \(conversation_id=\?\)/);
    expect(plan.join(" | ")).toMatch(/SEARCH s USING INTEGER PRIMARY KEY/);
  });
});
