/**
 * Recall finds what agents actually type (issue 14): each shape of detail is planted among ordinary messages
 * and looked up the way an agent would, through lcm_grep's and lcm_expand_query's execute.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { GrepMatch } from "../../src/search/grep.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, exchanges, MAIN, type RecallEnv } from "../helpers/recall.js";

type GrepDetails = { matches: GrepMatch[]; matched?: string; truncated: boolean; note?: string };

describe("recall by what agents type", () => {
  let env: RecallEnv;
  const grep = async (params: Record<string, unknown>) => detailsOf<GrepDetails>(await env.call("lcm_grep", params));
  /** The message the first match is, as its text (a message hit's snippet). */
  const top = async (params: Record<string, unknown>, count = 5) => (await grep(params)).matches.slice(0, count).map((match) => match.snippet);
  /** The same snippets without the «hit» marks. */
  const plain = async (params: Record<string, unknown>) => (await top(params)).map((snippet) => snippet.replace(/[«»]/g, ""));

  beforeAll(async () => {
    env = createRecallEnv();
    await env.commit(MAIN, exchanges(30, "filler"));
    await env.commit(MAIN, [
      userMessage("Please commit the change."),
      toolCallMessage([{ id: "c1", name: "exec", arguments: { command: 'git commit -m "$(cat <<\'EOF\'\nFix the flaky retry\nEOF\n)"' } }]),
      toolResultMessage("c1", "exec", "[main 4f2a9c1d7e] Fix the flaky retry"),
      assistantMessage("Committed as 4f2a9c1d7e3b."),
      userMessage("The LcmContextEngineFactory builds one engine per turn; see src/engine/lcm-context-engine.ts and get_user_id_from_token."),
      assistantMessage("The p95 was 1234ms before the change and 87 ms after it."),
      userMessage("数据库迁移完成了，明天上线。"),
      assistantMessage("データベースの移行は完了しました。"),
      userMessage("🤖deploy finished 👍🏽great work"),
      assistantMessage("We deployed the billing service to the staging cluster on Tuesday."),
      userMessage("the rollout flag for the payment migration is PAYMENTS_V2_ROLLOUT and it defaults to off"),
    ]);
    await env.commit(MAIN, exchanges(30, "filler", 31));
  });

  it("finds a command as it was typed, not as JSON escaped it (regex and full text)", async () => {
    expect(await top({ pattern: 'git commit -m "\\$\\(cat' })).toEqual([expect.stringContaining('«git commit -m "$(cat»')]);
    expect((await top({ pattern: "Fix the flaky retry", mode: "full_text" }))[0]).toContain("«Fix» «the» «flaky» «retry»");
  });

  it("finds a hash by its prefix", async () => {
    expect((await top({ pattern: "4f2a9c1", mode: "full_text" })).length).toBeGreaterThanOrEqual(2);
    expect((await top({ pattern: "4f2a9c1", mode: "full_text" }))[0]).toMatch(/«4f2a9c1d7e/);
  });

  it("finds camelCase and snake_case parts and path components", async () => {
    expect((await top({ pattern: "ContextEngine", mode: "full_text" }))[0]).toContain("Lcm«ContextEngine»Factory");
    expect((await plain({ pattern: "engineFactory", mode: "full_text" }))[0]).toContain("LcmContextEngineFactory");
    expect((await plain({ pattern: "user_id", mode: "full_text" }))[0]).toContain("get_user_id_from_token");
    expect((await plain({ pattern: "engine/lcm-context-engine", mode: "full_text" }))[0]).toContain("src/engine/lcm-context-engine.ts");
  });

  it("finds a number whatever the space before its unit", async () => {
    expect((await top({ pattern: "1234 ms", mode: "full_text" }))[0]).toContain("1234ms");
    expect((await top({ pattern: "87ms", mode: "full_text" }))[0]).toContain("87 ms");
  });

  it("finds Chinese and Japanese text written without spaces", async () => {
    expect((await top({ pattern: "迁移", mode: "full_text" }))[0]).toContain("«迁移»");
    expect((await plain({ pattern: "数据库迁移", mode: "full_text" }))[0]).toContain("数据库迁移");
    expect((await plain({ pattern: "移行", mode: "full_text" }))[0]).toContain("データベースの移行");
  });

  it("finds a word written against an emoji", async () => {
    expect((await top({ pattern: "deploy finished", mode: "full_text" }))[0]).toContain("🤖«deploy» «finished»");
    expect((await top({ pattern: "great", mode: "full_text" }))[0]).toContain("«great»");
  });

  it("finds other forms of a word, exact forms first", async () => {
    expect((await top({ pattern: "deploy billing", mode: "full_text" }))[0]).toContain("«deployed» the «billing»");
    const snippets = await top({ pattern: "deploy", mode: "full_text" });
    expect(snippets[0]).toContain("🤖«deploy»");
    expect(snippets.some((snippet) => snippet.includes("«deployed»"))).toBe(true);
  });

  it("puts the message holding several typed words together first, whatever the sort", async () => {
    for (const sort of ["relevance", "recency"]) {
      const found = await grep({ pattern: "payment migration rollout flag", mode: "full_text", sort });
      expect(found.matches[0]!.snippet.replace(/[«»]/g, ""), sort).toContain("PAYMENTS_V2_ROLLOUT");
    }
  });

  it("answers a question in natural language with its best candidates, saying they hold some words", async () => {
    const found = await grep({ pattern: "Which flag controls the payments rollout?", mode: "full_text" });
    expect(found.matched).toMatch(/some words/);
    expect(found.matches[0]!.snippet.replace(/[«»]/g, "")).toContain("PAYMENTS_V2_ROLLOUT");
    expect((found.matches[0] as { matchedTerms?: string[] }).matchedTerms).toEqual(expect.arrayContaining(["flag", "payments", "rollout"]));
  });
});
