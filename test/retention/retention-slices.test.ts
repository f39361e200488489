/**
 * Retention never holds the event loop for long: every read and transaction stops once its time slice has run out
 * and the event loop runs before the next. Timing is not asserted (a loaded machine would make it flaky): with a
 * slice of 0 ms every transaction stops after its first row, so the cuts can be counted, and the result must be the
 * same consistent database as with the default slice. The measured blocks are in docs/operations.md.
 */
import { describe, expect, it } from "vitest";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { countEventLoopTurns, DAY, NOW, orphans, retentionSetup, storeExchanges, summarize } from "./retention-helpers.js";

const NO_ORPHANS = {
  summaryMessages: 0, summaryParents: 0, contextItems: 0, messageParts: 0, prunedParts: 0, largeFiles: 0, messages: 0, ftsRowsWithoutMessage: 0,
};

describe("retention in time slices", () => {
  it("empties covered messages one transaction per slice: with every slice spent at once, one message each", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 20); // 40 messages, ~100 days old
    summarize(setup, conversationId, 1, 30); // 30 covered, 10 raw in the context
    await new SqliteSearchIndex(setup.db).indexPending();

    const report = await setup.serviceWith({}, { sliceMs: 0 }).run({ apply: true });
    expect(report.messages.count).toBe(30);
    expect(report.messages.archivePaths).toHaveLength(1); // one archive file ...
    // ... recorded once per transaction, with the messages that transaction emptied: 30 transactions of one.
    const transactions = setup.db.all<{ message_count: number; path: string }>("SELECT message_count, path FROM retention_archives WHERE kind = 'messages'");
    expect(transactions).toHaveLength(30);
    expect(transactions.every((row) => row.message_count === 1 && row.path === report.messages.archivePaths[0])).toBe(true);
    expect(setup.db.get<{ n: number }>("SELECT count(DISTINCT archive_id) AS n FROM messages WHERE archive_id IS NOT NULL")!.n).toBe(30);
    expect(orphans(setup.db)).toEqual(NO_ORPHANS);
    expect((await setup.checker.check()).findings).toEqual([]);
  });

  it("deletes an ended conversation in transactions cut by time, letting the event loop run between them", async () => {
    const setup = retentionSetup({ retentionPruneEndedSessions: true });
    const gone = await storeExchanges(setup, "gone", 15); // 30 messages
    summarize(setup, gone, 1, 20);
    await new SqliteSearchIndex(setup.db).indexPending();
    setup.db.run("UPDATE conversations SET ended_at = ?, end_reason = 'deleted' WHERE conversation_id = ?", NOW - 2 * DAY, gone);

    const turns = countEventLoopTurns();
    const report = await setup.serviceWith({}, { sliceMs: 0 }).run({ apply: true });
    // One batch per transaction: the context items, the two summaries, the messages in two batches, the row itself.
    expect(turns.stop()).toBeGreaterThanOrEqual(5);
    expect(report.conversations).toEqual([expect.objectContaining({ conversationId: gone, messages: 30 })]);
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(0);
    expect(setup.db.get<{ state: string }>("SELECT state FROM retention_archives WHERE kind = 'conversation'")!.state).toBe("done");
    expect(orphans(setup.db)).toEqual(NO_ORPHANS);
    expect((await setup.checker.check()).findings).toEqual([]);
  });

  it("states the longest slice it held the event loop, in its report and its log line", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 20);
    summarize(setup, conversationId, 1, 30);

    const report = await setup.service.runInBackground();
    expect(report?.messages.count).toBe(30);
    // Timing is not asserted (a loaded machine): only that the run measured its slices.
    expect(report!.longestSliceMs).toBeGreaterThan(0);
    expect(Number.isFinite(report!.longestSliceMs)).toBe(true);
    expect(report!.longestSliceCpuMs).toBeGreaterThanOrEqual(0); // Node 24 tells the main thread's CPU time
    const line = setup.logger.lines.find((logged) => logged.message.startsWith("retention: "));
    expect(line?.message).toContain(`longest slice ${report!.longestSliceMs.toFixed(1)} ms (${report!.longestSliceCpuMs!.toFixed(1)} ms CPU)`);
  });

  it("from maintain, starts after the hook returned and lets the event loop run between its transactions", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 20);
    summarize(setup, conversationId, 1, 30);
    const service = setup.serviceWith({}, { sliceMs: 0 });
    const runs: Promise<unknown>[] = [];
    const engine = setup.newEngine({
      retention: {
        runInBackground: () => {
          const run = service.runInBackground();
          if (run) runs.push(run);
          return run;
        },
      },
    });
    const archived = () => setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE archive_id IS NOT NULL")!.n;

    await engine.maintain({ sessionId: "s1" });
    expect(runs).toHaveLength(1);
    expect(archived()).toBe(0); // nothing of the run happened inside the hook
    const turns = countEventLoopTurns();
    await runs[0];
    // 30 transactions of one message, each followed by a turn of the event loop.
    expect(turns.stop()).toBeGreaterThanOrEqual(30);
    expect(archived()).toBe(30);
    expect((await setup.checker.check()).findings).toEqual([]);
  });
});
