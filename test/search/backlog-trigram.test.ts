/**
 * A search while a large backlog is indexed (spec 030, Design 2b): the backlog worker first indexes the waiting
 * messages by their trigrams (schema 18), and a search reads them through that index, as the full-text index's
 * candidates are read: complete where reading the rows directly runs out of time, the same answers in both orders as
 * once everything is indexed, never a row that does not match, and nothing read twice once rows left the gap.
 */
import { describe, expect, it } from "vitest";
import { messageReader } from "../../src/search/text-readers.js";
import { searchText } from "../../src/search/text-search.js";
import { parseTextQuery } from "../../src/text/text-query.js";
import { SqliteRetrievalStore } from "../../src/sqlite/sqlite-retrieval-store.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { BacklogTrigram } from "../../src/sqlite/sqlite-backlog-trigram.js";
import { BacklogBlocks } from "../../src/sqlite/sqlite-backlog-blocks.js";
import { segmentsPerLevel } from "../../src/sqlite/fts5-structure.js";
import type { Database } from "../../src/sqlite/database.js";
import { userMessage } from "../helpers/messages.js";
import { BACKLOG_TOTAL, type BacklogEnv, commitFreshWord, grepAll, HEAVY_TIMEOUT_MS, importFilledThenTakenBack, ingestBulkBacklog, newestMessageId } from "../helpers/bulk-backlog.js";
import { createRecallEnv, MAIN } from "../helpers/recall.js";

/**
 * The bulk backlog (helpers/bulk-backlog.ts) with one message where "quokka" and "fjord" are near but not the word
 * "quokkafjord", and two with "beacon" whose lengths in words and in characters disagree.
 */
const bulkBacklog = (env: BacklogEnv) => ingestBulkBacklog(env, {
  5_000: userMessage("note: a quokka near the fjord, not the word itself"),
  7_000: userMessage("the quokkafjord rollout note"),
  // Few long words against many short ones: ranked by their length in words, not in characters.
  8_000: userMessage("beacon supercalifragilistic expialidocious antidisestablishment"),
  9_000: userMessage("beacon ab cd ef gh ij kl mn op qr"),
});

/** The backlog worker's run (indexBacklog) stopped once its trigram index covers every message, before it indexes one fully. */
async function fillTrigramOnly(db: Database): Promise<void> {
  const trigram = new BacklogTrigram(db);
  const last = newestMessageId(db);
  await new SqliteSearchIndex(db).indexBacklog({ rows: 5_000, budgetMs: 250, analyseFirst: true, shouldStop: () => trigram.through() >= last });
}

const CASES: Record<string, unknown>[] = [
  { pattern: "firstling", mode: "full_text" },
  { pattern: "quokkafjord", mode: "full_text" },
  { pattern: "alpha", mode: "full_text", sort: "recency", limit: 5 },
  { pattern: "alpha", mode: "full_text", sort: "relevance", limit: 5 },
  { pattern: "beacon", mode: "full_text", sort: "relevance", limit: 2 },
  { pattern: "reply 1[0-9]{3} alpha", mode: "regex", limit: 5 },
];

describe("a search over a backlog through its trigram index", () => {
  it("covers the whole backlog within a budget that reading it directly cannot meet", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    const store = new SqliteRetrievalStore(env.db);
    const reader = messageReader(store, { conversationIds: [env.conversationId(MAIN)], since: null, before: null });
    // A clock that advances 40 ms per reading: a 100 ms budget reads a few windows of rows directly, no more.
    let time = 0;
    const now = () => (time += 40);
    const request = { query: parseTextQuery("firstling")!, sort: "relevance" as const, limit: 10, budgetMs: 100 };
    const direct = await searchText(reader, request, now);
    expect(direct.truncated).toBe(true);

    await fillTrigramOnly(env.db);
    expect(new SqliteSearchIndex(env.db).through("messages_fts")).toBe(0);
    const through = await searchText(reader, request, now);
    expect(through.truncated).toBe(false);
    expect(through.hits.map((hit) => hit.row.text)).toEqual(["note on the firstling item"]);
  }, HEAVY_TIMEOUT_MS);

  it("stops reading the trigram index when the budget runs out, and says so", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    await fillTrigramOnly(env.db);
    const store = new SqliteRetrievalStore(env.db);
    const reader = messageReader(store, { conversationIds: [env.conversationId(MAIN)], since: null, before: null });
    // "replain": its trigrams are in the 4,000 replies saying "plain", the word in none: pages of candidates to check.
    let time = 0;
    const now = () => (time += 40);
    const request = { query: parseTextQuery("replain")!, sort: "recency" as const, limit: 5, budgetMs: 100 };
    const stopped = await searchText(reader, request, now);
    expect(stopped.truncated).toBe(true);
    expect(stopped.note).toMatch(/through the backlog's trigram index down to row \d+/);
    const complete = await searchText(reader, { ...request, budgetMs: 60_000 });
    expect(complete.truncated).toBe(false);
    expect(complete.hits).toHaveLength(0);
  }, HEAVY_TIMEOUT_MS);

  it("a row id used again after the newest messages were removed is not taken as covered by what it held", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    const trigram = new BacklogTrigram(env.db);
    await importFilledThenTakenBack(env, () => fillTrigramOnly(env.db), () => expect(trigram.through()).toBe(newestMessageId(env.db)));
    expect(trigram.through()).toBe(newestMessageId(env.db));
    await commitFreshWord(env);
    const found = await grepAll(env, { pattern: "freshword", mode: "full_text" });
    expect(found).toMatchObject({ truncated: false, matches: [expect.anything()] });
  }, HEAVY_TIMEOUT_MS);

  it("answers as a fully indexed search does, in both orders, with rows that left the gap read once", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    await fillTrigramOnly(env.db);
    const index = new SqliteSearchIndex(env.db);
    const gap = [];
    for (const params of CASES) gap.push(await grepAll(env, params));
    // Half the backlog indexed fully: its rows leave the gap (read from the full-text index, not the trigram one).
    await index.indexPending({ maxRows: BACKLOG_TOTAL / 2 });
    expect(index.through("messages_fts")).toBeGreaterThan(0);
    const half = [];
    for (const params of CASES) half.push(await grepAll(env, params));
    // Everything indexed, the trigram index emptied.
    await index.indexBacklog({ rows: 5_000, budgetMs: 250, analyseFirst: true });
    expect(new BacklogTrigram(env.db).through()).toBe(0);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM backlog_trigram_data WHERE id > 10")!.n).toBe(0);
    for (const [position, params] of CASES.entries()) {
      const indexed = await grepAll(env, params);
      expect(indexed.truncated, JSON.stringify(params)).toBe(false);
      expect(indexed.matches.length, JSON.stringify(params)).toBeGreaterThan(0);
      expect(gap[position], JSON.stringify(params)).toEqual(indexed);
      expect(half[position], JSON.stringify(params)).toEqual(indexed);
    }
    // The trigram index found "quokka ... fjord" too (its trigrams are there); the matcher did not return it.
    expect(JSON.stringify(gap[1]!.matches)).not.toMatch(/quokka near/);
  }, HEAVY_TIMEOUT_MS);

  it("stops its fill short of FTS5's merge of a whole level; the rows beyond are read through the blocks", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    await new BacklogBlocks(env.db).fill({});
    const trigram = new BacklogTrigram(env.db);
    // A slice is a segment: three slices of 1,000 rows, then the fill stops (at 10M: 1,900, below FTS5's 2,000).
    await trigram.fill({ rows: 1_000, budgetMs: 60_000, maxSegments: 3 });
    const structure = env.db.get<{ block: Uint8Array }>("SELECT block FROM backlog_trigram_data WHERE id = 10")!.block;
    expect(segmentsPerLevel(structure)).toEqual([3]);
    expect(trigram.through()).toBe(3_000);
    // The oldest row (in the trigram index) and one beyond it (in the blocks only) are both found.
    expect((await grepAll(env, { pattern: "firstling", mode: "full_text" })).matches).toHaveLength(1);
    expect((await grepAll(env, { pattern: "quokkafjord", mode: "full_text" })).matches).toHaveLength(1);
    expect((await grepAll(env, { pattern: "quokkafjord", mode: "regex" })).matches).toHaveLength(1);
  }, HEAVY_TIMEOUT_MS);

  it("a fill stopped midway resumes where it stopped; meanwhile a search reads the rows above it as the index's", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env);
    const trigram = new BacklogTrigram(env.db);
    const index = new SqliteSearchIndex(env.db);
    // Stopped (the gateway closed, or its process was killed: the open slice rolls back) after the first slices.
    await index.indexBacklog({ rows: 2_000, budgetMs: 250, analyseFirst: true, shouldStop: () => trigram.through() >= 4_000 });
    const stoppedAt = trigram.through();
    expect(stoppedAt).toBeGreaterThanOrEqual(4_000);
    expect(stoppedAt).toBeLessThan(BACKLOG_TOTAL);
    // Rows above it are read directly meanwhile: the newest and the oldest are found.
    expect((await grepAll(env, { pattern: "quokkafjord", mode: "full_text" })).matches).toHaveLength(1);
    expect((await grepAll(env, { pattern: "firstling", mode: "full_text" })).matches).toHaveLength(1);
    // ... as the index's candidates are, newest first in widening windows: a common word's newest matches are
    // complete after one window of them, within a budget that reading all 8,000 rows above it would exceed.
    const store = new SqliteRetrievalStore(env.db);
    const reader = messageReader(store, { conversationIds: [env.conversationId(MAIN)], since: null, before: null });
    let time = 0;
    const now = () => (time += 40);
    const common = (sort: "recency" | "relevance") => ({ query: parseTextQuery("alpha")!, sort, limit: 5, budgetMs: 100 });
    const texts = (found: Awaited<ReturnType<typeof searchText>>) => found.hits.map((hit) => hit.row.text);
    const during = [await searchText(reader, common("recency"), now), await searchText(reader, common("relevance"), now)];
    for (const found of during) expect(found.truncated).toBe(false);
    await fillTrigramOnly(env.db);
    expect(trigram.through()).toBe(newestMessageId(env.db));
    // Each row once: as many entries for a trigram every row holds as rows.
    const rows = env.db.get<{ n: number }>("SELECT count(*) AS n FROM backlog_trigram WHERE backlog_trigram MATCH '\"ote\" OR \"ply\"'")!.n;
    expect(rows).toBe(BACKLOG_TOTAL - 2);
    expect((await grepAll(env, { pattern: "firstling", mode: "full_text" })).matches).toHaveLength(1);
    await index.indexBacklog({ rows: 5_000, budgetMs: 250, analyseFirst: true });
    expect(index.through("messages_fts")).toBe(newestMessageId(env.db));
    const indexed = [await searchText(reader, { ...common("recency"), budgetMs: 60_000 }), await searchText(reader, { ...common("relevance"), budgetMs: 60_000 })];
    expect(during.map(texts)).toEqual(indexed.map(texts));
  }, HEAVY_TIMEOUT_MS);
});
