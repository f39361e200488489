import { existsSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { checkpointFully, DAY, NOW, orphans, readArchive, retentionSetup, storeExchanges, storeLargeCoveredHistory, summarize } from "./retention-helpers.js";

const NO_ORPHANS = {
  summaryMessages: 0, summaryParents: 0, contextItems: 0, messageParts: 0, prunedParts: 0, largeFiles: 0, messages: 0, ftsRowsWithoutMessage: 0,
};

describe("retention", () => {
  it("does nothing by default (off unless the user sets a cap)", async () => {
    const setup = retentionSetup();
    const conversationId = await storeExchanges(setup, "s1", 20);
    summarize(setup, conversationId, 1, 30);
    const before = setup.db.get<{ text: number }>("SELECT sum(length(content)) AS text FROM messages")!.text;
    const report = await setup.service.run({ apply: true });
    expect(report.enabled).toBe(false);
    expect(report.messages.count).toBe(0);
    expect(setup.db.get<{ text: number }>("SELECT sum(length(content)) AS text FROM messages")!.text).toBe(before);
    expect(setup.service.runInBackground()).toBeNull();
    expect(existsSync(setup.config.retentionArchiveDirectory)).toBe(false);
  });

  it("prunes only covered messages older than the age cap; summaries, the context's raw items and the tail stay", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 20); // 40 messages, all ~100 days old
    summarize(setup, conversationId, 1, 30); // 30 covered, 10 raw in the context
    await new SqliteSearchIndex(setup.db).indexPending();

    const dry = await setup.service.run({ apply: false });
    expect(dry.messages.count).toBe(30);
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE archive_id IS NOT NULL")!.n).toBe(0);

    const report = await setup.service.run({ apply: true });
    expect(report.messages.count).toBe(30);
    const rows = setup.db.all<{ seq: number; content: string; archive_id: number | null }>(
      "SELECT seq, content, archive_id FROM messages WHERE conversation_id = ? ORDER BY seq", conversationId,
    );
    expect(rows.filter((row) => row.archive_id !== null).map((row) => row.seq)).toEqual(Array.from({ length: 30 }, (_, index) => index + 1));
    expect(rows.filter((row) => row.archive_id === null).every((row) => row.content.length > 0)).toBe(true);
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n).toBe(3);
    // The 10 raw context messages (the fresh tail) are untouched and still in the context.
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM context_items WHERE message_id IS NOT NULL")!.n).toBe(10);
    expect(orphans(setup.db)).toEqual(NO_ORPHANS);
    expect((await setup.checker.check()).findings).toEqual([]);
  });

  it("leaves covered messages younger than the age cap", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 150 }); // the history is ~100 days old
    const conversationId = await storeExchanges(setup, "s1", 10);
    summarize(setup, conversationId, 1, 10);
    const report = await setup.service.run({ apply: true });
    expect(report.messages.count).toBe(0);
  });

  it("writes an archive that is complete: every pruned message, its parts and where it was", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 10);
    summarize(setup, conversationId, 1, 10, 5);
    const originals = setup.db.all<{ message_id: number; content: string; meta: string }>(
      "SELECT message_id, content, meta FROM messages WHERE seq <= 10 ORDER BY seq",
    );
    const report = await setup.service.run({ apply: true });
    expect(report.messages.archivePaths).toHaveLength(1);
    const path = report.messages.archivePaths[0]!;
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const records = readArchive(path);
    expect(records[0]).toMatchObject({ type: "retentionArchive", kind: "messages", conversationId, agentId: "main", sessionId: "s1" });
    const messages = records.filter((record) => record.type === "message");
    expect(messages.map((record) => [record.messageId, record.content, record.meta])).toEqual(originals.map((row) => [row.message_id, row.content, row.meta]));
    expect(messages.every((record) => typeof record.summaryId === "string" && Array.isArray(record.parts) && (record.parts as unknown[]).length > 0)).toBe(true);
    expect(records.at(-1)).toEqual({ type: "end", messages: 10 });
    const recorded = setup.db.get<{ path: string; n: number }>(
      "SELECT a.path, count(*) AS n FROM messages m JOIN retention_archives a ON a.archive_id = m.archive_id GROUP BY a.path",
    )!;
    expect(recorded).toEqual({ path, n: 10 });
  });

  it("archives a conversation whose host session is gone whole, removes its rows and files, and stays consistent", async () => {
    const setup = retentionSetup({ retentionPruneEndedSessions: true });
    const gone = await storeExchanges(setup, "gone", 15);
    const kept = await storeExchanges(setup, "kept", 5);
    const [first] = summarize(setup, gone, 1, 20);
    await new SqliteSearchIndex(setup.db).indexPending();
    setup.db.run("UPDATE conversations SET ended_at = ?, end_reason = 'deleted' WHERE conversation_id = ?", NOW - 2 * DAY, gone);

    const report = await setup.service.run({ apply: true });
    expect(report.conversations).toEqual([expect.objectContaining({ conversationId: gone, sessionId: "gone", messages: 30 })]);
    const archivePath = report.conversations[0]!.archivePath!;
    const records = readArchive(archivePath);
    expect(records[0]).toMatchObject({ type: "retentionArchive", kind: "conversation", conversationId: gone });
    expect(records[1]).toMatchObject({ type: "conversation", sessionId: "gone", messageCount: 30 });
    expect(records.filter((record) => record.type === "message")).toHaveLength(30);
    expect(records.at(-1)).toMatchObject({ type: "end", messages: 30, summaries: 2 });

    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM conversations WHERE conversation_id = ?", gone)!.n).toBe(0);
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE conversation_id = ?", gone)!.n).toBe(0);
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE conversation_id = ?", kept)!.n).toBe(10);
    expect(setup.db.get<{ id: string }>("SELECT i.id FROM retention_archived_ids i WHERE i.id = ?", first!)).toBeDefined();
    expect(orphans(setup.db)).toEqual(NO_ORPHANS);
    expect((await setup.checker.check()).findings).toEqual([]);
  });

  it("keeps an ended conversation whose session came back while its archive was written", async () => {
    const setup = retentionSetup({ retentionPruneEndedSessions: true });
    const conversationId = await storeExchanges(setup, "back", 3);
    const updatedAt = setup.db.get<{ updated_at: number }>("SELECT updated_at FROM conversations WHERE conversation_id = ?", conversationId)!.updated_at;
    setup.db.run("UPDATE conversations SET ended_at = 1 WHERE conversation_id = ?", conversationId);
    setup.db.run("UPDATE conversations SET updated_at = ? WHERE conversation_id = ?", updatedAt + 1, conversationId); // a turn arrived
    const archiveId = await setup.retentionStore.beginConversationDeletion({
      kind: "conversation", path: "/nowhere", createdAt: NOW, conversationId, reason: "test", messageCount: 6, seqStart: null, seqEnd: null, byteSize: 0,
    }, updatedAt);
    expect(archiveId).toBeNull();
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM retention_archives")!.n).toBe(0);
  });

  it("under a size cap prunes the oldest covered messages and the file shrinks", async () => {
    const setup = retentionSetup();
    await storeLargeCoveredHistory(setup);
    const space = await setup.retentionStore.space();
    expect(space.autoVacuum).toBe("incremental"); // new files are created with auto_vacuum=INCREMENTAL
    const fileBefore = statSync(setup.config.databasePath).size;
    const usedMb = space.usedBytes / 1_048_576;
    const capMb = Math.max(1, Math.floor(usedMb / 2));
    const capped = setup.serviceWith({ retentionMaxDatabaseMb: capMb });

    const report = await capped.run({ apply: true });
    expect(report.messages.count).toBeGreaterThan(0);
    expect(report.usedBytesAfter).toBeLessThan(report.usedBytesBefore);
    // The emptied rows are packed (stubs deleted and inserted again), so the pages they took go back: under the cap.
    expect(report.usedBytesAfter).toBeLessThanOrEqual(capMb * 1_048_576);
    expect(report.vacuumedBytes).toBeGreaterThan(0);
    await checkpointFully(setup.db);
    expect(statSync(setup.config.databasePath).size).toBeLessThan(fileBefore);
    // Oldest first: what was pruned is a prefix of the covered messages.
    const pruned = setup.db.all<{ seq: number }>("SELECT seq FROM messages WHERE archive_id IS NOT NULL ORDER BY seq").map((row) => row.seq);
    expect(pruned).toEqual(Array.from({ length: pruned.length }, (_, index) => index + 1));
    expect(orphans(setup.db)).toEqual(NO_ORPHANS);
    expect((await setup.checker.check()).findings).toEqual([]);
  });

  it("starts at most one background run per interval from maintain", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 5);
    summarize(setup, conversationId, 1, 10);
    const first = setup.service.runInBackground();
    expect(first).not.toBeNull();
    expect(setup.service.runInBackground()).toBeNull(); // running, and within the interval
    expect((await first)!.messages.count).toBe(10);
    expect(setup.service.runInBackground()).toBeNull();
    setup.clock.current += 11 * 60 * 1_000;
    expect(await setup.service.runInBackground()).toMatchObject({ messages: { count: 0 } });
  });
});
