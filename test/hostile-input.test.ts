/**
 * Hostile input through the public surface: malformed messages into every ingest hook, pathological content,
 * FTS syntax and catastrophic regexes in lcm_grep, forged and foreign ids, wrongly typed and out-of-range tool
 * parameters. For every input: a clear error or a safe result, no hook throws (a throw would make OpenClaw
 * quarantine the engine), nothing is half-written (the IntegrityChecker finds nothing), and the engine keeps
 * serving turns afterwards.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../src/contracts.js";
import type { AgentMessage } from "../src/host/openclaw-types.js";
import { IntegrityChecker } from "../src/integrity/integrity-checker.js";
import { SqliteIntegrityStore } from "../src/sqlite/sqlite-integrity-store.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "./helpers/messages.js";
import { MAIN, OTHER_AGENT, createRecallEnv, detailsOf, exchanges, textOf, type RecallEnv } from "./helpers/recall.js";

const tried = { messages: 0, grepPatterns: 0, ids: 0, toolParams: 0 };

afterAll(() => {
  console.log(
    `hostile input: ${tried.messages} malformed or pathological messages, ${tried.grepPatterns} hostile lcm_grep patterns, ` +
      `${tried.ids} forged or foreign ids, ${tried.toolParams} invalid tool parameter sets: no throw, no partial write`,
  );
});

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 0; level < depth; level++) value = { nested: value };
  return value;
}

const MALFORMED: unknown[] = [
  null, undefined, 42, "a string", [], [userMessage("inside an array")], {}, { role: "" }, { role: 7 }, { role: null },
  { content: "no role" }, { role: "user", content: 12 }, { role: "user", content: { text: "object content" } },
  { role: "user", content: [null, 3, "x", { type: "text" }, { type: "text", text: 5 }, { type: "image" }] },
  { role: "assistant", content: [{ type: "toolCall", name: 3, arguments: "not an object" }] },
  { role: "assistant", content: [{ type: "toolCall", id: "c", name: "n", arguments: nested(50_000) }], timestamp: 1 },
  { role: "user", content: "bad timestamps", timestamp: Number.NaN },
  { role: "user", content: "string timestamp", timestamp: "not a date" },
  { role: "user", content: "negative timestamp", timestamp: -5 },
  { role: "toolResult", content: "no call id", toolCallId: 5 },
  { role: "telemetry", content: "unknown role" },
  { role: "user", content: "lone surrogate \ud800 and NUL \u0000 and bidi \u202e" },
  { role: "user", content: "x".repeat(10 * 1024 * 1024) },
  { role: "user", content: "a".repeat(100), idempotencyKey: 12345 },
  { role: "__proto__", content: "prototype role" },
  JSON.parse('{"role":"user","content":"own __proto__ key","__proto__":{"polluted":true}}'),
];
/** MALFORMED entries no hook can store: not an object (0-5), no non-empty string role (6-10), nested past the stack (15). */
const UNSTORABLE = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15]);

describe("hostile input", () => {
  let env: RecallEnv;
  let checker: IntegrityChecker;

  beforeAll(async () => {
    env = createRecallEnv();
    checker = new IntegrityChecker({ store: new SqliteIntegrityStore(env.db), clock: systemClock, fileExists: async (path) => existsSync(path) });
    await env.commit(MAIN, exchanges(10, "needle"));
    await env.commit(OTHER_AGENT, [userMessage("ops secret walrus-77"), assistantMessage("ok")]);
  });

  it("every ingest hook answers malformed and pathological messages without throwing or half-writing", async () => {
    const engine = () => env.api.engine();
    const session = { sessionId: "hostile", sessionKey: "agent:main:hostile" };
    // A hook that threw would answer through its guard, which logs an error: none may be logged, and each answer
    // must be the one its input calls for.
    for (const [index, message] of MALFORMED.entries()) {
      tried.messages++;
      const warningsBefore = env.api.logs.filter((line) => line.level === "warn").length;
      const batch = [message as AgentMessage, userMessage(`valid neighbour ${index}`)];
      const storable = !UNSTORABLE.has(index);
      expect(await engine().ingest({ ...session, message: message as AgentMessage }), `${index}`).toEqual({ ingested: storable });
      // The neighbour is new; the oddity was stored by ingest just now, or cannot be.
      expect(await engine().ingestBatch({ ...session, messages: batch }), `${index}`).toEqual({ ingestedCount: 1 });
      expect(await engine().commitTurn({ ...session, advancementKey: `hostile-${index}`, messages: batch }), `${index}`).toEqual({ status: "committed" });
      await expect(engine().afterTurn({ ...session, sessionFile: "", messages: batch, prePromptMessageCount: 0 })).resolves.toBeUndefined();
      const assembled = await engine().assemble({ ...session, messages: batch, tokenBudget: 5_000 });
      expect(assembled.messages.at(-1), `${index}`).toMatchObject({ role: "user", content: `valid neighbour ${index}` });
      expect(assembled.estimatedTokens).toBeLessThanOrEqual(5_000);
      expect(env.api.errors(), `${index}`).toEqual([]);
      // What cannot be stored is skipped with a warning that says why, by each of the three storing hooks.
      const warnings = env.api.logs.filter((line) => line.level === "warn").slice(warningsBefore).map((line) => line.message);
      expect(warnings.filter((warning) => warning.includes("Skipped a message that cannot be stored: LcmError:")), `${index}`).toHaveLength(storable ? 0 : 3);
    }
    const garbage = { ...session, messages: "not an array" as unknown as AgentMessage[] };
    expect(await engine().ingestBatch(garbage)).toEqual({ ingestedCount: 0 });
    const fromStore = await engine().assemble({ ...garbage, tokenBudget: 5_000 });
    expect(fromStore.messages.at(-1)).toMatchObject({ content: `valid neighbour ${MALFORMED.length - 1}` });
    expect(env.api.errors()).toEqual([]);
    const stored = env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages m JOIN conversations c USING (conversation_id) WHERE c.session_id = 'hostile'")!.n;
    expect(stored).toBeGreaterThan(MALFORMED.length); // the valid neighbours and the storable oddities
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const findings = (await checker.check()).findings.filter((finding) => finding.kind !== "orphan_tool_result");
    expect(findings).toEqual([]);
    // Still serving: a normal turn after all of that.
    await engine().commitTurn({ ...session, advancementKey: "after", messages: [userMessage("still here"), assistantMessage("yes")] });
    const assembled = await engine().assemble({ ...session, messages: [], tokenBudget: 5_000 });
    expect(JSON.stringify(assembled.messages.at(-1))).toContain("yes");
  });

  it("never assembles an orphaned or unanswered tool call whatever the host stored", async () => {
    const session = { sessionId: "pairs", sessionKey: "agent:main:pairs" };
    await env.api.engine().ingestBatch({
      ...session,
      messages: [toolResultMessage("nope", "x", "orphan"), toolCallMessage([{ id: "open", name: "x", arguments: {} }]), userMessage("next")],
    });
    const assembled = await env.api.engine().assemble({ ...session, messages: [] });
    expect(assembled.messages.map((message) => message.role)).toEqual(["user"]);
  });

  const HOSTILE_PATTERNS: [string, string][] = [
    ["regex", "(a+)+$"], ["regex", "(x+x+)+y"], ["regex", "(.*a){20}"], ["regex", "(a|aa)+b"], ["regex", "([a-z]+)*="],
    ["regex", "\\1(a)"], ["regex", "(?<n>a)\\k<n>"], ["regex", "["], ["regex", "(unclosed"], ["regex", "a{99999999}"],
    ["regex", "x".repeat(600)], ["regex", ".*"], ["regex", "^"], ["regex", "(?=a)*"], ["regex", "\\"],
    ["full_text", '"unbalanced'], ["full_text", "content: x"], ["full_text", "NEAR(a b, 3)"], ["full_text", "a AND OR NOT b"],
    ["full_text", "^start"], ["full_text", "*"], ["full_text", "()"], ["full_text", "{col}: x"], ["full_text", "'; DROP TABLE messages; --"],
    ["full_text", "\u0000"], ["full_text", "needle1 OR"], ["full_text", "-needle1"], ["full_text", "needle1 +needle2"],
  ];

  it.each(HOSTILE_PATTERNS)("lcm_grep answers the %s pattern %j quickly with an error or a safe result", async (mode, pattern) => {
    tried.grepPatterns++;
    const started = Date.now();
    const result = await env.call("lcm_grep", { pattern, mode });
    expect(Date.now() - started).toBeLessThan(10_000);
    const details = detailsOf<{ matches?: unknown[]; error?: string }>(result);
    if (result.isError) expect(textOf(result)).toMatch(/pattern|regular expression|search/i);
    else expect(Array.isArray(details.matches)).toBe(true);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBeGreaterThan(0);
  });

  const FORGED_IDS = [
    "sum_0000000000000000", "sum_ffffffffffffffff", "file_0000000000000000", "sum_", "file_", "sum_XYZ", "../../etc/passwd",
    "sum_0000000000000000' OR 1=1 --", "%", "*", "", " ", "sum_0123456789abcdef0", "SUM_0123456789ABCDEF",
  ];

  it.each(FORGED_IDS)("lcm_describe refuses the forged id %j with a clear error", async (id) => {
    tried.ids++;
    const result = await env.call("lcm_describe", { id });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/not found|No summary|No stored|not a (summary|file) id|id|empty/i);
  });

  it("treats another agent's summary id exactly like an unknown one", async () => {
    tried.ids++;
    const ops = env.conversationId(OTHER_AGENT);
    const { insertLeafSummary } = await import("./helpers/summaries.js");
    const foreign = insertLeafSummary(env.db, ops, 1, 2, "ops private summary walrus-77");
    const result = await env.call("lcm_describe", { id: foreign });
    expect(result.isError).toBe(true);
    expect(textOf(result)).not.toContain("walrus");
    const grep = await env.call("lcm_grep", { pattern: "walrus", allConversations: true });
    expect(textOf(grep)).not.toContain("walrus-77");
  });

  const BAD_PARAMS: [string, unknown][] = [
    ["lcm_grep", {}], ["lcm_grep", { pattern: 5 }], ["lcm_grep", { pattern: "x", mode: "fuzzy" }],
    ["lcm_grep", { pattern: "x", limit: 0 }], ["lcm_grep", { pattern: "x", limit: 10_000 }], ["lcm_grep", { pattern: "x", limit: "many" }],
    ["lcm_grep", { pattern: "x", since: "yesterday" }], ["lcm_grep", { pattern: "x", scope: ["messages"] }],
    ["lcm_grep", { pattern: "x", conversationId: -1 }], ["lcm_grep", { pattern: "x", allConversations: "perhaps" }],
    ["lcm_grep", { pattern: "x", unknownParameter: 1 }], ["lcm_grep", null], ["lcm_grep", "pattern"],
    ["lcm_describe", {}], ["lcm_describe", { id: 12 }], ["lcm_describe", { id: "sum_0000000000000000", offset: -1 }],
    ["lcm_describe", { id: "file_0000000000000000", maxBytes: 10 }],
    ["lcm_expand_query", {}], ["lcm_expand_query", { prompt: "why?" }], ["lcm_expand_query", { prompt: "", query: "x" }],
    ["lcm_expand_query", { prompt: "why?", summaryIds: "sum_0000000000000000" }], ["lcm_expand_query", { prompt: "why?", query: "x", maxTokens: -5 }],
    ["lcm_expand_query", { prompt: "why?", summaryIds: ["not-an-id"] }],
  ];

  it.each(BAD_PARAMS)("%s names the invalid parameter for %j and changes nothing", async (tool, params) => {
    tried.toolParams++;
    const before = env.db.get<{ n: number }>("SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM expansion_grants) AS n")!.n;
    const result = await env.call(tool, params);
    expect(result.isError).toBe(true);
    expect(textOf(result).length).toBeGreaterThan(10);
    expect(env.db.get<{ n: number }>("SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM expansion_grants) AS n")!.n).toBe(before);
  });

  it("does not offer lcm_expand to the main agent", () => {
    expect(() => env.tool("lcm_expand")).toThrow(/No tool "lcm_expand"/);
  });
});
