import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { SqliteSearchIndex, crisisMergeDepth } from "../../src/sqlite/sqlite-search-index.js";
import { segmentsPerLevel } from "../../src/sqlite/fts5-structure.js";
import { createTestEngine } from "../helpers/engine.js";
import { WAL_BOUND_BYTES, walSize } from "../helpers/wal.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";

/**
 * Indexing a large backlog (spec 012, "Indexing a backlog"). FTS5 merges level 0 of an index inside the write that
 * flushes its `crisismerge`th segment, and each level above that the merge fills up, in the same transaction. Every
 * indexing chunk adds one segment to level 0; with nothing merged in between, the 4,096th chunk of a backlog
 * rewrote the index of 409,600 messages in one transaction (130 MB of log at a million messages). Here
 * `crisismerge` is 4 (FTS5 accepts 2 and up), so the same cascades come after 16, 64 and 256 chunks (the indexer
 * before this change merged in 80 of its 300 chunks here, in 25 of them a level above 0 too).
 */
const CRISIS_SEGMENTS = 4;

/** ~40 numbers (no dictionary words): chunks of 100 rows index quickly, whatever the machine's load. */
function message(index: number): AgentMessage {
  const text = Array.from({ length: 40 }, (_, word) => String(index * 1_000 + word)).join(" ");
  return index % 2 === 0 ? userMessage(text) : assistantMessage(text);
}

describe("segmentsPerLevel and crisisMergeDepth", () => {
  it("reads the segments of each level from FTS5's structure record (version 2: contentless_delete)", () => {
    // cookie, V2 marker, 3 levels, 1 segment, write counter 0; levels 0 and 1 empty; level 2: one segment of 8 fields.
    const record = Buffer.from("00000001ff0000010301000000000000010101836501690000ce21", "hex");
    expect(segmentsPerLevel(record)).toEqual([0, 0, 1]);
    expect(segmentsPerLevel(Buffer.from("00000001", "hex"))).toBeNull();
  });

  it("counts the levels one more level-0 segment would make FTS5 merge at once", () => {
    expect(crisisMergeDepth([14, 15], 16)).toBe(0); // 15 on level 0: no merge
    expect(crisisMergeDepth([15, 14], 16)).toBe(1); // level 0 merged; level 1 gets its 15th
    expect(crisisMergeDepth([15, 15, 15, 3], 16)).toBe(3); // levels 0, 1 and 2 in one transaction
  });
});

describe("the write-ahead log while a backlog is indexed", () => {
  it("stays under its bound, and no indexing chunk makes FTS5 merge levels in its own transaction", async () => {
    const harness = createTestEngine();
    const path = harness.config.databasePath;
    harness.db.run(`INSERT INTO messages_fts (messages_fts, rank) VALUES ('crisismerge', ${CRISIS_SEGMENTS})`);
    // The worker's merges take a level of `usermerge` segments (4 by default): 2 here, below the crisis size.
    harness.db.run("INSERT INTO messages_fts (messages_fts, rank) VALUES ('usermerge', 2)");
    const total = 30_000; // 300 chunks of 100 rows: past the cascades at 16, 64 and 256 chunks
    for (let start = 0; start < total; start += 500) {
      const messages = Array.from({ length: 500 }, (_, offset) => message(start + offset));
      expect((await harness.newEngine().ingestBatch({ sessionId: "s1", messages })).ingestedCount).toBe(500);
    }
    const index = new SqliteSearchIndex(harness.db);
    // Every write transaction of the main connection that indexes rows, observed from inside it: the levels as it
    // starts are the levels its flush meets (no other connection writes until it commits), so FTS5's rule says
    // whether its commit merges any.
    const crisisMerges: string[] = [];
    const writeNow = harness.db.writeNow.bind(harness.db);
    harness.db.writeNow = <T>(body: () => T): T =>
      writeNow(() => {
        const [levels, through] = [index.segmentsPerLevel("messages_fts"), index.through("messages_fts")];
        const result = body();
        if (index.through("messages_fts") > through && crisisMergeDepth(levels, CRISIS_SEGMENTS) > 0) crisisMerges.push(levels.join(","));
        return result;
      });
    let largestWal = 0;
    const sampler = setInterval(() => (largestWal = Math.max(largestWal, walSize(path))), 1);
    const { indexed } = await index.indexPending();
    clearInterval(sampler);
    largestWal = Math.max(largestWal, walSize(path));

    expect(indexed).toBe(total);
    expect(crisisMerges).toEqual([]);
    expect(largestWal).toBeLessThanOrEqual(WAL_BOUND_BYTES);
    expect(await index.verify("messages_fts")).toBeNull();
  }, 180_000);
});
