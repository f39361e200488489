import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { WAL_TRUNCATE_BYTES } from "../../src/sqlite/wal-checkpointer.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { createTestEngine } from "../helpers/engine.js";
import { WAL_BOUND_BYTES, walSize } from "../helpers/wal.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";

const nextMacrotask = () => new Promise((resolve) => setImmediate(resolve));

/** A message of about `words` distinct words, so every write adds new pages (no page is rewritten in place). */
function message(index: number, words = 300): AgentMessage {
  const text = Array.from({ length: words }, (_, word) => `w${index}x${word}`).join(" ");
  return index % 2 === 0 ? userMessage(text) : assistantMessage(text);
}

describe("the write-ahead log under sustained writes", () => {
  it("stays under its bound while single messages are ingested back to back, a macrotask apart", async () => {
    const harness = createTestEngine();
    const path = harness.config.databasePath;
    // ~2.4 KB of text each, a handful of 8 KiB pages per commit: 1,500 commits write several times the bound.
    let largest = 0;
    for (let index = 0; index < 1_500; index++) {
      await nextMacrotask();
      const { ingested } = await harness.newEngine().ingest({ sessionId: "s1", message: message(index) });
      expect(ingested).toBe(true);
      largest = Math.max(largest, walSize(path));
    }
    expect(largest).toBeLessThanOrEqual(WAL_BOUND_BYTES);
    expect(harness.db.checkpointer!.boundStats.boundReached).toBeGreaterThan(2); // the log reached its bound, and was held to it
    expect(harness.db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(1_500);
  }, 120_000);

  it("stays under its bound while batches are ingested back to back with nothing between them", async () => {
    const harness = createTestEngine();
    const path = harness.config.databasePath;
    let largest = 0;
    let stored = 0;
    // 60 batches of 500 messages of ~1.2 KB: about 36 MB of text, written as fast as the engine takes it.
    for (let batch = 0; batch < 60; batch++) {
      const messages = Array.from({ length: 500 }, (_, index) => message(batch * 500 + index, 150));
      const sampler = setInterval(() => (largest = Math.max(largest, walSize(path))), 5);
      stored += (await harness.newEngine().ingestBatch({ sessionId: "s1", messages })).ingestedCount;
      clearInterval(sampler);
      largest = Math.max(largest, walSize(path));
    }
    expect(stored).toBe(30_000);
    expect(largest).toBeLessThanOrEqual(WAL_BOUND_BYTES);
    expect(statSync(path).size).toBeGreaterThan(3 * WAL_TRUNCATE_BYTES); // several times the bound went through the log
  }, 120_000);
});
