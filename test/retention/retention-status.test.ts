/**
 * `lcm status` (text and --json) on what retention would do: the size cap, how far over it the file is, the covered
 * messages a run may archive; after `lcm retention --apply`, that nothing is left and when the last archive was written;
 * `lcm retention --vacuum` turns incremental vacuum on for a file created without it, once.
 */
import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { RetentionOutput } from "../../src/cli/commands/retention-command.js";
import type { StatusOutput } from "../../src/cli/commands/status-command.js";
import { RetentionOutputSchema, StatusOutputSchema } from "../../src/cli/output-schemas.js";
import { runJson, runLcm } from "../cli/cli-harness.js";
import { SqliteRetentionStore } from "../../src/sqlite/sqlite-retention-store.js";
import { retentionSetup, storeExchanges, storeLargeCoveredHistory, summarize } from "./retention-helpers.js";

describe("lcm status on retention", () => {
  it("shows the size cap, the covered messages a run may archive, and after a run that nothing is left", async () => {
    const setup = retentionSetup();
    await storeLargeCoveredHistory(setup);
    const env = { LCM_RETENTION_MAX_DATABASE_MB: "1" };
    const args = ["status", "--db", setup.config.databasePath];

    const before = await runJson<StatusOutput>(args, StatusOutputSchema, { env });
    const storage = before.status.storage!;
    expect(storage.usedBytes).toBeGreaterThan(3 * 1_048_576);
    expect(storage.retention).toMatchObject({
      enabled: true, policy: { maxDatabaseBytes: 1_048_576, maxAgeMs: null, pruneEndedSessions: false },
      overCapBytes: storage.usedBytes - 1_048_576, prunable: { messages: 1_150 }, endedConversations: 0, lastArchiveAt: null,
      nextRun: { maxMessages: 5_000, maxConversations: 1, intervalMinutes: 10 },
    });
    const text = (await runLcm(args, env)).stdout;
    expect(text).toMatch(/\nSize: [\d.]+ MB in use.* · growth: /);
    expect(text).toMatch(/\nRetention: on \(size cap 1\.0 MB, over by [\d.]+ MB\) · next background run \(every 10 min at most\): archives ~1,150 of 1,150 covered messages/);

    const run = await runJson<RetentionOutput>(["retention", "--apply", "--db", setup.config.databasePath], RetentionOutputSchema, { env });
    expect(run.messages.count).toBe(1_150);
    const after = await runJson<StatusOutput>(args, StatusOutputSchema, { env });
    const retention = after.status.storage!.retention;
    expect(retention).toMatchObject({ enabled: true, prunable: { messages: 0 }, lastArchiveAt: expect.any(Number) });
    // The stubs are packed and the freed pages given back: ~4 MB in use before, under the 1 MB cap after.
    expect(after.status.storage!.usedBytes).toBeLessThan(1_048_576);
    expect((await runLcm(args, env)).stdout)
      .toMatch(/\nRetention: on \(size cap 1\.0 MB, under it\) · next background run \(every 10 min at most\): nothing to archive · last archive just now\./);
  });

  it("with retention off, --json says so and what a cap could archive", async () => {
    const setup = retentionSetup();
    const conversationId = await storeExchanges(setup, "s1", 20);
    summarize(setup, conversationId, 1, 30);
    const data = await runJson<StatusOutput>(["status", "--db", setup.config.databasePath], StatusOutputSchema);
    // Two leaf summaries cover messages 1-30 (the tail 31-40 is raw): a size cap could archive those 30.
    expect(data.status.storage!.retention).toMatchObject({ enabled: false, covered: { messages: 30 }, endedConversations: 0 });
  });

  it("--vacuum rewrites a file made without incremental vacuum once, turns it on and empties the write-ahead log", async () => {
    const setup = retentionSetup();
    await storeExchanges(setup, "s1", 20);
    // A file as LCM created them before incremental vacuum: auto_vacuum off.
    setup.db.raw.exec("PRAGMA auto_vacuum = NONE");
    setup.db.raw.exec("VACUUM");
    const space = new SqliteRetentionStore(setup.db);
    expect((await space.space()).autoVacuum).toBe("none");
    const args = ["retention", "--vacuum", "--db", setup.config.databasePath];

    const first = await runJson<RetentionOutput>(args, RetentionOutputSchema);
    expect(first.fullVacuum).toBe(true);
    expect((await space.space()).autoVacuum).toBe("incremental");
    expect(statSync(`${setup.config.databasePath}-wal`).size).toBe(0);
    const again = await runJson<RetentionOutput>(args, RetentionOutputSchema);
    expect(again.fullVacuum).toBe(false);
  });
});
