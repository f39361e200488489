/**
 * Property test of the budget guarantee (issue 12, spec 011) on the default settings: seeded sessions at random
 * windows from 8k to 1M tokens, with messages of random sizes (small talk, long messages, tool output, pastes of up
 * to twice the window), driven through register(api) the way OpenClaw drives a durable turn: the first assemble
 * with window - reserve - system prompt - prompt, a tool-loop assemble with window - pending turn, commitTurn,
 * maintain. Every assemble stays within its budget, or is the memory floor alone where the budget cannot hold it (spec
 * 023: at most MEMORY_FLOOR_TOKENS in a turn's first call, less in a tool loop that outgrew the first budget, its one
 * line at least); after every turn every stored message is still reachable (raw in the context or under a summary in
 * it, exactly once, in order) and the counters are true.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import plugin from "../../index.js";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { MEMORY_FLOOR_TOKENS } from "../../src/assembly/memory-floor.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { HOST_WRAPPING_TOKENS } from "../../src/assembly/turn-budget.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { seededRandom } from "../helpers/agent-session.js";
import { checkInvariants } from "../helpers/dag-invariants.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { expectWithinBudgetOrFloor } from "../helpers/budget-checks.js";
import { tempDir } from "../helpers/temp-dir.js";

afterEach(() => resetSharedCircuitBreakers());

const VOCABULARY = ["deploy", "cache", "schema", "worker", "retry", "parser", "budget", "socket", "ledger", "kestrel"];

/** About `tokens` tokens of text (a word and a space is about 1.75 tokens by the default estimator). */
function text(tokens: number, random: () => number): string {
  const words: string[] = [];
  for (let index = 0; index < Math.ceil(tokens / 1.75); index++) words.push(`${VOCABULARY[Math.floor(random() * VOCABULARY.length)]}${index % 97}`);
  return words.join(" ");
}

/** Log-uniform between low and high. */
function logUniform(random: () => number, low: number, high: number): number {
  return Math.floor(Math.exp(Math.log(low) + random() * (Math.log(high) - Math.log(low))));
}

async function playSession(seed: number, turns: number) {
  const random = seededRandom(seed);
  const window = logUniform(random, 8_000, 1_000_000);
  const reserve = Math.min(20_000, Math.floor(window / 4));
  const systemPrompt = logUniform(random, 1_500, Math.max(2_000, Math.floor(window / 8)));
  const databasePath = join(tempDir(), "lcm.db");
  const api = new FakePluginApi({ databasePath });
  plugin.register(api);
  const llm = new RecordingLlm(() => "The work went on.\nExpand for details about: the files");
  const db = openSharedDatabase(databasePath);
  const historyBudget = window - reserve - systemPrompt;
  let pasted = false;
  const checks = { assembles: 0, bounded: 0, floorOnly: 0 };

  for (let turn = 1; turn <= turns; turn++) {
    const roll = random();
    const promptTokens: number = roll < 0.08 && !pasted ? window * 2 : logUniform(random, 5, Math.max(10, Math.floor(historyBudget * 0.3)));
    pasted ||= promptTokens === window * 2;
    const prompt = text(promptTokens, random);
    const engine = api.engine();
    const sessionKey = "agent:main:main";
    // The host's first budget: window - reserve - (system prompt + prompt), at least 1.
    const firstBudget = Math.max(1, historyBudget - Math.ceil(prompt.length / 4));
    const first = await engine.assemble({
      sessionId: "s1", sessionKey, messages: [], prompt, tokenBudget: firstBudget,
      runtimeSettings: { limits: { promptTokenBudget: firstBudget, maxOutputTokens: reserve } },
    });
    const stored = db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n;
    expectWithinBudgetOrFloor(first, firstBudget, MEMORY_FLOOR_TOKENS, stored, `turn ${turn}: first assemble`);
    checks.assembles++;
    if (first.estimatedTokens > firstBudget) checks.floorOnly++;

    const messages: AgentMessage[] = [userMessage(prompt)];
    if (random() < 0.4) {
      const output = text(logUniform(random, 50, Math.max(100, Math.floor(window * 0.4))), random);
      messages.push(toolCallMessage([{ id: `call${turn}`, name: "read", arguments: { path: `/w/file${turn}.log` } }]));
      messages.push(toolResultMessage(`call${turn}`, "read", output));
      // The tool-loop call: window - pending (prompt, call, result) as the host measures them.
      const pending = Math.ceil(prompt.length / 4) + 20 + Math.ceil(output.length / 4);
      const loopBudget = Math.max(1, window - pending);
      const loop = await engine.assemble({
        sessionId: "s1", sessionKey, messages: [], prompt, tokenBudget: loopBudget,
        runtimeSettings: { limits: { promptTokenBudget: window, maxOutputTokens: null } },
      });
      // Within the first budget less what the loop added beyond the prompt; the floor's allowance shrinks by what of
      // that growth the first budget (less the message wrapping LCM keeps out of it) could not absorb.
      const loopGrowth = pending - Math.ceil(prompt.length / 4);
      const lcmFirstBudget = Math.max(0, firstBudget - HOST_WRAPPING_TOKENS);
      expectWithinBudgetOrFloor(loop, Math.max(0, firstBudget - loopGrowth), MEMORY_FLOOR_TOKENS - Math.max(0, loopGrowth - lcmFirstBudget),
        stored, `turn ${turn}: tool-loop assemble`);
      checks.assembles++;
    }
    messages.push(assistantMessage(text(logUniform(random, 5, 800), random)));
    await engine.commitTurn({ sessionId: "s1", sessionKey, advancementKey: `t${turn}`, messages, runtimeContext: { tokenBudget: window } });
    await engine.maintain({ sessionId: "s1", sessionKey, runtimeContext: { tokenBudget: window, llm } });
    const conversationId = db.get<{ id: number }>("SELECT conversation_id AS id FROM conversations")!.id;
    expect(checkInvariants(db, conversationId), `turn ${turn}`).toEqual([]);
  }
  expect(api.logs.filter((line) => line.level === "error")).toEqual([]);
  return { window, checks };
}

describe("the budget guarantee on the default settings", () => {
  it.each(Array.from({ length: 12 }, (_, index) => index + 1))("holds for every assemble of seeded session %i", async (seed) => {
    const { checks } = await playSession(seed, 24);
    expect(checks.assembles).toBeGreaterThanOrEqual(24);
  }, 120_000);
});
