/**
 * The budget the hooks work with (issue 12, spec 011): the tool-loop assemble budget, the window the host states
 * now, pastes and tool output stored aside at a share of a small budget, and a single huge prompt that must not
 * make compaction aim at a budget of one token.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import plugin from "../../index.js";
import { resetSharedCircuitBreakers } from "../../src/compaction/circuit-breaker.js";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { lineFloorTokens } from "../../src/assembly/memory-floor.js";
import { HOST_WRAPPING_TOKENS, TOOL_SCHEMA_TOKENS } from "../../src/assembly/turn-budget.js";
import { systemPromptAdditionTokens } from "../../src/assembly/system-prompt.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { checkInvariants } from "../helpers/dag-invariants.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";
import { resolveRecordedPath } from "../../src/sqlite/stored-file-path.js";

afterEach(() => resetSharedCircuitBreakers());

const tokens = new WordTokenEstimator();
const ADDITION = systemPromptAdditionTokens(tokens);
const words = (count: number, prefix = "w") => Array.from({ length: count }, (_, index) => `${prefix}${index}`).join(" ");
const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };

/** `exchanges` (20) exchanges of 50 + 50 tokens (word estimator: 46 words + 4). */
async function seeded(config: Record<string, unknown> = {}, exchanges = 20) {
  const harness = createTestEngine({ tokens, config });
  const messages: AgentMessage[] = [];
  for (let turn = 0; turn < exchanges; turn++) messages.push(userMessage(words(46, `u${turn}x`)), assistantMessage(words(46, `a${turn}x`)));
  await harness.newEngine().commitTurn({ ...SESSION, advancementKey: "history", messages });
  return harness;
}

/** The memory floor's line for the 40 messages `seeded` stores: it stands for the 2,000 tokens that do not fit. */
const FLOOR_LINE = lineFloorTokens(40, tokens);

describe("the assemble budget of a turn", () => {
  it("takes what the tool loop added off the first budget, as the host measures it", async () => {
    const harness = await seeded();
    const engine = harness.newEngine();
    const prompt = "x".repeat(400); // 100 tokens by the host's four characters per token
    // The host's budget leaves out the wrapping of the prompt (HOST_WRAPPING_TOKENS) and the system prompt addition.
    const first = await engine.assemble({ ...SESSION, messages: [], prompt, tokenBudget: 1_000 + ADDITION + HOST_WRAPPING_TOKENS });
    // The memory floor's line and 19 messages of 50 (the 20th would pass 1,000 beside the line).
    expect(first.estimatedTokens).toBe(FLOOR_LINE + 950 + ADDITION);
    // Window 10,000; pending 2,100 = the prompt (100) and a tool result (2,000): 2,000 less is left for history, and
    // the 1,000 the first budget could not absorb leave the floor no room beyond its line.
    const loop = await engine.assemble({
      ...SESSION, messages: [], prompt, tokenBudget: 7_900,
      runtimeSettings: { limits: { promptTokenBudget: 10_000, maxOutputTokens: null } },
    });
    expect(loop.messages).toHaveLength(1);
    expect(loop.estimatedTokens).toBe(FLOOR_LINE);
    const smallLoop = await engine.assemble({
      ...SESSION, messages: [], prompt, tokenBudget: 9_600,
      runtimeSettings: { limits: { promptTokenBudget: 10_000, maxOutputTokens: null } },
    });
    // Loop growth 400 - 100 = 300: 1,000 + ADDITION - 300 leaves 700 tokens of history: the line and 13 messages.
    expect(smallLoop.estimatedTokens).toBe(FLOOR_LINE + 650 + ADDITION);
    expect(smallLoop.messages).toHaveLength(14);
  });

  it("leaves room for the tool schemas the host sends beside the history", async () => {
    const harness = await seeded();
    const availableTools = new Set(["read", "lcm_grep"]);
    const result = await harness.newEngine().assemble({
      ...SESSION, messages: [], availableTools, tokenBudget: 1_000 + ADDITION + 2 * TOOL_SCHEMA_TOKENS,
    });
    expect(result.estimatedTokens).toBe(FLOOR_LINE + 950 + ADDITION); // the floor's line and 19 messages
  });

  it("counts the tool schemas a tool-loop call carries, not every tool the first call names (Tool Search)", async () => {
    const harness = await seeded();
    const engine = harness.newEngine();
    const prompt = "x".repeat(400); // 100 tokens by the host's measure
    // The first call names 20 tools: 20 x 300 + the wrapping take the host's whole budget.
    const allTools = new Set(Array.from({ length: 20 }, (_, index) => `tool${index}`));
    const given = 20 * TOOL_SCHEMA_TOKENS + HOST_WRAPPING_TOKENS + 500;
    const first = await engine.assemble({ ...SESSION, messages: [], prompt, tokenBudget: given, availableTools: allTools });
    // 500 tokens: the system prompt addition, the floor's line and the 50-token messages that fit beside them.
    expect(first.estimatedTokens).toBe(ADDITION + FLOOR_LINE + Math.floor((500 - ADDITION - FLOOR_LINE) / 50) * 50);
    // The model call carries 5 of them (Tool Search keeps the rest behind tool_search): 15 x 300 more for history.
    const loop = await engine.assemble({
      ...SESSION, messages: [], prompt, tokenBudget: 9_900, availableTools: new Set(["tool_search", "tool_call", "tool0", "tool1", "tool2"]),
      runtimeSettings: { limits: { promptTokenBudget: 10_000, maxOutputTokens: null } },
    });
    expect(loop.estimatedTokens).toBe(2_000 + ADDITION); // 500 + 4,500: all 40 messages (2,000) and the addition fit
    expect(loop.systemPromptAddition).toBeDefined();
  });

  it("records the window and the reserve the host states", async () => {
    const harness = await seeded();
    const engine = harness.newEngine();
    await engine.assemble({ ...SESSION, messages: [], tokenBudget: 5_000, runtimeSettings: { limits: { promptTokenBudget: 5_000, maxOutputTokens: 4_000 } } });
    await engine.commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage("hello")], runtimeContext: { tokenBudget: 16_000 } });
    const conversation = await harness.store.findConversation({ agentId: "main", sessionId: "s1" });
    expect(conversation).toMatchObject({ lastTokenBudget: 5_000, lastReserveTokens: 4_000, lastWindowTokens: 16_000 });
  });

  it("writes a turn's budget only when it changed (an unchanged one costs no write)", async () => {
    const harness = await seeded();
    const writes = vi.spyOn(harness.store, "recordBudget");
    const conversation = async () => (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!;
    const limits = (promptTokenBudget: number) => ({ limits: { promptTokenBudget, maxOutputTokens: 4_000 } });
    await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 5_000, runtimeSettings: limits(5_000) });
    expect(writes).toHaveBeenCalledTimes(1);
    const recorded = await conversation();
    expect(recorded).toMatchObject({ lastTokenBudget: 5_000, lastReserveTokens: 4_000 });
    // The next turn sees the same budget and assembles the same context: nothing to write.
    await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 5_000, runtimeSettings: limits(5_000) });
    expect(writes).toHaveBeenCalledTimes(1);
    expect(await conversation()).toEqual(recorded);
    // A smaller budget is written.
    await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 3_000, runtimeSettings: limits(3_000) });
    expect(writes).toHaveBeenCalledTimes(2);
    expect(await conversation()).toMatchObject({ lastTokenBudget: 3_000, lastReserveTokens: 4_000 });
  });

  it("does not let a long prompt shrink what compaction aims at, nor record the budget a prompt took whole", async () => {
    const harness = await seeded();
    const conversation = async () => (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!;
    // The prompt (20,000 tokens by the host's measure) took everything: the host's budget is 1 token. Not recorded.
    await harness.newEngine().assemble({ ...SESSION, messages: [], prompt: "y".repeat(80_000), tokenBudget: 1 });
    expect((await conversation()).lastTokenBudget).toBeNull();
    // A long prompt left 1,000: recorded as half of what the window leaves for history and prompt together.
    await harness.newEngine().assemble({ ...SESSION, messages: [], prompt: "y".repeat(24_000), tokenBudget: 1_000 + HOST_WRAPPING_TOKENS });
    expect((await conversation()).lastTokenBudget).toBe(Math.floor((1_000 + 6_000) / 2));
  });
});

describe("compaction's budget follows the window the host states now", () => {
  it("aims at a smaller budget after the model was switched to a smaller window", async () => {
    const harness = await seeded({}, 40); // 4,000 tokens
    const llm = new RecordingLlm(() => "The work went on.\nExpand for details about: files");
    // Last turn: window 32,000, reserve 8,000, budget 20,000 (overhead 4,000). The model is switched to a 10,000
    // window (reserve 2,500): the budget is 10,000 - 2,500 - 4,000 = 3,500, the threshold 2,625.
    await harness.store.recordBudget((await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId, {
      tokenBudget: 20_000, windowTokens: 32_000, reserveTokens: 8_000,
    });
    const result = await harness.newEngine().compact({ ...SESSION, force: true, compactionTarget: "threshold", tokenBudget: 10_000, runtimeContext: { llm } });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect(result.result!.details).toMatchObject({ budgetTokens: 3_500, targetTokens: 2_625 });
    expect(result.result!.tokensAfter).toBeLessThanOrEqual(2_625);
  });

  it("is a truthful no-op when a non-forced compact states a window far above the context", async () => {
    const harness = await seeded();
    const llm = new RecordingLlm();
    const conversationId = (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId;
    // An older, small budget (1,000 at a 4,000 window); now a 200,000 window: the context (2,000) is far below.
    await harness.store.recordBudget(conversationId, { tokenBudget: 1_000, windowTokens: 4_000, reserveTokens: 1_000 });
    const result = await harness.newEngine().compact({ ...SESSION, compactionTarget: "budget", tokenBudget: 200_000, runtimeContext: { llm } });
    expect(result).toMatchObject({ ok: true, compacted: false });
    expect(result.reason).toMatch(/^already under target/);
    expect(llm.calls).toHaveLength(0);
  });
});

describe("large content at a small budget", () => {
  it("stores a plain paste aside when it passes its share of the budget, keeping its head and tail", async () => {
    const harness = createTestEngine({ tokens });
    const engine = harness.newEngine();
    // Budget 4,000: a paste of 2,400 tokens is above largeMessageBudgetShare (0.5) of it, far below the fixed 25,000.
    await engine.assemble({ ...SESSION, messages: [], tokenBudget: 4_000 });
    const paste = `QUESTION-AT-START ${words(2_400, "p")} QUESTION-AT-END`;
    await engine.commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage(paste), assistantMessage("ok")] });
    const stored = harness.db.get<{ content: string }>("SELECT content FROM messages WHERE role = 'user'")!.content;
    expect(stored).toMatch(/^QUESTION-AT-START p0 p1/);
    expect(stored).toMatch(/QUESTION-AT-END$/);
    expect(stored).toMatch(/\[LCM File: file_[0-9a-f]{16} \| pasted-text \| text\/plain \|/);
    const file = harness.db.get<{ origin: string; storage_path: string }>("SELECT origin, storage_path FROM large_files")!;
    expect(file.origin).toBe("paste");
    expect(readFileSync(resolveRecordedPath(harness.db.path, file.storage_path), "utf8")).toBe(paste); // byte-exact
  });

  it("stores tool output aside at the share of a small budget, and leaves it at a large one", async () => {
    for (const [budget, expectStoredAside] of [[4_000, true], [100_000, false]] as const) {
      const harness = createTestEngine({ tokens });
      const engine = harness.newEngine();
      await engine.assemble({ ...SESSION, messages: [], tokenBudget: budget });
      await engine.commitTurn({
        ...SESSION, advancementKey: "t1",
        messages: [userMessage("read it"), toolCallMessage([{ id: "c1", name: "read", arguments: { path: "a.log" } }]),
          toolResultMessage("c1", "read", words(2_800, "line")), assistantMessage("done")],
      });
      const files = harness.db.get<{ count: number }>("SELECT count(*) AS count FROM large_files")!.count;
      expect(files, `budget ${budget}`).toBe(expectStoredAside ? 1 : 0);
      expect(checkInvariants(harness.db, (await harness.store.findConversation({ agentId: "main", sessionId: "s1" }))!.conversationId)).toEqual([]);
    }
  });
});

describe("what storing aside costs", () => {
  it("sizes the exploration request of a paste to the window the host stated, so a small model does not refuse it", async () => {
    const llm = new RecordingLlm(() => "A long report about the quarterly numbers, section by section.");
    const api = new FakePluginApi({ databasePath: join(tempDir(), "lcm.db"), largeFileTokenThreshold: 5_000 }, { llm });
    plugin.register(api);
    // Turn 1 in an 8k window: the first assemble, then a tool-loop assemble that states the window.
    const turn = api.engine(); // OpenClaw builds one engine per turn
    await turn.assemble({ ...SESSION, messages: [], tokenBudget: 2_000 });
    await turn.assemble({ ...SESSION, messages: [], tokenBudget: 7_000, runtimeSettings: { limits: { promptTokenBudget: 8_000, maxOutputTokens: null } } });
    const paste = Array.from({ length: 4_000 }, (_, index) => `line ${index} of the pasted report says something.`).join("\n");
    await api.engine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage(paste), assistantMessage("ok")] });
    expect(llm.calls).toHaveLength(1);
    const prompt = llm.calls[0]!.messages.map((message) => message.content).join("\n");
    // Window 8,000 less the reply and the instructions, at 3.2 characters per token: at most 21,760 characters.
    expect(prompt).toContain("only excerpts are shown");
    expect(prompt.length).toBeLessThan(23_000);
    expect(paste.length).toBeGreaterThan(100_000);
  });

  it("stores aside no message smaller than half of the 3,200 tokens compaction plans for, however small the budget", async () => {
    for (const [size, expectStoredAside] of [[1_500, false], [1_700, true]] as const) {
      const harness = createTestEngine({ tokens });
      // A 300-token budget: half of it would store every message of 150 tokens or more aside (the coding tool profile
      // at 16k had every user message stored aside). Half of the planning budget, 1,600, is the line.
      await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 300 });
      await harness.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage(words(size - 4, "m")), assistantMessage("ok")] });
      expect(harness.db.get<{ count: number }>("SELECT count(*) AS count FROM large_files")!.count, `${size} tokens`).toBe(expectStoredAside ? 1 : 0);
    }
  });

  it("measures a message against half the window at least, where OpenClaw's own prompt leaves history nothing", async () => {
    for (const [size, expectStoredAside] of [[1_900, false], [2_100, true]] as const) {
      const harness = createTestEngine({ tokens });
      // An 8,000-token window whose host budget is 30: half the window (4,000) x largeMessageBudgetShare (0.5) = 2,000.
      await harness.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 30 });
      await harness.newEngine().commitTurn({ ...SESSION, advancementKey: "t0", messages: [userMessage("hello")], runtimeContext: { tokenBudget: 8_000 } });
      await harness.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage(words(size - 4, "m")), assistantMessage("ok")] });
      expect(harness.db.get<{ count: number }>("SELECT count(*) AS count FROM large_files")!.count, `${size} tokens`).toBe(expectStoredAside ? 1 : 0);
    }
  });

  it("asks the model to explore only content past largeFileTokenThreshold, not a long message of a small window", async () => {
    const llm = new RecordingLlm(() => "A long report about the quarterly numbers, section by section.");
    const databasePath = join(tempDir(), "lcm.db");
    const api = new FakePluginApi({ databasePath, largeFileTokenThreshold: 5_000 }, { llm });
    plugin.register(api);
    const prose = (count: number, prefix: string) => Array.from({ length: count }, (_, index) => `${prefix} sentence ${index} says something.`).join(" ");
    // Budget 4,000: the message share is 2,000 tokens. A 2,600-token message is stored aside without a model call.
    await api.engine().assemble({ ...SESSION, messages: [], tokenBudget: 4_000 });
    await api.engine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage(prose(350, "short")), assistantMessage("ok")] });
    expect(openSharedDatabase(databasePath).get<{ count: number }>("SELECT count(*) AS count FROM large_files")!.count).toBe(1);
    expect(llm.calls).toHaveLength(0);
    // A 7,000-token paste is past the fixed threshold (5,000): the model writes its summary.
    await api.engine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [userMessage(prose(900, "long")), assistantMessage("ok")] });
    expect(llm.calls).toHaveLength(1);
    expect(llm.calls[0]).toMatchObject({ purpose: "lcm-large-file-exploration" });
  });
});
