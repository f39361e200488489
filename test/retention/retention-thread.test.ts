/**
 * Retention's background run on a worker thread (retention/retention-thread.ts), as the plugin wires it for a database
 * file (plugin.ts retentionServiceFor): the same archives and stubs as a run on the calling thread, made through the
 * worker's own connection while the calling thread goes on writing; a worker that cannot run says why and changes
 * nothing; where no worker can start, the run goes on the calling thread. The ages here are relative to the real
 * clock (the worker's), which the helpers' fixed message dates (2026-11-01) are weeks behind.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { retentionServiceFor } from "../../src/plugin.js";
import { sqliteBackendOn } from "../../src/sqlite/open-sqlite-backend.js";
import { runOnRetentionThread } from "../../src/retention/retention-thread.js";
import { MAINTAIN_BUDGET, type RetentionReport } from "../../src/retention/retention-service.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { RecordingLogger } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { orphans, readArchive, retentionSetup, storeExchanges, storeLargeCoveredHistory, summarize } from "./retention-helpers.js";

const AGE_CAP = { retentionMaxAgeDays: 7 };

describe("retention on a worker thread", () => {
  it("maintain's run empties the covered messages through the worker's connection and reports where it ran", async () => {
    const setup = retentionSetup(AGE_CAP);
    const conversationId = await storeExchanges(setup, "s1", 20); // 40 messages
    summarize(setup, conversationId, 1, 30); // 30 covered, 10 raw in the context
    await new SqliteSearchIndex(setup.db).indexPending();
    const logger = new RecordingLogger();

    const report = await retentionServiceFor(sqliteBackendOn(setup.db), setup.config, logger).runInBackground();
    expect(report).toMatchObject({ thread: "worker", applied: true, messages: { count: 30 } });
    expect(report!.callerLoopMaxDelayMs).toBeGreaterThanOrEqual(0);
    expect(report!.callerBusyMs).toBeGreaterThan(0);
    // The calling thread's connection sees what the worker committed.
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE archive_id IS NOT NULL AND content = ''")!.n).toBe(30);
    const archived = readArchive(report!.messages.archivePaths[0]!).filter((record) => record.type === "message");
    expect(archived.map((record) => record.seq)).toEqual(Array.from({ length: 30 }, (_, index) => index + 1));
    expect(Object.values(orphans(setup.db)).every((count) => count === 0)).toBe(true);
    expect((await setup.checker.check()).findings).toEqual([]);
    expect(logger.lines.filter((line) => line.level === "info").map((line) => line.message)).toEqual([
      expect.stringMatching(/archived 30 covered message\(s\).* on a worker thread, longest slice [\d.]+ ms.*the gateway's event loop meanwhile: longest delay [\d.]+ ms, of which the run's own work on it at most [\d.]+ ms/),
    ]);
  });

  it("the calling thread keeps storing turns while the worker prunes: nothing of either is lost", async () => {
    const setup = retentionSetup(AGE_CAP);
    await storeLargeCoveredHistory(setup); // 1,150 covered messages of ~2 KB
    const service = retentionServiceFor(sqliteBackendOn(setup.db), setup.config, new RecordingLogger());

    const run = service.runInBackground({ ...MAINTAIN_BUDGET, maxMs: 60_000 })!;
    let turnsStored = 0;
    let settled = false;
    void run.finally(() => (settled = true));
    // Turns of a live session, one after another, until the run has reported (at least one).
    do {
      await setup.newEngine().ingestBatch({
        sessionId: "live", messages: [userMessage(`live question ${turnsStored}`), assistantMessage(`live answer ${turnsStored}`)],
      });
      turnsStored++;
      await new Promise((resolve) => setTimeout(resolve, 5)); // a turn's I/O: the worker's messages come in here
    } while (!settled);
    const report = await run;

    expect(report).toMatchObject({ thread: "worker", messages: { count: 1_150 } });
    expect(turnsStored).toBeGreaterThan(1); // the worker started and ran while turns were stored
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE archive_id IS NOT NULL")!.n).toBe(1_150);
    const live = setup.db.all<{ content: string }>(
      "SELECT m.content FROM messages m JOIN conversations c USING (conversation_id) WHERE c.session_id = 'live' ORDER BY m.seq",
    );
    expect(live).toHaveLength(turnsStored * 2);
    expect(live.every((row) => row.content.startsWith("live "))).toBe(true);
    expect(Object.values(orphans(setup.db)).every((count) => count === 0)).toBe(true);
    expect((await setup.checker.check()).findings).toEqual([]);
  });

  it("a worker that cannot open the database says why, and the file is not changed", async () => {
    const setup = retentionSetup(AGE_CAP);
    const notADatabase = join(setup.directory, "notes.db");
    writeFileSync(notADatabase, "these are notes, not SQLite\n".repeat(200));
    const before = readFileSync(notADatabase);
    let ranOnCallingThread = false;

    const run = runOnRetentionThread(
      { databasePath: notADatabase, archiveDirectory: join(setup.directory, "archives"), settings: { ...AGE_CAP, retentionMaxDatabaseMb: 0, retentionPruneEndedSessions: false }, budget: MAINTAIN_BUDGET },
      { logger: new RecordingLogger(), onCallingThread: async () => { ranOnCallingThread = true; return {} as RetentionReport; } },
    );
    await expect(run).rejects.toThrow(/not a database/);
    expect(ranOnCallingThread).toBe(false);
    expect(readFileSync(notADatabase).equals(before)).toBe(true);
  });

  it("where no worker can start, the run goes on the calling thread and the log says why once", async () => {
    const setup = retentionSetup(AGE_CAP);
    const logger = new RecordingLogger();
    const calling = { thread: "calling" } as RetentionReport;
    const request = {
      databasePath: setup.config.databasePath, archiveDirectory: setup.config.retentionArchiveDirectory,
      settings: { ...AGE_CAP, retentionMaxDatabaseMb: 0, retentionPruneEndedSessions: false }, budget: MAINTAIN_BUDGET,
    };
    const missing = { url: new URL("./no-such-worker.js", import.meta.url), execArgv: [] };

    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(runOnRetentionThread(request, { logger, onCallingThread: async () => calling, entry: missing })).resolves.toBe(calling);
    }
    const warnings = logger.lines.filter((line) => line.level === "warn").map((line) => line.message);
    expect(warnings.filter((message) => /no worker thread/.test(message))).toHaveLength(1);
  });
});
