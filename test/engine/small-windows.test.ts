/**
 * A window OpenClaw's own prompt nearly fills (spec 023), driven through register(api) as OpenClaw drives an 8k turn
 * with 1.5k-token messages: the first assemble gets a budget of a few tokens (window 8,000 less its 2,000 reserve, its
 * system prompt and the message), six tool schemas, then a tool-loop assemble, commitTurn and maintain with the host's
 * model. The model must still see its history (the memory floor, after a restart too), the summarizer must never be
 * asked for a uselessly small summary nor be called over and over, and /lcm status, `lcm context` and the log must
 * say what takes the window and what to change.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import plugin from "../../index.js";
import { MEMORY_FLOOR_TOKENS } from "../../src/assembly/memory-floor.js";
import type { ContextOutput } from "../../src/cli/commands/context-command.js";
import { ContextOutputSchema } from "../../src/cli/output-schemas.js";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { closeSharedDatabase, openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import type { AgentMessage, AssembleResult } from "../../src/host/openclaw-types.js";
import { systemPromptAdditionTokens } from "../../src/assembly/system-prompt.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { runJson, runLcm } from "../cli/cli-harness.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";

afterEach(() => resetSharedCircuitBreakers());

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };
const WINDOW = 8_000;
const RESERVE = 2_000;
const TOOLS = new Set(["read", "session_status", "lcm_grep", "lcm_describe", "lcm_expand_query", "lcm_expand"]);
const TURNS = 12;

/** About 1,500 tokens of a work log (the default estimator counts each word and its number as about 2.5 tokens). */
function longMessage(turn: number): string {
  const words = Array.from({ length: 600 }, (_, index) => `step${(turn * 31 + index) % 997}`).join(" ");
  return `turn ${turn}: ${turn === 2 ? "remember the staging vault code 4417-KESTREL-09. " : ""}${words}`;
}

/** One turn as OpenClaw 2026.9.6 drives it at 8k: the first assemble's budget is what its own prompt left (here 30). */
async function playTurn(api: FakePluginApi, llm: RecordingLlm, turn: number): Promise<AssembleResult> {
  const prompt = longMessage(turn);
  const engine = api.engine();
  const first = await engine.assemble({
    ...SESSION, messages: [], prompt, tokenBudget: 30, availableTools: TOOLS,
    runtimeSettings: { limits: { promptTokenBudget: 30, maxOutputTokens: RESERVE } },
  });
  // The loop's first model call: the pending turn is the prompt alone.
  await engine.assemble({
    ...SESSION, messages: [], prompt, tokenBudget: WINDOW - Math.ceil(prompt.length / 4),
    runtimeSettings: { limits: { promptTokenBudget: WINDOW, maxOutputTokens: null } },
  });
  const messages: AgentMessage[] = [userMessage(prompt), assistantMessage(`answer ${turn}`)];
  await engine.commitTurn({ ...SESSION, advancementKey: `t${turn}`, messages, runtimeContext: { tokenBudget: WINDOW } });
  await engine.maintain({ ...SESSION, runtimeContext: { tokenBudget: WINDOW, llm } });
  return first;
}

function newestSummaryInContext(databasePath: string): string | undefined {
  return openSharedDatabase(databasePath).get<{ summary_id: string }>(
    `SELECT s.summary_id FROM context_items c JOIN summaries s ON s.id = c.summary_id ORDER BY c.ordinal DESC LIMIT 1`,
  )?.summary_id;
}

describe("an 8k window that OpenClaw's own prompt nearly fills", () => {
  it("shows the model the newest summary through the memory floor every turn, after a restart too", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    let summaries = 0;
    const llm = new RecordingLlm(() => `SUMMARY ${++summaries}: the user logged steps.\nExpand for details about: the steps`);
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    const firsts: AssembleResult[] = [];
    for (let turn = 1; turn <= TURNS; turn++) firsts.push(await playTurn(api, llm, turn));

    // Turn 1 had no history. Every later turn: the floor alone (the budget holds nothing), within its allowance.
    expect(firsts[0]!.messages).toEqual([]);
    for (const [index, result] of firsts.slice(1).entries()) {
      // Dated like the newest history it stands for (OpenClaw shows the date to the model), never 1970.
      expect((result.messages[0] as { timestamp: number }).timestamp, `turn ${index + 2}`).toBeGreaterThan(Date.UTC(2020, 0, 1));
      expect(result.messages, `turn ${index + 2}`).toHaveLength(1);
      expect(String(result.messages[0]!.content), `turn ${index + 2}`).toMatch(/^<earlier_history>\nThis conversation has \d+ stored messages/);
      expect(result.estimatedTokens).toBeLessThanOrEqual(MEMORY_FLOOR_TOKENS);
    }
    // Once compaction wrote summaries, the floor carries the newest one.
    const newest = newestSummaryInContext(databasePath)!;
    expect(newest).toMatch(/^sum_[0-9a-f]{16}$/);
    const next = await api.engine().assemble({ ...SESSION, messages: [], prompt: longMessage(13), tokenBudget: 30, availableTools: TOOLS });
    const floor = String(next.messages[0]!.content);
    expect(floor).toContain(`<summary id="${newest}"`);
    expect(floor).toMatch(/SUMMARY \d+: the user logged steps\./);

    // A gateway restart: a new process opens the same file. The model sees the same floor.
    closeSharedDatabase(databasePath);
    const restarted = new FakePluginApi({ databasePath });
    plugin.register(restarted);
    const afterRestart = await restarted.engine().assemble({ ...SESSION, messages: [], prompt: longMessage(13), tokenBudget: 30, availableTools: TOOLS });
    expect(afterRestart.messages).toEqual(next.messages);
  });

  it("gives a budget that holds the memory floor, but not the floor and the system prompt addition, to the floor alone", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    const details = Array.from({ length: 150 }, (_, index) => `detail${index}`).join(" ");
    const llm = new RecordingLlm(() => `SUMMARY: ${details}\nExpand for details about: the steps`);
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    for (let turn = 1; turn <= 6; turn++) await playTurn(api, llm, turn);
    // The floor with the newest summary takes its whole room (320); beside the addition, the budget leaves it less.
    const budget = 2 * systemPromptAdditionTokens(new DefaultTokenEstimator()) + 40; // a host that passes no prompt: no wrapping
    closeSharedDatabase(databasePath); // the next turn's first call, in a new process
    const restarted = new FakePluginApi({ databasePath });
    plugin.register(restarted);
    const result = await restarted.engine().assemble({ ...SESSION, messages: [], tokenBudget: budget });
    expect(String(result.messages[0]!.content)).toMatch(/^<earlier_history>[\s\S]*<summary id="sum_/);
    expect(result.systemPromptAddition).toBeUndefined();
    expect(result.estimatedTokens).toBeLessThanOrEqual(budget);
  });

  it("asks for useful summaries only, one or two a turn, instead of re-condensing the history after every turn", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    const llm = new RecordingLlm(() => "The user logged steps.\nExpand for details about: the steps");
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    for (let turn = 1; turn <= TURNS; turn++) await playTurn(api, llm, turn);
    const targets = llm.calls.map((call) => Number(/Aim for at most about (\d+) tokens/.exec(call.messages.map((message) => message.content).join("\n"))?.[1]));
    expect(targets.length).toBeGreaterThan(0);
    // The planning floor: leaf 8% and condensed 12% of 3,200 (256 and 384); the aggressive level never below 128.
    expect(targets.filter((target) => !(target >= 128))).toEqual([]);
    expect(llm.calls.length).toBeLessThanOrEqual(2 * TURNS);
    expect(api.errors()).toEqual([]);
  });

  it("answers an overflow the pending tool results caused without summarizing the history again and again", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    const llm = new RecordingLlm(() => "The user logged steps.\nExpand for details about: the steps");
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    for (let turn = 1; turn <= 3; turn++) await playTurn(api, llm, turn);
    const calls = llm.calls.length;
    // A tool turn: the first assemble, then the follow-up after two tool results of 2,400 tokens each (host measure).
    const engine = api.engine();
    const prompt = "read both logs";
    await engine.assemble({ ...SESSION, messages: [], prompt, tokenBudget: 1_500, availableTools: TOOLS });
    const followUp = await engine.assemble({
      ...SESSION, messages: [], prompt, tokenBudget: WINDOW - Math.ceil(prompt.length / 4) - 4_800,
      runtimeSettings: { limits: { promptTokenBudget: WINDOW, maxOutputTokens: null } },
    });
    // LCM's part of that request: the floor's line (the loop took the whole first budget and more).
    expect(followUp.messages).toHaveLength(1);
    expect(String(followUp.messages[0]!.content)).not.toContain("<summary");
    // The provider refuses it; OpenClaw's overflow recovery asks LCM to compact.
    const result = await engine.compact({ ...SESSION, force: true, compactionTarget: "budget", tokenBudget: WINDOW, currentTokenCount: 9_700, runtimeContext: { llm } });
    expect(result).toMatchObject({ ok: true, compacted: false });
    expect(result.reason).toMatch(/^already under target: .*the current turn \(its message and this turn's tool results\) is larger than the model's window allows/);
    expect(llm.calls.length).toBe(calls);
    expect(api.logs.some((line) => /compaction \(compact:budget\): no passes, .*the current turn with its tool results is larger than the window allows/.test(line.message))).toBe(true);
  });

  it("says in the log, /lcm status and `lcm context` what takes the window and what to change", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    const llm = new RecordingLlm(() => "The user logged steps.\nExpand for details about: the steps");
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    for (let turn = 1; turn <= 4; turn++) await playTurn(api, llm, turn);

    // Once per conversation and process, not once per turn.
    const warnings = api.logs.filter((line) => line.level === "warn" && /Too little for history/.test(line.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/OpenClaw's 8,000-token window keeps 2,000 for the reply; .* 6 tool schemas about 1,960/);
    expect(warnings[0]!.message).toMatch(/LCM has 0 tokens for history/);
    expect(warnings[0]!.message).toMatch(/Fix: a model with a larger window, or .*shorter messages/);

    const reply = await api.command("lcm").handler({ args: "status", ...SESSION, channel: "test", isAuthorizedSender: true, commandBody: "/lcm status" });
    const status = String((reply as { text: string }).text);
    expect(status).toMatch(/^Host: OpenClaw's 8,000-token window keeps 2,000 for the reply; its system prompt about [\d,]+, the message [\d,]+, 6 tool schemas about 1,960 \(its measure\); LCM has 0 tokens for history$/m);
    expect(status).toMatch(/^Too little for history: the model sees only LCM's memory floor/m);
    expect(status).toMatch(/budget 3,200 \(the least compaction plans for; the model's own budget is smaller\) · \d+% · compacts above 2,400/);

    const conversationId = openSharedDatabase(databasePath).get<{ id: number }>("SELECT conversation_id AS id FROM conversations")!.id;
    const context = await runJson<ContextOutput>(["context", String(conversationId), "--db", databasePath], ContextOutputSchema);
    expect(context.messages[0]).toMatchObject({ kind: "floor", index: 1 });
    expect(context.hostShare).toMatchObject({ windowTokens: WINDOW, reserveTokens: RESERVE, toolCount: 6, budgetTokens: 0, floor: "summary", tooSmall: true });
    const text = (await runLcm(["context", String(conversationId), "--db", databasePath])).stdout;
    expect(text).toContain("Host: OpenClaw's 8,000-token window");
    expect(text).toMatch(/#1 memory floor · \d+ tokens/);
  });
});
