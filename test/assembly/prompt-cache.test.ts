/**
 * The prompt-cache promise (summary-message.ts): the same summary always renders to the same bytes, so the
 * assembled context changes from turn to turn only where compaction changed it. Played through register(api) with
 * summaries in context: every assemble repeated gives the same bytes, a turn without compaction only appends to
 * what the last turn sent, and a summary still in context renders as it did. docs/mutations.md, M6.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import plugin from "../../index.js";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { generateSession } from "../helpers/agent-session.js";
import { tempDir } from "../helpers/temp-dir.js";
import { playTurn } from "../helpers/turn-driver.js";

afterEach(() => resetSharedCircuitBreakers());

/** Small compaction settings, so summaries (and summaries of summaries) form within a few turns. */
const CONFIG = {
  freshTailCount: 6, leafMinFanout: 4, leafChunkTokens: 400, leafTargetTokens: 80, condensedTargetTokens: 100,
  condensedMinFanout: 3, incrementalMaxDepth: 2,
};
/** Large enough that nothing is evicted: what is sent changes only by what turns and compaction change. */
const BUDGET = 200_000;

function summaryTexts(messages: AgentMessage[]): Map<string, string> {
  const texts = new Map<string, string>();
  for (const message of messages) {
    const text = typeof message.content === "string" ? message.content : "";
    const id = /^<summary id="(sum_[0-9a-f]+)"/.exec(text)?.[1];
    if (id) texts.set(id, text);
  }
  return texts;
}

describe("the assembled context for prompt caching", () => {
  it("is byte-identical when nothing changed, and only grows between turns without compaction, with summaries in it", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    const api = new FakePluginApi({ databasePath, ...CONFIG });
    plugin.register(api);
    const db = openSharedDatabase(databasePath);
    const llm = new RecordingLlm(() => "Work continued on the modules.\nExpand for details about: file paths");
    const summaryCount = () => db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n;
    const assemble = async () => JSON.stringify((await api.engine().assemble({ sessionId: "s1", messages: [], tokenBudget: BUDGET })).messages);
    const checks = { repeated: 0, appendedOnly: 0, summariesKept: 0 };
    let previous: { serialized: string; summaries: Map<string, string>; summaryCount: number } | null = null;

    for (const turn of generateSession({ seed: 11, turns: 40, maxWords: 50 })) {
      await playTurn(() => api.engine(), turn, { llm, tokenBudget: BUDGET });
      const serialized = await assemble();
      const summaries = summaryTexts(JSON.parse(serialized) as AgentMessage[]);
      // The same stored state, assembled again by a new engine instance (the host builds one per turn).
      expect(await assemble()).toBe(serialized);
      if (summaries.size > 0) checks.repeated++;
      if (previous && previous.summaries.size > 0) {
        if (summaryCount() === previous.summaryCount) {
          // No compaction this turn: what was sent last turn is sent again, byte for byte, then the new turn.
          expect(serialized.startsWith(previous.serialized.slice(0, -1))).toBe(true);
          checks.appendedOnly++;
        }
        for (const [id, text] of previous.summaries) {
          if (!summaries.has(id)) continue; // condensed into a deeper summary this turn
          expect(summaries.get(id), id).toBe(text);
          checks.summariesKept++;
        }
      }
      previous = { serialized, summaries, summaryCount: summaryCount() };
    }
    // The scenario exercised what it claims: summaries in context on most turns, turns with and without compaction.
    expect(checks.repeated).toBeGreaterThan(30);
    expect(checks.appendedOnly).toBeGreaterThan(15);
    expect(checks.summariesKept).toBeGreaterThan(50);
    expect(api.errors()).toEqual([]);
  });
});
