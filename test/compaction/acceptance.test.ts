/**
 * Acceptance criteria from the LCM service spec, on seeded fixture conversations played through the plugin
 * entry: compaction cuts the assembled context by at least 30%, and any summary expands back to its source
 * messages.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import plugin from "../../index.js";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import type { HostLlm } from "../../src/host/openclaw-types.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { generateSession, hashFor } from "../helpers/agent-session.js";
import { checkInvariants, expandSummary } from "../helpers/dag-invariants.js";
import { tempDir } from "../helpers/temp-dir.js";
import { playTurns } from "../helpers/turn-driver.js";

afterEach(() => resetSharedCircuitBreakers());

const WIDE_BUDGET = 200_000;

async function fixture(seed: number, llm?: HostLlm) {
  const databasePath = join(tempDir(), "lcm.db");
  const api = new FakePluginApi({ databasePath, autocompactDisabled: true, freshTailCount: 16, leafChunkTokens: 2_000, leafTargetTokens: 200 });
  plugin.register(api);
  await playTurns(() => api.engine(), generateSession({ seed, turns: 80 }), { tokenBudget: WIDE_BUDGET });
  const db = openSharedDatabase(databasePath);
  const assembledTokens = async () =>
    (await api.engine().assemble({ sessionId: "s1", messages: [], tokenBudget: WIDE_BUDGET })).estimatedTokens;
  const compact = () =>
    api.engine().compact({
      sessionId: "s1", sessionKey: "agent:main:main", force: true, compactionTarget: "threshold",
      ...(llm ? { runtimeContext: { llm } } : {}),
    });
  return { api, db, assembledTokens, compact, conversationId: 1 };
}

describe("acceptance", () => {
  it.each([11, 12, 13])("cuts assembled tokens by at least 30 percent without a model (extractive, seed %i)", async (seed) => {
    const { assembledTokens, compact, db, conversationId } = await fixture(seed);
    const before = await assembledTokens();
    const result = await compact();
    const after = await assembledTokens();
    expect(result.compacted).toBe(true);
    expect(after).toBeLessThanOrEqual(before * 0.7);
    expect(checkInvariants(db, conversationId)).toEqual([]);
  });

  it("cuts assembled tokens by at least 30% with a host model", async () => {
    const llm = new RecordingLlm(() => "The agent inspected modules and fixed errors.\nExpand for details about: paths, error codes");
    const { assembledTokens, compact } = await fixture(14, llm);
    const before = await assembledTokens();
    await compact();
    expect(await assembledTokens()).toBeLessThanOrEqual(before * 0.7);
    expect(llm.calls.length).toBeGreaterThan(0);
  });

  it("expands any summary back to its source messages", async () => {
    const { compact, db } = await fixture(15);
    await compact();
    const summaries = db.all<{ id: number; seq_start: number; seq_end: number; source_message_count: number }>(
      "SELECT id, seq_start, seq_end, source_message_count FROM summaries",
    );
    expect(summaries.length).toBeGreaterThan(3);
    for (const summary of summaries) {
      const lineage = expandSummary(db, summary.id);
      const seqs = db.all<{ seq: number }>(
        "SELECT seq FROM messages WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY seq", JSON.stringify(lineage.messageIds),
      ).map((row) => row.seq);
      expect(seqs).toHaveLength(summary.source_message_count);
      expect(seqs).toEqual(Array.from({ length: summary.seq_end - summary.seq_start + 1 }, (_, index) => summary.seq_start + index));
    }
  });

  it("finds a detail of the first turn again through the lineage of the context's summaries", async () => {
    const { compact, db } = await fixture(16);
    await compact();
    const detail = hashFor(1);
    const contextSummaries = db.all<{ summary_id: number }>("SELECT summary_id FROM context_items WHERE summary_id IS NOT NULL ORDER BY ordinal");
    const holder = contextSummaries.find((item) =>
      expandSummary(db, item.summary_id).messageIds.some((messageId) =>
        db.get<{ content: string }>("SELECT content FROM messages WHERE message_id = ?", messageId)!.content.includes(detail),
      ),
    );
    expect(holder).toBeDefined();
  });
});
