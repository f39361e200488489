import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";

/**
 * Indexing a backlog in chunks, each one write transaction on the event loop: how big a chunk gets, and that the
 * event loop turns fully (timers included) between two of them. Observed from inside each transaction (writeNow).
 */
type Harness = ReturnType<typeof createTestEngine>;

/** Words with letters, new to the dictionary: `count` of them, distinct by `tag`. */
const words = (tag: string, count: number) => Array.from({ length: count }, (_, index) => `${tag}${index.toString(36)}x`).join(" ");

async function store(harness: Harness, texts: string[]): Promise<void> {
  const messages: AgentMessage[] = texts.map((text, index) => (index % 2 === 0 ? userMessage(text) : assistantMessage(text)));
  expect((await harness.newEngine().ingestBatch({ sessionId: "s1", messages })).ingestedCount).toBe(texts.length);
}

/** Calls the observer in every write transaction of the connection, before and after the transaction's work. */
function observeWrites(harness: Harness, observer: { before?: () => void; after?: () => void }): void {
  const writeNow = harness.db.writeNow.bind(harness.db);
  harness.db.writeNow = <T>(body: () => T): T =>
    writeNow(() => {
      observer.before?.();
      const result = body();
      observer.after?.();
      return result;
    });
}

describe("indexing chunks", () => {
  it("leaves a row whose new words would take a chunk past its budget to a later chunk, and lists them in shares first", async () => {
    const harness = createTestEngine();
    // 4,000 new words at the first estimate of 0.04 ms each: 160 ms of listing and commit, far past a chunk's 12 ms.
    await store(harness, [words("a", 10), words("b", 10), words("c", 10), words("long", 4_000), words("d", 10), words("e", 10)]);
    const index = new SqliteSearchIndex(harness.db);
    const terms = () => harness.db.get<{ n: number }>("SELECT count(*) AS n FROM search_terms")!.n;
    const writes: { rows: number; first: number; last: number; listed: number }[] = [];
    let before = { through: 0, terms: 0 };
    observeWrites(harness, {
      before: () => (before = { through: index.through("messages_fts"), terms: terms() }),
      // Message ids are 1 to 6, in the order stored: the rows a chunk indexed are the ids it advanced over.
      after: () => {
        const through = index.through("messages_fts");
        writes.push({ rows: through - before.through, first: before.through + 1, last: through, listed: terms() - before.terms });
      },
    });
    expect((await index.indexPending()).indexed).toBe(6);
    const chunks = writes.filter((write) => write.rows > 0);
    // Before: the long row ended the first chunk (3 short rows + the long one, 4,030 words in one transaction). Now
    // the short rows before it go in a chunk (or several, when the machine is slow) of their own, and its chunk starts
    // with it (its words listed ahead in shares, the rows after it may join it).
    expect(chunks.find((write) => write.first <= 4 && write.last >= 4)).toMatchObject({ first: 4 });
    expect(chunks[0]).toMatchObject({ first: 1 });
    expect(chunks[0]!.last).toBeLessThan(4);
    const listedAhead = writes.filter((write) => write.rows === 0 && write.listed > 0);
    expect(listedAhead.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...writes.map((write) => write.listed))).toBeLessThanOrEqual(2_000);
    expect(chunks.reduce((total, write) => total + write.rows, 0)).toBe(6);
    expect(terms()).toBe(4_050);
    expect(await index.verify("messages_fts")).toBeNull();
  });

  it("lets timers run between two chunks, even when indexing starts in a timer callback", async () => {
    const harness = createTestEngine();
    // 350 short rows of numbers (no dictionary words): 4 chunks of at most 100 rows.
    await store(harness, Array.from({ length: 350 }, (_, row) => Array.from({ length: 20 }, (_, word) => String(row * 100 + word)).join(" ")));
    const index = new SqliteSearchIndex(harness.db);
    const events: string[] = [];
    let through = 0;
    observeWrites(harness, {
      before: () => {
        through = index.through("messages_fts");
        // A timer the host sets while a chunk runs: due by the end of the chunk (which takes at least 2 ms).
        setTimeout(() => events.push("timer"), 0);
        const started = performance.now();
        while (performance.now() - started < 2);
      },
      after: () => {
        if (index.through("messages_fts") > through) events.push("chunk");
      },
    });
    // Resumed by a timer: with one setImmediate between chunks, the next chunk ran in the same loop iteration's
    // check phase, before the timer set during the one before (two chunks in one block of the event loop).
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect((await index.indexPending()).indexed).toBe(350);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const chunkCount = events.filter((event) => event === "chunk").length;
    expect(chunkCount).toBeGreaterThanOrEqual(4);
    for (let position = 1; position < events.length; position++) {
      if (events[position] === "chunk") expect(events[position - 1], events.join(" ")).toBe("timer");
    }
  });
});
