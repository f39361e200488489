/**
 * A search while a large backlog is indexed, before the trigram index covers it (spec 030, Design 2c): the backlog
 * worker first cuts the waiting messages into blocks with a Bloom filter of their trigrams (schema 19), and a search
 * reads directly only the blocks that may hold what it looks for: complete where reading every row runs out of time,
 * the same answers as once everything is indexed, and never a row missed (case, diacritics, a row id used again).
 */
import { describe, expect, it } from "vitest";
import { compileSearchRegex } from "../../src/search/regex-policy.js";
import { regexSearch } from "../../src/search/regex-search.js";
import { messageReader } from "../../src/search/text-readers.js";
import { searchText } from "../../src/search/text-search.js";
import { parseTextQuery } from "../../src/text/text-query.js";
import { SqliteRetrievalStore } from "../../src/sqlite/sqlite-retrieval-store.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { BacklogBlocks } from "../../src/sqlite/sqlite-backlog-blocks.js";
import { BacklogTrigram } from "../../src/sqlite/sqlite-backlog-trigram.js";
import type { Database } from "../../src/sqlite/database.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { type BacklogEnv, commitFreshWord, grepAll, HEAVY_TIMEOUT_MS, importFilledThenTakenBack, ingestBulkBacklog, newestMessageId } from "../helpers/bulk-backlog.js";
import { createRecallEnv, MAIN } from "../helpers/recall.js";

/**
 * The bulk backlog (helpers/bulk-backlog.ts) with "INSPECTION" (ASCII capitals), "Zébrafish" (a capital and a
 * diacritic) and "INC-204711-Z" once each; "quokka" and "fjord" near each other but not the word "quokkafjord".
 */
const bulkBacklog = (env: BacklogEnv) => ingestBulkBacklog(env, {
  3_000: assistantMessage("ticket INC-204711-Z closed"),
  4_000: userMessage("the gazebo INSPECTION passed"),
  5_000: userMessage("note: a quokka near the fjord, not the word itself"),
  6_000: userMessage("the Zébrafish tank is clean"),
  7_000: userMessage("the quokkafjord rollout note"),
});

/** The backlog worker's run (indexBacklog) stopped once its blocks cover every message, before the trigram index fills. */
async function fillBlocksOnly(db: Database): Promise<void> {
  const blocks = new BacklogBlocks(db);
  const last = newestMessageId(db);
  await new SqliteSearchIndex(db).indexBacklog({ rows: 5_000, budgetMs: 250, analyseFirst: true, shouldStop: () => blocks.through() >= last });
  expect(blocks.through()).toBe(last);
  expect(new BacklogTrigram(db).through()).toBe(0);
}

const CASES: Record<string, unknown>[] = [
  { pattern: "firstling", mode: "full_text" },
  { pattern: "quokkafjord", mode: "full_text" },
  { pattern: "zebrafish", mode: "full_text" },
  { pattern: "inspection", mode: "full_text" },
  { pattern: "alpha", mode: "full_text", sort: "recency", limit: 5 },
  { pattern: "alpha", mode: "full_text", sort: "relevance", limit: 5 },
  { pattern: "INC-\\d{6}-Z", mode: "regex" },
  { pattern: "reply 1[0-9]{3} alpha", mode: "regex", limit: 5 },
];

describe("a search over a backlog through its blocks", () => {
  it("reads only the blocks that may hold a rare word or a regex's literal: complete within a budget that reading every row cannot meet", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    const store = new SqliteRetrievalStore(env.db);
    const filter = { conversationIds: [env.conversationId(MAIN)], since: null, before: null };
    const reader = messageReader(store, filter);
    // Clocks that advance a quarter of the budget, or a fifth, per reading: the budget reads a few windows of rows
    // directly, not 12,000 rows. The regex's is long in real time too: its worker is given what is left of it.
    let time = 0;
    const now = () => (time += 40);
    let regexTime = 0;
    const regexNow = () => (regexTime += 2_500);
    const word = { query: parseTextQuery("firstling")!, sort: "relevance" as const, limit: 10, budgetMs: 200 };
    const regex = { regex: compileSearchRegex("INC-\\d{6}-Z"), filter, scope: "messages" as const, limit: 10, budgetMs: 10_000 };
    expect((await searchText(reader, word, now)).truncated).toBe(true);
    expect((await regexSearch(store, regex, regexNow)).truncated).toBe(true);

    await fillBlocksOnly(env.db);
    expect(new SqliteSearchIndex(env.db).through("messages_fts")).toBe(0);
    const found = await searchText(reader, word, now);
    expect(found.truncated).toBe(false);
    expect(found.hits.map((hit) => hit.row.text)).toEqual(["note on the firstling item"]);
    const matched = await regexSearch(store, regex, regexNow);
    expect(matched).toMatchObject({ truncated: false, messages: [expect.objectContaining({ messageId: 3_001 })] });
  }, HEAVY_TIMEOUT_MS);

  it("answers as a fully indexed search does, and is emptied with the trigram index once everything is indexed", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    await fillBlocksOnly(env.db);
    const blocks = [];
    for (const params of CASES) blocks.push(await grepAll(env, params));
    const index = new SqliteSearchIndex(env.db);
    await index.indexBacklog({ rows: 5_000, budgetMs: 250, analyseFirst: true });
    expect(index.through("messages_fts")).toBe(newestMessageId(env.db));
    expect(new BacklogBlocks(env.db).through()).toBe(0);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM backlog_blocks")!.n).toBe(0);
    for (const [position, params] of CASES.entries()) {
      const indexed = await grepAll(env, params);
      expect(indexed.truncated, JSON.stringify(params)).toBe(false);
      expect(indexed.matches.length, JSON.stringify(params)).toBeGreaterThan(0);
      expect(blocks[position], JSON.stringify(params)).toEqual(indexed);
    }
  }, HEAVY_TIMEOUT_MS);

  it("a row id used again after the newest messages were removed is not taken as covered by a block", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    await importFilledThenTakenBack(env, () => fillBlocksOnly(env.db));
    const blocks = new BacklogBlocks(env.db);
    expect(blocks.through()).toBeLessThanOrEqual(newestMessageId(env.db));
    await commitFreshWord(env);
    const found = await grepAll(env, { pattern: "freshword", mode: "full_text" });
    expect(found).toMatchObject({ truncated: false, matches: [expect.anything()] });
    const regex = await grepAll(env, { pattern: "freshw[o]rd", mode: "regex" });
    expect(regex).toMatchObject({ truncated: false, matches: [expect.anything()] });
  }, HEAVY_TIMEOUT_MS);

  it("a rebuild of the message index empties the blocks", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    await fillBlocksOnly(env.db);
    await new SqliteSearchIndex(env.db).rebuild("messages_fts");
    expect(new BacklogBlocks(env.db).through()).toBe(0);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM backlog_blocks")!.n).toBe(0);
  }, HEAVY_TIMEOUT_MS);
});
