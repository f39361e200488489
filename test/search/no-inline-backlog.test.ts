/**
 * The first search after a bulk ingest (issue 15): a backlog larger than a few chunks is not indexed by the search
 * that finds it; the rows not indexed yet are read directly, newest first, so nothing stored is missed, and a
 * search that runs out of time before reaching the oldest of them says so.
 */
import { describe, expect, it } from "vitest";
import type { GrepMatch } from "../../src/search/grep.js";
import { messageReader } from "../../src/search/text-readers.js";
import { searchText } from "../../src/search/text-search.js";
import { parseTextQuery } from "../../src/text/text-query.js";
import { SqliteRetrievalStore, SEARCH_INDEXES_UP_TO } from "../../src/sqlite/sqlite-retrieval-store.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN } from "../helpers/recall.js";

const indexed = (env: ReturnType<typeof createRecallEnv>) => env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages_fts_docsize")!.n;

describe("a search after a bulk ingest", () => {
  it("reads the messages not indexed yet instead of indexing them all, and finds the oldest and the newest", async () => {
    const env = createRecallEnv();
    // 3 × 400 messages: more than a search indexes itself.
    const messages = Array.from({ length: 3 * SEARCH_INDEXES_UP_TO }, (_, index) =>
      index % 2 ? assistantMessage(`reply ${index} about nothing`) : userMessage(`note ${index} on the ${index === 0 ? "firstling" : index === 3 * SEARCH_INDEXES_UP_TO - 2 ? "lastling" : "middle"} item`),
    );
    await env.api.engine().ingestBatch({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages });
    for (const [pattern, mode] of [["firstling", "full_text"], ["lastling", "full_text"], ["firstling|lastling", "regex"]] as const) {
      const found = detailsOf<{ matches: GrepMatch[]; truncated: boolean }>(await env.call("lcm_grep", { pattern, mode }));
      expect(found.truncated, pattern).toBe(false);
      expect(found.matches.length, pattern).toBe(mode === "regex" ? 2 : 1);
    }
    expect(indexed(env)).toBe(0);
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    expect(indexed(env)).toBe(messages.length);
    expect(detailsOf<{ matches: GrepMatch[] }>(await env.call("lcm_grep", { pattern: "firstling", mode: "full_text" })).matches).toHaveLength(1);
  });

  it("holds only the best and the newest of thousands of matches read directly, and returns the same answers", async () => {
    const env = createRecallEnv();
    // 6,000 messages not indexed, each holding "alpha": more matches than a search holds at once (HELD_CANDIDATES).
    // The newest are the longest (the weakest by relevance); the best is read in the middle, before a drop.
    const filler = " and then some more words".repeat(20);
    const messages = Array.from({ length: 6_000 }, (_, index) =>
      userMessage(index === 3_000 ? "alpha alpha beacon" : `entry ${index} with alpha${index >= 5_900 ? filler : " and a few words"}`));
    await env.api.engine().ingestBatch({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages });
    const newest = detailsOf<{ matches: (GrepMatch & { content?: string })[]; truncated: boolean }>(
      await env.call("lcm_grep", { pattern: "alpha", mode: "full_text", sort: "recency", limit: 3 }),
    );
    expect(newest.truncated).toBe(false);
    expect(JSON.stringify(newest.matches)).toMatch(/entry 5999 /);
    expect(JSON.stringify(newest.matches)).not.toMatch(/entry 5996 /);
    const best = detailsOf<{ matches: GrepMatch[]; truncated: boolean }>(
      await env.call("lcm_grep", { pattern: "alpha", mode: "full_text", sort: "relevance", limit: 3 }),
    );
    expect(JSON.stringify(best.matches[0])).toMatch(/beacon/);
    expect(indexed(env)).toBe(0);
  });

  it("says it stopped early when its budget runs out before the oldest message not indexed yet", async () => {
    const env = createRecallEnv();
    const messages = Array.from({ length: 6_000 }, (_, index) => userMessage(`entry ${index} ${index === 10 ? "needlework" : "plain"}`));
    await env.api.engine().ingestBatch({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages });
    const store = new SqliteRetrievalStore(env.db);
    const reader = messageReader(store, { conversationIds: [env.conversationId(MAIN)], since: null, before: null });
    // A clock that advances 40 ms per reading: the 100 ms budget runs out after a few windows of 2,000 rows.
    let time = 0;
    const now = () => (time += 40);
    const found = await searchText(reader, { query: parseTextQuery("needlework")!, sort: "relevance", limit: 10, budgetMs: 100 }, now);
    expect(found.truncated).toBe(true);
    expect(found.hits).toHaveLength(0);
    expect(found.note).toMatch(/not in the full-text index yet/);
    const complete = await searchText(reader, { query: parseTextQuery("needlework")!, sort: "relevance", limit: 10, budgetMs: 10_000 });
    expect(complete.truncated).toBe(false);
    expect(complete.hits).toHaveLength(1);
  });
});
