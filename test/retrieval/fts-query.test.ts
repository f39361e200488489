import { beforeAll, describe, expect, it } from "vitest";
import { toAnyWordQuery, toFullTextQuery } from "../../src/retrieval/fts-query.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, type RecallEnv } from "../helpers/recall.js";

describe("toFullTextQuery", () => {
  it("quotes every word, joined by AND", () => {
    expect(toFullTextQuery("database migration")).toBe('("database" AND "migration")');
  });

  it("keeps quoted phrases, trailing-star prefixes and a bare OR", () => {
    expect(toFullTextQuery('"deploy key" conf* OR rollback')).toBe('("deploy key" AND "conf"*) OR ("rollback")');
  });

  it("turns every other piece of FTS5 syntax into plain words", () => {
    expect(toFullTextQuery("content:zebra NEAR(a b) ^x -y")).toBe('("content:zebra" AND "NEAR(a" AND "b)" AND "^x" AND "-y")');
    expect(toFullTextQuery('say "hi')).toBe('("say" AND "hi")');
    expect(toFullTextQuery('a"b')).toBe('("a" AND "b")');
    expect(toFullTextQuery('"x""y"')).toBe('("x" AND "y")');
  });

  it("returns null when nothing searchable remains", () => {
    for (const text of ["", "   ", "***", '"', '""', "OR OR", "()", "-", "\u0000"]) expect(toFullTextQuery(text)).toBeNull();
  });

  it("keeps at most 32 terms", () => {
    const words = Array.from({ length: 50 }, (_, index) => `w${index}`).join(" ");
    expect(toFullTextQuery(words)!.match(/"w\d+"/g)).toHaveLength(32);
  });

  it("builds an any-word query without stopwords for ranking sources", () => {
    expect(toAnyWordQuery("What was the exact deploy key?")).toBe('"exact" OR "deploy" OR "key"');
    expect(toAnyWordQuery("the of a")).toBeNull();
  });
});

describe("full-text search under hostile input", () => {
  let env: RecallEnv;

  beforeAll(async () => {
    env = createRecallEnv();
    await env.commit(MAIN, [userMessage("zebra crossing near the deploy key"), assistantMessage("noted: content filter rank")]);
  });

  const HOSTILE = [
    '"', '""', '"unterminated', 'a"b', "NEAR(zebra deploy, 3)", "zebra AND", "AND", "OR", "NOT zebra", "zebra NOT",
    "content:zebra", "{content}: zebra", "^zebra", "zebra*", "*zebra", "(zebra", "zebra)", "-zebra", "+zebra",
    "zebra -deploy", "\u0000zebra", "'; DROP TABLE messages; --", "zebra:", "rank", "messages_fts", '"zebra" OR',
    "OR OR OR", "*", '" OR "', "zebra\u2028deploy", "🦓 zebra", "x".repeat(1_000), "NEAR/2", "zebra + + deploy", "a:b:c",
    "\\", "%", "_", "zebra^2", "'", "`", "\ud800",
  ];

  it.each(HOSTILE)("answers %j with results or a clear error, quickly", async (pattern) => {
    const started = performance.now();
    const result = detailsOf<{ status?: string; parameter?: string; matches?: unknown[]; error?: string }>(
      await env.call("lcm_grep", { pattern, mode: "full_text" }),
    );
    expect(performance.now() - started).toBeLessThan(1_000);
    if (result.status === "error") {
      expect(result.parameter).toBe("pattern");
      expect(result.error).not.toMatch(/fts5|sqlite|syntax error/i);
    } else {
      expect(Array.isArray(result.matches)).toBe(true);
    }
  });

  it("still finds what hostile-looking text contains", async () => {
    for (const pattern of ["zebra)", "(zebra", "zebra*", "^zebra", '"zebra', "-zebra", "🦓 zebra"]) {
      const result = detailsOf<{ matches: unknown[] }>(await env.call("lcm_grep", { pattern, mode: "full_text" }));
      expect(result.matches, pattern).toHaveLength(1);
    }
  });
});
