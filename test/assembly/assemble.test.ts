import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { SYSTEM_PROMPT_ADDITION, systemPromptAdditionTokens } from "../../src/assembly/system-prompt.js";
import { lineFloorTokens } from "../../src/assembly/memory-floor.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";

// With the word estimator a message of six words costs 6 + 4 (framing) = 10 tokens.
const sixWords = (label: string) => `${label} two three four five six`;
const wordEngine = (config: Record<string, unknown> = {}) => createTestEngine({ tokens: new WordTokenEstimator(), config });
/** The memory floor's line when `stored` messages are stored (45 words and framing with the word estimator). */
const floorLine = (stored: number) => lineFloorTokens(stored, new WordTokenEstimator());
const FLOOR = /^<earlier_history>/;
/** A first message of 100 words: left out, the floor that stands for it is cheaper. */
const longFirst = () => userMessage(Array.from({ length: 100 }, (_, index) => `first${index}`).join(" "));

function texts(messages: AgentMessage[]): string[] {
  return messages.map((message) =>
    typeof message.content === "string" ? message.content : JSON.stringify(message.content),
  );
}

async function seed(engine: ReturnType<typeof wordEngine>, count: number): Promise<AgentMessage[]> {
  const messages = Array.from({ length: count }, (_, index) =>
    index % 2 === 0 ? userMessage(sixWords(`m${index}`)) : assistantMessage(sixWords(`m${index}`)),
  );
  await engine.newEngine().ingestBatch({ sessionId: "s1", messages });
  return messages;
}

describe("assemble", () => {
  it("returns everything, in order, when it fits the budget, with an honest estimate", async () => {
    const setup = wordEngine();
    const messages = await seed(setup, 6);
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 1_000 });
    expect(result.messages).toEqual(messages);
    // 6 messages × 10 tokens, and the system prompt addition (the host's budget does not count it)
    expect(result.estimatedTokens).toBe(60 + systemPromptAdditionTokens(new WordTokenEstimator()));
    expect(result.systemPromptAddition).toBe(SYSTEM_PROMPT_ADDITION);
  });

  it("fills newest-first within the budget and drops the oldest, which the memory floor stands for", async () => {
    const setup = wordEngine({ freshTailCount: 2 });
    await seed(setup, 10);
    // budget floor + 45: the floor's line, then m9, m8, m7, m6 (40); m5 would make 50 > 45
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: floorLine(10) + 45 });
    const [floor, ...rest] = texts(result.messages);
    expect(floor).toMatch(FLOOR);
    expect(floor).toContain("This conversation has 10 stored messages; the older ones are not shown here");
    expect(rest.map((text) => /m\d+/.exec(text)?.[0])).toEqual(["m6", "m7", "m8", "m9"]);
    expect(result.estimatedTokens).toBe(floorLine(10) + 40);
  });

  it("never goes over the budget, even when the fresh tail would", async () => {
    const setup = wordEngine({ freshTailCount: 4 });
    await seed(setup, 10);
    // The tail's 4 messages cost 40; beside the floor the budget holds one (10 <= 15), the second would make 20.
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: floorLine(10) + 15 });
    expect(texts(result.messages).slice(1).map((text) => /m\d+/.exec(text)?.[0])).toEqual(["m9"]);
    expect(result.estimatedTokens).toBe(floorLine(10) + 10);
    expect(result.systemPromptAddition).toBeUndefined(); // a budget this small goes to the context alone
  });

  it("shows the memory floor alone, beyond a budget too small to hold it, when everything is left out", async () => {
    const setup = wordEngine();
    await seed(setup, 10);
    // A budget of 15 holds m9, but not beside the floor's line (45): the floor alone, over the budget by its size.
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 15 });
    expect(texts(result.messages)).toHaveLength(1);
    expect(texts(result.messages)[0]).toMatch(FLOOR);
    expect(result.estimatedTokens).toBe(floorLine(10));
  });

  it("shows the newest message bounded, head and tail, when it alone is larger than the budget", async () => {
    const setup = wordEngine();
    const words = Array.from({ length: 400 }, (_, index) => `w${index}`).join(" ");
    await setup.newEngine().ingest({ sessionId: "s1", message: userMessage(`START ${words} END`) });
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 150 });
    const text = result.messages[0]!.content as string;
    expect(result.messages).toHaveLength(1);
    expect(result.estimatedTokens).toBeLessThanOrEqual(150);
    expect(text.startsWith("START w0 w1")).toBe(true);
    expect(text.endsWith("w399 END")).toBe(true);
    expect(text).toMatch(/\[\.\.\. \d+ tokens of this message are left out here .* lcm_grep finds any part of it/);
  });

  it("takes the budget from runtimeSettings, then the configured default, when tokenBudget is absent", async () => {
    const setup = wordEngine({ freshTailCount: 0, defaultTokenBudget: 1_000 });
    await seed(setup, 10);
    const fromSettings = await setup.newEngine().assemble({
      sessionId: "s1", messages: [], runtimeSettings: { limits: { promptTokenBudget: floorLine(10) + 30, maxOutputTokens: null } },
    });
    expect(fromSettings.messages).toHaveLength(4); // the floor and 3 messages
    const fromDefault = await setup.newEngine().assemble({ sessionId: "s1", messages: [] });
    expect(fromDefault.messages).toHaveLength(10);
  });

  it("caps later calls of the same turn at the first budget (the host's tool-loop budget ignores the system prompt)", async () => {
    const setup = wordEngine({ freshTailCount: 0 });
    await seed(setup, 10);
    const engine = setup.newEngine();
    const first = await engine.assemble({ sessionId: "s1", messages: [], tokenBudget: floorLine(10) + 30 });
    const toolLoop = await engine.assemble({ sessionId: "s1", messages: [], tokenBudget: 31_960 });
    expect(toolLoop.messages).toEqual(first.messages);
    expect(first.messages).toHaveLength(4); // the floor and 3 messages
  });

  it("keeps a tool call and its results together when the budget cuts between them", async () => {
    const setup = wordEngine({ freshTailCount: 1 });
    const call = toolCallMessage([{ id: "c1", name: "grep", arguments: { q: "x" } }, { id: "c2", name: "grep", arguments: { q: "y" } }]);
    const messages = [
      longFirst(), call, toolResultMessage("c1", "grep", sixWords("r1")),
      toolResultMessage("c2", "grep", sixWords("r2")), userMessage(sixWords("last")),
    ];
    await setup.newEngine().ingestBatch({ sessionId: "s1", messages });
    // Beside the floor, room for the tail and one result, but not for the whole call unit: the unit goes as a whole.
    const tight = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: floorLine(5) + 25 });
    expect(texts(tight.messages)[0]).toMatch(FLOOR);
    expect(tight.messages.slice(1).map((message) => message.role)).toEqual(["user"]);
    const roomy = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 1_000 });
    expect(roomy.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "toolResult", "user"]);
  });

  it("takes the newest tool call with its result as one unit", async () => {
    const setup = wordEngine({ freshTailCount: 1 });
    const messages = [
      longFirst(),
      toolCallMessage([{ id: "c1", name: "grep", arguments: {} }]),
      toolResultMessage("c1", "grep", sixWords("result")),
    ];
    await setup.newEngine().ingestBatch({ sessionId: "s1", messages });
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: floorLine(3) + 25 });
    expect(texts(result.messages)[0]).toMatch(FLOOR);
    expect(result.messages.slice(1).map((message) => message.role)).toEqual(["assistant", "toolResult"]);
  });

  it("never assembles an orphan tool result or an unanswered tool call", async () => {
    const setup = wordEngine();
    const messages = [
      toolResultMessage("ghost", "grep", "result without a call"),
      userMessage("question"),
      toolCallMessage([{ id: "c1", name: "grep", arguments: {} }, { id: "c2", name: "grep", arguments: {} }], "working"),
      toolResultMessage("c1", "grep", "only one answered"),
      assistantMessage("done"),
    ];
    await setup.newEngine().ingestBatch({ sessionId: "s1", messages });
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 1_000 });
    expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    const callBlocks = (result.messages[1]!.content as { type: string; id?: string }[]).filter((block) => block.type === "toolCall");
    expect(callBlocks.map((block) => block.id)).toEqual(["c1"]);
  });

  it("drops a tool result that answers no call in the context, even within a call's unit (docs/mutations.md, M8)", async () => {
    const setup = wordEngine();
    const messages = [
      userMessage("question"),
      toolCallMessage([{ id: "c1", name: "grep", arguments: {} }]),
      toolResultMessage("c1", "grep", "the answer"),
      toolResultMessage("c1", "grep", "a second answer to the same call"),
      toolResultMessage("c9", "grep", "an answer to a call never made"),
      assistantMessage("done"),
    ];
    await setup.newEngine().ingestBatch({ sessionId: "s1", messages });
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 1_000 });
    expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(result.messages[2]).toMatchObject({ toolCallId: "c1", content: [{ type: "text", text: "the answer" }] });
  });

  it("keeps the assembled prefix byte-identical from turn to turn", async () => {
    const setup = wordEngine();
    let previous = "";
    for (let turn = 0; turn < 10; turn++) {
      await setup.newEngine().commitTurn({
        sessionId: "s1", advancementKey: `t${turn}`,
        messages: [userMessage(`question ${turn}`), assistantMessage(`answer ${turn}`)],
      });
      const assembled = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 10_000 });
      const serialized = JSON.stringify(assembled.messages);
      expect(serialized.startsWith(previous.slice(0, -1))).toBe(true);
      previous = serialized;
    }
  });

  it("gives assistant content as blocks even when a host stored a string", async () => {
    const setup = wordEngine();
    await setup.newEngine().ingest({ sessionId: "s1", message: { role: "assistant", content: "legacy string", timestamp: 1 } });
    const [message] = (await setup.newEngine().assemble({ sessionId: "s1", messages: [] })).messages;
    expect(message?.content).toEqual([{ type: "text", text: "legacy string" }]);
  });
});

describe("bad input", () => {
  it("skips malformed messages with a warning and stores the valid ones", async () => {
    const setup = wordEngine();
    const batch = [null, 42, "text", { content: "no role" }, { role: "" }, userMessage("valid one")] as unknown as AgentMessage[];
    expect(await setup.newEngine().ingestBatch({ sessionId: "s1", messages: batch })).toEqual({ ingestedCount: 1 });
    expect(setup.logger.lines.filter((line) => line.level === "warn")).toHaveLength(5);
    expect(setup.logger.errors()).toEqual([]);
  });

  it("stores unknown roles but never sends them to the model", async () => {
    const setup = wordEngine();
    await setup.newEngine().ingestBatch({ sessionId: "s1", messages: [{ role: "telemetry", content: "x", timestamp: 1 }, userMessage("hi")] });
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(2);
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [] });
    expect(result.messages.map((message) => message.role)).toEqual(["user"]);
  });

  it("stores a 10 MB message and assembles it within the budget", async () => {
    const setup = createTestEngine();
    const huge = "x".repeat(10 * 1024 * 1024);
    await setup.newEngine().ingest({ sessionId: "s1", message: userMessage(huge) });
    const result = await setup.newEngine().assemble({ sessionId: "s1", messages: [], tokenBudget: 10_000 });
    expect(result.estimatedTokens).toBeLessThanOrEqual(10_000);
    expect(String(result.messages[0]?.content)).toContain("[LCM File: file_"); // stored aside as a paste
  });

  it("answers every hook without throwing when the host omits the session id", async () => {
    const setup = wordEngine();
    const engine = setup.newEngine();
    const noSession = { sessionId: undefined as unknown as string };
    await expect(engine.assemble({ ...noSession, messages: [userMessage("x")] })).resolves.toMatchObject({ estimatedTokens: 0 });
    await expect(engine.commitTurn({ ...noSession, advancementKey: "k", messages: [] })).resolves.toEqual({ status: "committed" });
    await expect(engine.ingest({ ...noSession, message: userMessage("x") })).resolves.toEqual({ ingested: false });
    await expect(engine.bootstrap({ ...noSession })).resolves.toMatchObject({ bootstrapped: false });
    expect(setup.logger.errors().length).toBe(4);
  });
});
