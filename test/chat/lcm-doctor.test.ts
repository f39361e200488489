import { describe, expect, it } from "vitest";
import type { CommandContext } from "../../src/host/openclaw-types.js";
import { RecordingLlm } from "../fakes/fake-plugin-api.js";
import { conversation } from "../helpers/messages.js";
import { MAIN, createRecallEnv } from "../helpers/recall.js";

const context = (args: string): CommandContext => ({
  agentId: "main", sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId, args, commandBody: `/lcm ${args}`,
});

async function compactedEnv() {
  const llm = new RecordingLlm(() => "Summary of the exchanges.\nExpand for details about: the exact answers");
  const env = createRecallEnv({ llm, config: { freshTailCount: 4, leafMinFanout: 4 } });
  for (let turn = 0; turn < 6; turn++) await env.commit(MAIN, conversation(4, `batch${turn}`));
  const result = await env.api.engine().compact({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, force: true, compactionTarget: "threshold" });
  expect(result.compacted).toBe(true);
  const run = async (args: string) => (await env.api.command("lcm").handler(context(args))).text;
  return { env, run };
}

describe("/lcm doctor", () => {
  it("checks the conversation after real compaction and finds nothing wrong", async () => {
    const { run } = await compactedEnv();
    const text = await run("doctor");
    expect(text).toMatch(/^LCM doctor \(this conversation\): 15 checks over 1 conversation and the full-text indexes in \d+ ms\./);
    expect(text).toContain("No problems found");
  });

  it("reports counters that disagree with the rows, offers the safe repair, and applies it on request", async () => {
    const { env, run } = await compactedEnv();
    env.db.run("UPDATE conversations SET context_tokens = context_tokens + 999 WHERE session_id = ?", MAIN.sessionId);
    const report = await run("doctor");
    expect(report).toMatch(/1 problem:\n- counter_mismatch \[conversation 1\] 1: contextTokens: counter \d+, rows \d+/);
    expect(report).toMatch(/Safe repairs available \(recount conversation 1\): run \/lcm doctor repair\./);
    expect(await run("doctor repair")).toMatch(/Applied 1 safe repair: recount conversation 1\. A second check finds no problems left\./);
    expect(await run("doctor")).toContain("No problems found");
  });

  it("describes, but never applies, a repair that could lose information", async () => {
    const { env, run } = await compactedEnv();
    env.db.raw.exec("PRAGMA foreign_keys = OFF");
    env.db.run("DELETE FROM summary_messages WHERE summary_id = (SELECT min(id) FROM summaries)");
    env.db.raw.exec("PRAGMA foreign_keys = ON");
    const text = await run("doctor all repair");
    expect(text).toMatch(/^LCM doctor \(all conversations\)/);
    expect(text).toContain("summary_without_source");
    expect(text).toMatch(/Needs an operator \(never applied automatically\):\n- summary_without_source sum_[0-9a-f]{16}: The summary cannot be expanded/);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n).toBeGreaterThan(0);
  });

  it("says so when the session has no stored conversation", async () => {
    const env = createRecallEnv();
    const text = (await env.api.command("lcm").handler({ ...context("doctor"), sessionId: "none", sessionKey: "agent:main:none" })).text;
    expect(text).toMatch(/No stored conversation for this session yet/);
  });
});
