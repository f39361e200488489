/**
 * A 100,000-message lossless-claw database (1.x line, one long conversation the peer compacted: a leaf summary per
 * 100 messages, a condensed one per 10 leaves, the last 100 messages fresh) imports completely and consistently.
 * Not timed (speed belongs to the benchmark); the rate is printed for docs/operations.md.
 */
import { access } from "node:fs/promises";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/connection-registry.js";
import { SqliteImportStore } from "../../src/import/lossless-claw/import-store.js";
import { importLosslessClaw } from "../../src/import/lossless-claw/lossless-claw-import.js";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import { LargeFileStorage } from "../../src/large-files/large-file-storage.js";
import { SqliteIntegrityStore } from "../../src/store/sqlite/sqlite-integrity-store.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { SteppingClock } from "../fakes/clocks.js";
import { tempDir } from "../helpers/temp-dir.js";
import { PeerWriter } from "./peer-fixtures.js";

const MESSAGES = 100_000;
const PER_LEAF = 100;
const LEAVES_PER_CONDENSED = 10;
const FRESH = 100;

function buildLargePeer(path: string): void {
  const peer = new PeerWriter(path, "1.x");
  const conversation = peer.conversation("large-session", { sessionKey: "agent:main:main" });
  const ids: number[] = [];
  peer.batch(() => {
    for (let index = 0; index < MESSAGES; index++) {
      const message = index % 2 === 0
        ? { role: "user", content: `question ${index} about topic${index % 977} and marker${index}`, timestamp: 0 }
        : { role: "assistant", content: [{ type: "text", text: `answer ${index}: detail${index % 613} resolved with step ${index}` }], timestamp: 0 };
      ids.push(peer.message(conversation, message, { inContext: false }));
    }
    const leaves: string[] = [];
    for (let start = 0; start + PER_LEAF <= MESSAGES - FRESH; start += PER_LEAF) {
      const id = `sum_${(leaves.length + 1).toString(16).padStart(16, "0")}`;
      peer.summary(conversation, id, "leaf", `Messages ${start}-${start + PER_LEAF - 1}: topics and markers.`, ids.slice(start, start + PER_LEAF));
      leaves.push(id);
    }
    for (let start = 0; start < leaves.length; start += LEAVES_PER_CONDENSED) {
      const id = `sum_f${(start + 1).toString(16).padStart(15, "0")}`;
      peer.summary(conversation, id, "condensed", `Leaves ${start}-${start + LEAVES_PER_CONDENSED - 1} condensed.`, leaves.slice(start, start + LEAVES_PER_CONDENSED));
      peer.contextItem(conversation, { summaryId: id });
    }
    for (const id of ids.slice(MESSAGES - FRESH)) peer.contextItem(conversation, { messageId: id });
  });
  peer.close();
}

describe("a 100,000-message lossless-claw database", () => {
  it("imports every message, summary and edge, consistently", async () => {
    const directory = tempDir("peer-large-");
    const source = join(directory, "lcm.db");
    buildLargePeer(source);
    const database = openDatabase(join(directory, "lcm-context.db"));
    try {
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const report = await importLosslessClaw({
        sourcePath: source, store: new SqliteImportStore(database), files: new LargeFileStorage(join(directory, "files")),
        tokens: new DefaultTokenEstimator(), clock: new SteppingClock(),
      });
      delay.disable();
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
