/**
 * Relevance order for queries with a very common word: BM25 computed in JavaScript over the newest matches
 * (retrieval/relevance.ts), checked against FTS5's own bm25() on the same messages, through lcm_grep.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import type { GrepMatch } from "../../src/retrieval/grep.js";
import { bm25Scores, inverseDocumentFrequency, matchTerms } from "../../src/retrieval/relevance.js";
import { COMMON_RELEVANCE_CANDIDATES, COMMON_TERM_DOCUMENTS } from "../../src/store/sqlite/sqlite-retrieval-sql.js";
import { createRecallEnv, detailsOf, MAIN, type RecallEnv } from "../helpers/recall.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";

describe("relevance scoring", () => {
  it("reads the terms of a sanitized MATCH expression", () => {
    expect(matchTerms('("deploy" AND "key"*) OR ("zebra crossing")')).toEqual([
      { text: "deploy", prefix: false }, { text: "key", prefix: true }, { text: "zebra crossing", prefix: false },
    ]);
    expect(matchTerms('"say ""hi"""')).toEqual([{ text: 'say "hi"', prefix: false }]);
    expect(matchTerms('"Deploy" OR "deploy"')).toHaveLength(1);
  });

  it("follows BM25: more occurrences, shorter messages and rarer words rank higher", () => {
    const stats = { documents: 1_000, averageLength: 10 };
    const [once, thrice] = bm25Scores([{ text: "alpha beta", length: 10 }, { text: "alpha alpha ALPHA", length: 10 }], [{ text: "alpha", prefix: false }], [50], stats);
    expect(thrice!).toBeGreaterThan(once!);
    const [short, long] = bm25Scores([{ text: "alpha", length: 2 }, { text: "alpha", length: 40 }], [{ text: "alpha", prefix: false }], [50], stats);
    expect(short!).toBeGreaterThan(long!);
    const [rare, common] = bm25Scores(
      [{ text: "zebra", length: 10 }, { text: "horse", length: 10 }], [{ text: "zebra", prefix: false }, { text: "horse", prefix: false }], [3, 400], stats,
    );
    expect(rare!).toBeGreaterThan(common!);
    expect(inverseDocumentFrequency(1_000, 900)).toBe(1e-6); // FTS5 floors words in most documents
  });

  it("counts whole tokens as unicode61 splits them: case, diacritics, prefixes and phrases", () => {
    const stats = { documents: 100, averageLength: 5 };
    const count = (text: string, term: string, prefix = false) =>
      bm25Scores([{ text, length: 5 }], [{ text: term, prefix }], [1], stats)[0]! > 0;
    expect(count("Café au lait", "cafe")).toBe(true);
    expect(count("cafeteria", "cafe")).toBe(false);
    expect(count("cafeteria", "cafe", true)).toBe(true);
    expect(count("the zebra-crossing", "zebra crossing")).toBe(true);
    expect(count("zebra near crossing", "zebra crossing")).toBe(false);
  });
});

describe("lcm_grep relevance with a word in very many messages", () => {
  let env: RecallEnv;
  const total = COMMON_TERM_DOCUMENTS + 1_000;
  const grep = async (pattern: string) =>
    detailsOf<{ matches: GrepMatch[] }>(await env.call("lcm_grep", { pattern, mode: "full_text", sort: "relevance", scope: "messages", limit: 20 })).matches;

  beforeAll(async () => {
    env = createRecallEnv();
    const messages: AgentMessage[] = [];
    for (let index = 0; index < total; index++) {
      // Every message holds "common" 1-4 times among 2-12 filler words; three old ones hold a rare word.
      const filler = Array.from({ length: 2 + (index % 11) }, (_, word) => `filler${(index * 7 + word) % 97}`).join(" ");
      const repeats = Array.from({ length: 1 + ((index * 13) % 4) }, () => "common").join(" ");
      const rare = index === 10 || index === 20 || index === 30 ? " zebrafish" : "";
      messages.push(index % 2 === 0 ? userMessage(`${repeats} ${filler}${rare}`) : assistantMessage(`${filler} ${repeats}${rare}`));
    }
    for (let start = 0; start < messages.length; start += 5_000) {
      await env.api.engine().ingestBatch({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages: messages.slice(start, start + 5_000) });
    }
  }, 120_000);

  it("ranks the newest matches in the order FTS5's bm25() gives the same messages", async () => {
    const matches = await grep("common");
    expect(matches).toHaveLength(20);
    const newest = env.db.get<{ id: number }>("SELECT max(message_id) AS id FROM messages")!.id;
    expect(Math.min(...matches.map((match) => match.id as number))).toBeGreaterThan(newest - COMMON_RELEVANCE_CANDIDATES);
    const fts5 = env.db.all<{ id: number; rank: number }>(
      `SELECT rowid AS id, rank FROM messages_fts WHERE messages_fts MATCH 'common' AND rowid IN (SELECT value FROM json_each(?))`,
      JSON.stringify(matches.map((match) => match.id as number)),
    );
    const rankOf = new Map(fts5.map((row) => [row.id, row.rank]));
    const ranks = matches.map((match) => rankOf.get(match.id as number)!);
    expect(ranks).toEqual([...ranks].sort((left, right) => left - right));
    // And no message outside the window would have ranked better than the last one shown.
    const better = env.db.get<{ n: number }>(
      `SELECT count(*) AS n FROM (SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH 'common' AND rowid > ?) WHERE rank < ?`,
      newest - COMMON_RELEVANCE_CANDIDATES, ranks.at(-1)! - 1e-9,
    )!.n;
    expect(better).toBeLessThan(20);
  });

  it("puts the rare word's old messages first in an OR with the common word", async () => {
    const matches = await grep("common OR zebrafish");
    expect(matches.slice(0, 3).map((match) => match.snippet)).toEqual([
      expect.stringContaining("zebrafish"), expect.stringContaining("zebrafish"), expect.stringContaining("zebrafish"),
    ]);
  });

  it("still ranks a rare word alone with FTS5's bm25()", async () => {
    expect(await grep("zebrafish")).toHaveLength(3);
  });
});
