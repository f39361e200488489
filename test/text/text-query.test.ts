import { beforeAll, describe, expect, it } from "vitest";
import { MAX_QUERY_TERMS, parseTextQuery, queryTerms } from "../../src/text/text-query.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, type RecallEnv } from "../helpers/recall.js";

/** Each alternative as its terms: words joined by spaces, "quoted", a prefix marked with *. */
const shown = (text: string) =>
  parseTextQuery(text)?.groups.map((group) => group.map((term) => `${term.quoted ? '"' : ""}${term.words.join(" ")}${term.quoted ? '"' : ""}${term.prefix ? "*" : ""}`)) ?? null;

describe("parseTextQuery", () => {
  it("splits words into terms that must all occur, folded", () => {
    expect(shown("Database MIGRATION")).toEqual([["database", "migration"]]);
  });

  it("keeps quoted phrases, a trailing * and a bare OR, and nothing else of any query syntax", () => {
    expect(shown('"deploy key" conf* OR rollback')).toEqual([['"deploy key"', "conf*"], ["rollback"]]);
    expect(shown("content:zebra NEAR(a b) ^x -y")).toEqual([["content zebra", "near a", "b", "x", "y"]]);
    expect(shown('say "hi')).toEqual([["say", '"hi"']]);
    expect(shown('a"b')).toEqual([["a", "b"]]);
  });

  it("splits identifiers, paths and numbers with units into their words, and keeps their fragments", () => {
    const [term] = parseTextQuery("LcmContextEngine")!.groups[0]!;
    expect(term).toMatchObject({ words: ["lcmcontextengine"], fragments: ["lcm", "context", "engine"] });
    expect(parseTextQuery("src/retrieval/grep.ts")!.groups[0]![0]!.words).toEqual(["src", "retrieval", "grep", "ts"]);
    expect(parseTextQuery("1234ms")!.groups[0]![0]!.fragments).toEqual(["1234", "ms"]);
    expect(parseTextQuery("数据库")!.groups[0]![0]).toMatchObject({ fragments: ["数据", "据库"], unspaced: true });
    expect(parseTextQuery("🤖deploy")!.groups[0]![0]!.words).toEqual(["deploy"]);
  });

  it("marks function words, which only count when the query has nothing else", () => {
    expect(queryTerms(parseTextQuery("What was the deploy key?")!).map((term) => term.isStopword)).toEqual([true, true, true, false, false]);
  });

  it("returns null when nothing searchable is left", () => {
    for (const text of ["", "   ", "***", '"', '""', "OR OR", "()", "-", "\u0000"]) expect(shown(text)).toBeNull();
  });

  it("keeps at most 32 terms", () => {
    const words = Array.from({ length: 40 }, (_, index) => `w${index}`).join(" ");
    expect(parseTextQuery(words)!.groups[0]).toHaveLength(MAX_QUERY_TERMS);
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
