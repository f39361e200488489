import { beforeAll, describe, expect, it } from "vitest";
import { compileSearchRegex } from "../../src/search/regex-policy.js";
import { regexSearch } from "../../src/search/regex-search.js";
import { SqliteRetrievalStore } from "../../src/sqlite/sqlite-retrieval-store.js";
import { userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, sessionOf, type RecallEnv } from "../helpers/recall.js";

interface GrepDetails {
  matches: { seq?: number; snippet: string; conversationId: number }[];
  truncated: boolean;
  strategy: string;
  note?: string;
  status?: string;
  parameter?: string;
}

/** Texts chosen to trip tokenization, case folding and diacritics. */
const CORPUS = [
  "config.threshold=0.5", "Config.Threshold", "myconfig.thresholdX", "deploy 12", "mydeploy 12", "pre-deploy", "x_zebra",
  "ax_zebra", "zebra", "ZEBRA-1", "zebra-22", "café au lait", "CAFÉ AU LAIT", "ÉCOLE", "ecole", "e\u0301cole",
  "error: timeout after 30s", "Error: Timeout", "errors: timeouts", "foo bar", "foobar", "foo  bar", "foo\tbar",
  "foo\u00a0bar", "baz qux", "release 7", "deploy 7", "xx", "x", "2026-02-10", "1234", "naïve", "straße", "STRASSE",
  "İstanbul", "istanbul", "key", "monkey", "keys", "ke y", "KEY-ring", "errrror", "tab\there",
];

const PATTERNS = [
  "config\\.threshold", "\\s+deploy", "^error: time", "zebra", "x_zebra", "(deploy|release) \\d+", "café", "x{2,}",
  "[0-9]{4}", "foo\\s+bar", "^foo bar|^baz qux", "key", "\\bkey", "ecole", "straße", "istanbul", "é", "ZEBRA-\\d",
  "timeout", "er+or", "^(?:error): (timeout)", "threshold\\b", "a[iï]ve", "deploy \\d$",
];

describe("regex search never misses a match", () => {
  let env: RecallEnv;

  beforeAll(async () => {
    env = createRecallEnv();
    await env.commit(MAIN, CORPUS.map((text) => userMessage(text)));
  });

  it.each(PATTERNS)("finds exactly what a full scan finds for %s", async (pattern) => {
    const regex = new RegExp(pattern, "i");
    const expected = CORPUS.flatMap((text, index) => (regex.test(text) ? [index + 1] : [])).sort((a, b) => b - a);
    const result = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern, scope: "messages", limit: 200 }));
    expect(result.status).toBeUndefined();
    expect(result.matches.map((match) => match.seq)).toEqual(expected);
  });
});

describe("regex search over long histories", () => {
  let env: RecallEnv;
  const second = sessionOf("main", "second");

  beforeAll(async () => {
    env = createRecallEnv();
    // 5,000 messages: more than two 2,000-row windows. The needle is the very first message.
    const messages = [userMessage("needle-0042 planted at the start"), ...Array.from({ length: 4_999 }, (_, index) => userMessage(`filler message ${index} with words`))];
    await env.commit(MAIN, messages);
    await env.commit(second, [userMessage("second conversation mentions needle-0043")]);
    // Maintenance indexes the import, then (next time) adds its terms to the term dictionary.
    for (let round = 0; round < 2; round++) await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
  });

  it("searches all history, not a recent window, whatever the plan", async () => {
    const cases: [string, string][] = [
      ["^needle-\\d+ planted", "index"],
      ["needle-\\d+", "index"], // through the term dictionary: "needle" may end a longer word
      ["needl[e]-\\d+", "substring"],
      ["[n]e{2}d[l]e-\\d", "scan"],
    ];
    for (const [pattern, strategy] of cases) {
      const result = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern }));
      expect(result, pattern).toMatchObject({ strategy, truncated: false });
      expect(result.matches.map((match) => match.seq), pattern).toEqual([1]);
    }
  });

  it("scans every conversation of the agent by row id windows", async () => {
    const result = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern: "needle-\\d+", allConversations: true }));
    expect(result.matches.map((match) => match.snippet)).toEqual(["second conversation mentions «needle-0043»", "«needle-0042» planted at the start"]);
  });

  it("stops a slow pattern at its budget, says so, and keeps the event loop running", async () => {
    await env.commit(second, [userMessage(`${"a".repeat(64)}b`)]);
    const store = new SqliteRetrievalStore(env.db);
    // The loop keeps running: timers set before the search fire while it runs (a search that blocked would let none
    // fire until it returned). Counted, not timed, so a loaded machine cannot fail it.
    let ticks = 0;
    let ticksWhileSearching = -1;
    const ticker = setInterval(() => ticks++, 1);
    const started = performance.now();
    const result = await regexSearch(store, {
      regex: compileSearchRegex("(a|aa)+$"),
      filter: { conversationIds: [env.conversationId(second)], since: null, before: null },
      scope: "messages",
      limit: 50,
      budgetMs: 300,
    }).finally(() => (ticksWhileSearching = ticks));
    clearInterval(ticker);
    const elapsed = performance.now() - started;
    expect(result.truncated).toBe(true);
    expect(result.stopReason).toMatch(/Stopped early: the 300 ms search budget ran out/);
    expect(elapsed).toBeLessThan(10_000); // stopped, not run to the end (exponential on this row)
    expect(ticksWhileSearching).toBeGreaterThanOrEqual(3);
  });

  it("refuses exponential patterns before running them", async () => {
    const started = performance.now();
    const result = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern: "(a+)+$" }));
    expect(result).toMatchObject({ status: "error", parameter: "pattern" });
    expect(performance.now() - started).toBeLessThan(5_000); // refused, not run: running it would not end
  });

  it("cuts off a slow pattern through the tool with the default budget and reports it as truncated", async () => {
    const started = performance.now();
    const result = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern: "(a|aa)+$", conversationId: env.conversationId(second) }));
    expect(result.truncated).toBe(true);
    expect(result.note).toMatch(/Stopped early/);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
