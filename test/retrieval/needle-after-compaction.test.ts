/**
 * The recall promise end to end, through the real compaction path: a detail planted in the second turn of a
 * long session is found again after several rounds of forced compaction, by lcm_grep (regex and full text),
 * lcm_describe and lcm_expand_query.
 */
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import plugin from "../../index.js";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import type { Database } from "../../src/sqlite/database.js";
import type { GrepMatch } from "../../src/search/grep.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { RecordingSubagentRuntime, requestScopeError } from "../fakes/recording-subagent.js";
import { generateSession } from "../helpers/agent-session.js";
import { detailsOf } from "../helpers/recall.js";
import { tempDir } from "../helpers/temp-dir.js";
import { playTurns } from "../helpers/turn-driver.js";

afterEach(() => resetSharedCircuitBreakers());

const NEEDLE = "OTTER-5521";
const CONTEXT = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" };

describe("a needle planted early in a long session", () => {
  let api: FakePluginApi;
  let db: Database;
  let compactions = 0;
  const llm = new RecordingLlm((params) => {
    const prompt = params.messages.map((message) => message.content).join("\n");
    if (params.purpose === "lcm_expand_query") return prompt.includes(NEEDLE) ? `The vault code is ${NEEDLE}.` : "Not in the excerpts.";
    return "The agent worked through module changes and errors.\nExpand for details about: paths, codes";
  });

  beforeAll(async () => {
    api = new FakePluginApi(
      { databasePath: join(tempDir(), "lcm.db"), autocompactDisabled: true, freshTailCount: 16, leafChunkTokens: 2_000, leafTargetTokens: 150, condensedTargetTokens: 200 },
      { llm, subagent: new RecordingSubagentRuntime({ runError: requestScopeError() }) },
    );
    plugin.register(api);
    db = openSharedDatabase(api.pluginConfig.databasePath as string);
    const turns = generateSession({ seed: 41, turns: 120 });
    turns[1]![0] = { ...turns[1]![0]!, content: `please remember the vault code is ${NEEDLE} for later` };
    for (let round = 0; round < 3; round++) {
      await playTurns(() => api.engine(), turns.slice(round * 40, round * 40 + 40), { sessionId: "s1", tokenBudget: 200_000 });
      const result = await api.engine().compact({ sessionId: "s1", sessionKey: "agent:main:main", force: true, compactionTarget: "threshold", runtimeContext: { llm } });
      if (result.compacted) compactions++;
    }
  });

  const call = async (name: string, params: Record<string, unknown>) => api.tool(name, CONTEXT).execute("c", params);

  it("is out of the context after several rounds of compaction", () => {
    expect(compactions).toBe(3);
    const depth = db.get<{ depth: number }>("SELECT max(depth) AS depth FROM summaries")!.depth;
    expect(depth).toBeGreaterThanOrEqual(1);
    const raw = db.get<{ found: number }>(
      `SELECT count(*) AS found FROM context_items c JOIN messages m ON m.message_id = c.message_id WHERE m.content LIKE ?`, `%${NEEDLE}%`,
    );
    expect(raw!.found).toBe(0);
  });

  it("is found by regex and by full text, with the summary in context that now covers it", async () => {
    for (const params of [{ pattern: "OTTER-\\d{4}" }, { pattern: NEEDLE, mode: "full_text" }]) {
      const { matches } = detailsOf<{ matches: GrepMatch[] }>(await call("lcm_grep", params));
      const hit = matches.find((match) => match.type === "message");
      expect(hit, JSON.stringify(params)).toMatchObject({ type: "message", snippet: expect.stringContaining(NEEDLE) });
      const covering = hit!.type === "message" ? hit!.coveringSummaryId : null;
      const inContext = db.get("SELECT 1 AS found FROM context_items c JOIN summaries s ON s.id = c.summary_id WHERE s.summary_id = ?", covering);
      expect(inContext).toBeDefined();
      const described = detailsOf<{ inContext: boolean; seqStart: number }>(await call("lcm_describe", { id: covering }));
      expect(described).toMatchObject({ inContext: true });
      expect(described.seqStart).toBeLessThanOrEqual(hit!.type === "message" ? hit!.seq : 0);
    }
  });

  it("is answered by lcm_expand_query (direct fallback outside a gateway request)", async () => {
    const result = detailsOf<{ answer: string; mode: string }>(await call("lcm_expand_query", { prompt: "What is the vault code?", query: "vault code" }));
    expect(result).toMatchObject({ mode: "direct", answer: `The vault code is ${NEEDLE}.` });
  });
});
