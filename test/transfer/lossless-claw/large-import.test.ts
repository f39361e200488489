/**
 * A 100,000-message lossless-claw database (1.x line, one long conversation the peer compacted: a leaf summary per
 * 100 messages, a condensed one per 10 leaves, the last 100 messages fresh) imports completely and consistently.
 * Not timed (speed belongs to the benchmark: bench/import-block.ts); the rate and the event loop's delay are printed.
 */
import { access } from "node:fs/promises";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/sqlite/connection-registry.js";
import { SqlitePeerImportStore } from "../../../src/sqlite/sqlite-peer-import-store.js";
import { importLosslessClaw, MESSAGE_PAGE } from "../../../src/transfer/lossless-claw/lossless-claw-import.js";
import { IntegrityChecker } from "../../../src/integrity/integrity-checker.js";
import { LargeFileStorage } from "../../../src/large-files/large-file-storage.js";
import { SqliteIntegrityStore } from "../../../src/sqlite/sqlite-integrity-store.js";
import { DefaultTokenEstimator } from "../../../src/tokens/default-token-estimator.js";
import { SteppingClock } from "../../fakes/clocks.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { buildLargePeer, LARGE_PEER } from "./large-peer.js";

const MESSAGES = LARGE_PEER.messages;

describe("a 100,000-message lossless-claw database", () => {
  it("imports every message, summary and edge, consistently", async () => {
    const directory = tempDir("peer-large-");
    const source = join(directory, "lcm.db");
    buildLargePeer(source);
    const database = openDatabase(join(directory, "lcm-context.db"));
    try {
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      let transactions = 0;
      const report = await importLosslessClaw({
        sourcePath: source, store: new SqlitePeerImportStore(database), files: new LargeFileStorage(join(directory, "files")),
        tokens: new DefaultTokenEstimator(), clock: new SteppingClock(), onProgress: () => transactions++,
      });
      delay.disable();
      // Told after every transaction that wrote messages: at least one per page read, more when a slice ran out first.
      expect(transactions).toBeGreaterThanOrEqual(MESSAGES / MESSAGE_PAGE);
      console.log(`[import] ${report.written.messages} messages, ${report.written.summaries} summaries in ${report.durationMs} ms: ` +
        `${report.messagesPerSecond} messages/s; longest event-loop delay ${Math.round(delay.max / 1e6)} ms, p99 ${Math.round(delay.percentile(99) / 1e6)} ms`);
      // 999 leaves (99,900 messages) + 100 condensed; context = 100 condensed summaries + 100 fresh messages.
      expect(report.written).toMatchObject({ messages: MESSAGES, summaries: 999 + 100, summaryMessages: 99_900, summaryParents: 999, contextItems: 200 });
      expect(report.unmapped).toEqual([]);
      const checker = new IntegrityChecker({ store: new SqliteIntegrityStore(database), clock: new SteppingClock(), fileExists: (path) => access(path).then(() => true, () => false) });
      const integrity = await checker.check({ includeIndexes: false });
      expect(integrity.findings).toEqual([]);
    } finally {
      database.close();
    }
  }, 600_000);
});
