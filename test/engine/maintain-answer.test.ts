/**
 * maintain answers the host within MAINTAIN_ANSWER_MS however long the model takes to summarize: OpenClaw 2026.9.6
 * announces a turn maintenance still running after 10 s to the session, and each announcement wakes the agent for a
 * model turn of its own (seen in the host suite: two "[OpenClaw session event]" turns after a 10 s maintenance). The
 * summary is still written, in the background, and the session's next hook waits for it.
 */
import { describe, expect, it } from "vitest";
import { MAINTAIN_ANSWER_MS } from "../../src/engine/lcm-context-engine.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, MAIN, sessionOf } from "../helpers/recall.js";

describe("maintain with a slow model", () => {
  it(`answers within ${MAINTAIN_ANSWER_MS} ms, then writes the summary in the background before the session's next hook`, async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    const llm = new RecordingLlm(async () => {
      await released;
      return "The user checked items one to twelve.\nExpand for details about: item checks";
    });
    const env = createRecallEnv({ llm, config: { freshTailCount: 4, leafChunkTokens: 300, leafMinFanout: 4 } });
    for (let turn = 1; turn <= 12; turn++) {
      await env.commit(MAIN, [userMessage(`turn ${turn}: check item-${turn} ${"detail ".repeat(30)}`), assistantMessage(`item-${turn} is fine`)]);
    }
    const engine = env.api.engine();

    const started = performance.now();
    const answer = await engine.maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, runtimeContext: { llm } });
    const answeredMs = performance.now() - started;
    expect(llm.calls.length).toBe(1); // the summarizer was asked and has not answered
    expect(answeredMs).toBeGreaterThanOrEqual(MAINTAIN_ANSWER_MS - 50);
    expect(answeredMs).toBeLessThan(MAINTAIN_ANSWER_MS + 2_000);
    expect(answer).toMatchObject({ changed: false, reason: expect.stringMatching(/finishing in the background/) });
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n).toBe(0);

    release();
    // The next hook of the session runs after the background work: it sees the summary.
    const assembled = await engine.assemble({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages: [], tokenBudget: 4_000 });
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n).toBeGreaterThan(0);
    expect(JSON.stringify(assembled.messages)).toContain("The user checked items one to twelve.");
    expect(env.api.logs.some((line) => /maintain: still at work after \d+ ms/.test(line.message))).toBe(true);
    expect(env.api.errors()).toEqual([]);
  }, 20_000);

  it("answers as soon as its work is done when the model is quick", async () => {
    const llm = new RecordingLlm(() => "The user checked items.\nExpand for details about: item checks");
    const env = createRecallEnv({ llm, config: { freshTailCount: 4, leafChunkTokens: 300, leafMinFanout: 4 } });
    const session = sessionOf("main", "quick"); // sessions queue process-wide: not the first test's
    for (let turn = 1; turn <= 12; turn++) {
      await env.commit(session, [userMessage(`turn ${turn}: check item-${turn} ${"detail ".repeat(30)}`), assistantMessage(`item-${turn} is fine`)]);
    }
    const started = performance.now();
    const answer = await env.api.engine().maintain({ sessionId: session.sessionId, sessionKey: session.sessionKey, runtimeContext: { llm } });
    expect(performance.now() - started).toBeLessThan(MAINTAIN_ANSWER_MS / 2);
    expect(answer.changed).toBe(true);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n).toBeGreaterThan(0);
  });
});
