import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/contracts.js";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import { SqliteIntegrityStore } from "../../src/sqlite/sqlite-integrity-store.js";
import { seededRandom } from "../helpers/agent-session.js";
import { createRecallEnv } from "../helpers/recall.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";

const SESSIONS = 24;
const TURNS = 30;

describe("many sessions interleaved in one process", () => {
  it("stores every turn of every session once, in order, while compaction and replays run among them", async () => {
    const llm = new RecordingLlm(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1)); // a model call yields, letting other sessions in
      return "Summary of the work.\nExpand for details about: commands";
    });
    const env = createRecallEnv({ llm, config: { freshTailCount: 6, leafChunkTokens: 300, leafMinFanout: 4, incrementalMaxDepth: 1 } });
    const random = seededRandom(99);
    const turnOf = (session: number, turn: number) => [
      userMessage(`s${session} t${turn} please check item-${session}-${turn}`, { idempotencyKey: `r-${session}-${turn}:user` }),
      toolCallMessage([{ id: `call_${session}_${turn}`, name: "check", arguments: { item: `item-${session}-${turn}` } }]),
      toolResultMessage(`call_${session}_${turn}`, "check", `item-${session}-${turn} is fine ${"detail ".repeat(10)}`),
      assistantMessage(`s${session} t${turn} done`),
    ];
    const playSession = async (session: number) => {
      const sessionId = `interleaved-${session}`;
      const sessionKey = `agent:main:${sessionId}`;
      for (let turn = 1; turn <= TURNS; turn++) {
        const engine = env.api.engine();
        await engine.assemble({ sessionId, sessionKey, messages: [], tokenBudget: 2_000 });
        const messages = turnOf(session, turn);
        await engine.commitTurn({ sessionId, sessionKey, advancementKey: `${sessionId}-${turn}`, messages });
        if (random() < 0.2) await engine.commitTurn({ sessionId, sessionKey, advancementKey: `${sessionId}-${turn}`, messages }); // host retry
        await engine.maintain({ sessionId, sessionKey, runtimeContext: { llm } });
        await engine.dispose();
      }
    };
    await Promise.all(Array.from({ length: SESSIONS }, (_, session) => playSession(session)));

    const rows = env.db.all<{ session: string; content: string }>(
      `SELECT c.session_id AS session, m.content FROM messages m JOIN conversations c USING (conversation_id)
       WHERE m.role = 'user' ORDER BY c.session_id, m.seq`,
    );
    for (let session = 0; session < SESSIONS; session++) {
      const contents = rows.filter((row) => row.session === `interleaved-${session}`).map((row) => row.content);
      expect(contents).toEqual(Array.from({ length: TURNS }, (_, index) => `s${session} t${index + 1} please check item-${session}-${index + 1}`));
    }
    const checker = new IntegrityChecker({ store: new SqliteIntegrityStore(env.db), clock: systemClock, fileExists: async (path) => existsSync(path) });
    const report = await checker.check();
    expect(report.findings).toEqual([]);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n).toBeGreaterThan(SESSIONS);
    expect(env.api.errors()).toEqual([]);
  });
});
