/**
 * Search never silently misses a stored match, NUL included (issue 13). SQLite's LIKE stops at a NUL character,
 * so a substring prefilter judged a message by the text before its first NUL: "XSECRETWORDX" found 1 of 2 stored
 * occurrences and said nothing. Every plan lcm_grep can take must find both, over messages and summaries, in one
 * conversation (seq windows) and across all of them (row id windows), without reporting truncation.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, type RecallEnv } from "../helpers/recall.js";
import { insertLeafSummary } from "../helpers/summaries.js";

interface GrepDetails {
  matches: { type: string; snippet: string }[];
  truncated: boolean;
  strategy?: string;
  status?: string;
}

/** Patterns that force each plan, as in regex-search.test.ts. */
const PLANS: [string, string][] = [
  ["\\sXSECRETWORDX", "index"], // a word known to start a token: the full-text index lists the candidates
  ["XSECRETWORDX-\\d", "index"], // "XSECRETWORDX" may end a longer word: the term dictionary
  ["XSECRETWORD[X]-\\d", "substring"], // no index word: filtered by LIKE '%XSECRETWORD%' in SQL
  ["[X]S[E]C[R]E[T]W[O]R[D][X]", "scan"], // no literal run of three: every row goes to the regex
];

describe("lcm_grep finds matches after a NUL character", () => {
  let env: RecallEnv;

  beforeAll(async () => {
    env = createRecallEnv();
    const filler = Array.from({ length: 6 }, (_, index) => userMessage(`filler ${index} about nothing in particular`));
    await env.commit(MAIN, [
      ...filler,
      userMessage("plain text with XSECRETWORDX-1 inside"),
      userMessage("binary \u0000 prefix then XSECRETWORDX-2 inside"),
    ]);
    const conversationId = env.conversationId(MAIN);
    insertLeafSummary(env.db, conversationId, 1, 3, "The summary says XSECRETWORDX-3 was mentioned.");
    insertLeafSummary(env.db, conversationId, 4, 6, "A summary \u0000 with a NUL, then XSECRETWORDX-4 later.");
  });

  it("the database really holds the NUL that LIKE stops at", () => {
    const like = env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE content LIKE '%XSECRETWORDX%'")!.n;
    expect(like).toBe(1);
  });

  describe.each([
    ["messages", false], ["messages", true], ["summaries", false], ["summaries", true], ["both", false],
  ] as const)("scope %s (allConversations %s)", (scope, allConversations) => {
    it.each(PLANS)("%s finds every stored occurrence through the %s plan", async (pattern, strategy) => {
      const result = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern, scope, allConversations }));
      expect(result.status).toBeUndefined();
      // The summary search has no term dictionary: without an index word it filters by substring.
      const expectedStrategy = scope === "summaries" && pattern === "XSECRETWORDX-\\d" ? "substring" : strategy;
      expect(result).toMatchObject({ strategy: expectedStrategy, truncated: false });
      const expected = { messages: ["message", "message"], summaries: ["summary", "summary"], both: ["message", "message", "summary", "summary"] }[scope];
      expect(result.matches.map((match) => match.type).sort()).toEqual(expected);
      expect(result.matches.every((match) => /XSECRETWORDX/.test(match.snippet))).toBe(true);
    });
  });

  it("full-text search indexes the words after a NUL too (FTS5 reads the whole text)", async () => {
    const result = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern: "XSECRETWORDX", mode: "full_text" }));
    expect(result.truncated).toBe(false);
    expect(result.matches.map((match) => match.type).sort()).toEqual(["message", "message", "summary", "summary"]);
  });
});
