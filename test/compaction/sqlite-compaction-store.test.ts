import { describe, expect, it } from "vitest";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { createTestEngine } from "../helpers/engine.js";
import { conversation } from "../helpers/messages.js";

const tokens = new WordTokenEstimator();

async function stored(turns: number) {
  const harness = createTestEngine({ tokens });
  await harness.newEngine().commitTurn({ sessionId: "s1", advancementKey: "k1", messages: conversation(turns) });
  return harness;
}

/** The contract itself (ranges, stale plans, lineage, counters) is test/contract/compaction.contract.test.ts, on every backend. */
describe("SqliteCompactionStore", () => {
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
