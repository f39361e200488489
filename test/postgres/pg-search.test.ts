/**
 * What only the PostgreSQL search has to prove (specs/028-postgres.md, "Search"): a row whose id commits after a
 * higher one is indexed and found, not skipped; two gateways indexing at once index every row once; a search statement
 * past its timeout fails with a clear error; documents beyond tsvector's limits (16,383 positions, 256 per word, 2 KB
 * words, 1 MB) are still found; a rare word's window reads cost its matches, not the window's rows.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isLcmError } from "../../src/errors.js";
import type { ConversationId, FileId } from "../../src/records.js";
import { LargeFileReader } from "../../src/large-files/large-file-reader.js";
import type { PostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import { PgBacklogBlocks } from "../../src/postgres/pg-backlog-blocks.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { PgFileIndex } from "../../src/postgres/pg-file-index.js";
import { PgRetrievalStore } from "../../src/postgres/pg-retrieval-store.js";
import { preparedStatement } from "../../src/postgres/pg-queryable.js";
import { PgSearchIndex } from "../../src/postgres/pg-search-index.js";
import { PgSearchReader } from "../../src/postgres/pg-search-reader.js";
import { grep, type GrepRequest } from "../../src/search/grep.js";
import { openTestBackend, type TestBackend } from "../helpers/backends.js";
import { RecordingLogger } from "../helpers/engine.js";
import { insertMessages, runFixtureSql } from "../helpers/sql-fixtures.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("PostgreSQL search", () => {
  let opened: TestBackend;
  let backend: PostgresBackend;
  beforeEach(async () => {
    opened = await openTestBackend("postgres");
    backend = opened.backend as PostgresBackend;
  });
  afterEach(async () => {
    await opened.close();
  });

  const search = (pattern: string, options: Partial<GrepRequest> = {}) =>
    grep(backend.retrieval, {
      pattern, mode: "full_text", scope: "messages", conversationIds: [1], since: null, before: null, limit: 20, sort: "recency", ...options,
    }, { now: 100, regexBudgetMs: 10_000, files: new LargeFileReader({ store: backend.store }) });
  const seqs = (matches: { type: string }[]) => matches.map((match) => (match as { seq?: number }).seq);
  /** 40,001 messages waiting for the index, the oldest holding the only match: as a bulk copy leaves them. */
  const insertBulkBacklog = async () => {
    await insertMessages(opened, ["the vault key is quokka-7741"]);
    await backend.database.run(
      `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key)
       SELECT 1, g, 'user', 'filler message number ' || g, 1, g, 'k1-' || g FROM generate_series(2, 40001) g`,
    );
  };
  /**
   * Index entries `index` has read so far. Statistics of a session reach pg_stat_user_indexes when it ends, so every
   * pool is closed first and the backend reopened after.
   */
  const indexRowsRead = async (index: string) => {
    await opened.close();
    const database = new PgDatabase(opened.location, { poolSize: 1 });
    try {
      return (await database.row<{ rows: number }>("SELECT idx_tup_read::int AS rows FROM pg_stat_user_indexes WHERE indexrelname = $1", [index]))!.rows;
    } finally {
      await database.close();
      backend = opened.reopen() as PostgresBackend;
    }
  };

  it("indexes a message whose id committed after a higher one, and finds it meanwhile", async () => {
    await insertMessages(opened, ["first", "second", "third"]);
    const index = new PgSearchIndex(backend.database, new PgFileIndex(backend.database));
    await index.indexPending();
    // Gateway A takes id 4 and has not committed; gateway B stores id 5 and it is indexed.
    const client = await (await backend.database.pool()).connect();
    try {
      await client.query("BEGIN");
      await client.query(
        "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (1, 4, 'user', 'the slow capybara-5150 arrives', 1, 4, 'k-slow')",
      );
      await insertMessages(opened, ["fast one"], { firstSeq: 5 });
      await index.indexPending();
      expect(await index.through("messages")).toEqual({ through: 5, newest: 5 });
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    // An id watermark at 5 would skip id 4 forever; the queue holds it and the watermark steps back below it.
    expect(await index.through("messages")).toEqual({ through: 3, newest: 5 });
    expect(await index.pendingMessages()).toBe(1);
    await index.indexPending();
    expect(await index.through("messages")).toEqual({ through: 5, newest: 5 });
    const found = await backend.database.rows<{ message_id: number }>("SELECT message_id FROM message_search WHERE document @@ $1::tsquery", ["'capybara' <-> '5150'"]);
    expect(found.map((row) => row.message_id)).toEqual([4]);
    expect(seqs((await search("capybara-5150", { mode: "regex" })).matches)).toEqual([4]);
  });

  it("indexes a changed text again without holding the watermark back", async () => {
    await insertMessages(opened, ["original wording here", "second row"]);
    await backend.searchIndex.indexPending();
    await backend.database.run("UPDATE messages SET content = 'rewritten with marmot-88' WHERE message_id = 1");
    const index = new PgSearchIndex(backend.database, new PgFileIndex(backend.database));
    expect(await index.pendingMessages()).toBe(1);
    expect(await index.through("messages")).toEqual({ through: 2, newest: 2 });
    await index.indexPending();
    expect(await index.pendingMessages()).toBe(0);
    expect(seqs((await search("marmot-88", { mode: "regex" })).matches)).toEqual([1]);
    expect(seqs((await search("original")).matches)).toEqual([]);
    const stats = await backend.database.row("SELECT documents, total_words FROM search_index_stats WHERE name = 'messages'");
    expect(stats).toEqual({ documents: 2, total_words: 6 });
  });

  it("reads matches newest first past the newest 2,000 ids (the index-driven second step), in order", async () => {
    const texts = Array.from({ length: 2_600 }, (_, index) => (index % 100 === 0 ? `common marker ${index}` : `row ${index}`));
    texts[4] = "the rare heron-2718 sighting";
    await insertMessages(opened, texts);
    await backend.searchIndex.indexPending();
    expect(seqs((await search("heron-2718", { mode: "regex" })).matches)).toEqual([5]);
    expect(seqs((await search("heron")).matches)).toEqual([5]);
    // 26 rows hold "marker": 6 among the newest 2,000 ids, 20 below them; a limit of 10 takes 4 from the second step.
    const expected = [2501, 2401, 2301, 2201, 2101, 2001, 1901, 1801, 1701, 1601];
    expect(seqs((await search("marker", { limit: 10 })).matches)).toEqual(expected);
    expect(seqs((await search("common marker \\d+", { mode: "regex", limit: 10 })).matches)).toEqual(expected);
  });

  it("walks the ids below the newest 2,000 for a regex whose word is common there, and reads the index below the walk when it falls short", async () => {
    // "await" is in 40% of the newest 2,000 messages (800 of a 1,000-candidate page) and in 5% of the 12,000 before:
    // the page's first statement stops at the newest 2,000; the second walks 1,500 ids below them (finding 75), then
    // reads the GIN index below the walk for the other 125 of the page; the next page is the index's alone.
    const texts = Array.from({ length: 14_000 }, (_, index) =>
      (index >= 12_000 ? index % 5 < 2 : index % 20 === 3) ? `step ${index}: await load${index}(config)` : `step ${index}: idle`);
    await insertMessages(opened, texts);
    await backend.searchIndex.indexPending();
    const expected = texts.flatMap((text, index) => (text.includes("await") ? [index + 1] : [])).reverse();
    expect(expected).toHaveLength(1_400);
    const statements: number[] = [];
    const rows = PgSearchReader.prototype.rows;
    const counting = vi.spyOn(PgSearchReader.prototype, "rows").mockImplementation(async function (this: PgSearchReader, what, sql, params) {
      const result = await rows.call(this, what, sql, params);
      if (what === "message regex candidates") statements.push(result.length);
      return result as never;
    });
    try {
      expect(seqs((await search("await load\\d+\\(", { mode: "regex", limit: 2_000 })).matches)).toEqual(expected);
    } finally {
      counting.mockRestore();
    }
    // 800 from the newest 2,000; 200 from the walk and the index below it; the other 400 on the next page.
    expect(statements).toEqual([800, 200, 400]);
  });

  it("reads a query found in few messages with one read of the whole index, keeping only what the widening windows would read", async () => {
    // Seqs 1-20 take ids 1-20, seqs 21-40 ids from 120,000 on: past the first window of ids (50,000) read below the
    // newest. The old seqs 3 and 5 say "zephyrine" three times in three words (the best matches); the new seqs 25, 30,
    // 35 and 40 say it once among many words.
    await insertMessages(opened, Array.from({ length: 20 }, (_, index) => (index === 2 || index === 4 ? "zephyrine zephyrine zephyrine" : `old row ${index}`)));
    await backend.database.run("ALTER TABLE messages ALTER COLUMN message_id RESTART WITH 120000");
    await insertMessages(opened, Array.from({ length: 20 }, (_, index) =>
      (index % 5 === 4 ? `a longer newer note ${index} that mentions zephyrine once among many other words` : `new row ${index}`)), { firstSeq: 21 });
    await backend.searchIndex.indexPending();
    const windows: { from: number; to: number }[] = [];
    const retrieval = backend.retrieval;
    const recording = Object.create(retrieval, {
      messageTextCandidates: {
        value: (...args: Parameters<typeof retrieval.messageTextCandidates>) => {
          windows.push(args[3]);
          return retrieval.messageTextCandidates(...args);
        },
      },
    }) as typeof retrieval;
    const searchRecorded = (options: Partial<GrepRequest>) => grep(recording, {
      pattern: "zephyrine", mode: "full_text", scope: "messages", conversationIds: [1], since: null, before: null, limit: 10, sort: "recency", ...options,
    }, { now: 100, regexBudgetMs: 10_000, files: new LargeFileReader({ store: backend.store }) });
    // Six matches, fewer than the limit: the windows would read [70,020, 120,019] and then [1, 70,019]; one read now.
    expect(seqs((await searchRecorded({})).matches)).toEqual([40, 35, 30, 25, 5, 3]);
    expect(windows).toEqual([{ from: 1, to: 120_019 }]);
    // By relevance with a limit of 3, the first window's four matches are enough to rank, so the windows never read
    // the better old matches: neither does the one read.
    expect(seqs((await searchRecorded({ sort: "relevance", limit: 3 })).matches)).toEqual([40, 35, 30]);
  });

  it("reads a rare word's windows from its matches alone, never a range of the primary key as wide as the window, by any plan", async () => {
    // 3,000 old messages, then 3,000 new ones from id 120,000 on: the widening windows read [70,0xx, 123,xxx] first.
    // "plover" is in 20 messages: more than the limit of 10, so the windows are read, not the one read of the index; too
    // rare for the walk of the newest messages (pg-retrieval-sql.ts `probeFor`).
    await insertMessages(opened, Array.from({ length: 3_000 }, (_, index) => `old entry ${index}${index % 300 === 3 ? " plover" : ""}`));
    await backend.database.run("ALTER TABLE messages ALTER COLUMN message_id RESTART WITH 120000");
    await insertMessages(opened, Array.from({ length: 3_000 }, (_, index) => `new entry ${index}${index % 300 === 5 ? " plover" : ""}`), { firstSeq: 3_001 });
    await backend.searchIndex.indexPending();
    await backend.database.run("ANALYZE");
    // Index reads made free and heap pages dear: any plan that can intersect the GIN bitmap with a primary-key range
    // of the window (a BitmapAnd, whose cost is the window's rows: PostgreSQL's choice at 1M) takes it.
    const name = new URL(opened.location).pathname.slice(1);
    await backend.database.run(`ALTER DATABASE ${name} SET cpu_index_tuple_cost = 0`);
    await backend.database.run(`ALTER DATABASE ${name} SET random_page_cost = 1000`);
    await backend.database.run(`ALTER DATABASE ${name} SET seq_page_cost = 1000`);
    const before = await indexRowsRead("message_search_pkey");
    const found = await search("plover", { limit: 10 });
    expect(seqs(found.matches)).toEqual([5706, 5406, 5106, 4806, 4506, 4206, 3906, 3606, 3306, 3006]);
    // The window holds 3,000 rows; the grep's other statements read a few entries of the key (none grows with history).
    const read = (await indexRowsRead("message_search_pkey")) - before;
    expect(read).toBeLessThan(100);
  });

  it("reads a rare word in stored content from the GIN index, never by walking the chunks in id order, by any plan", async () => {
    // One stored file of ~500 chunks (4 KB each), "walrusqq" in two of them. A plan that walks the chunks' primary key
    // over the window checking each tsvector is what PostgreSQL chose at 1M once new chunks waited in the GIN index's
    // pending list: 7,371 chunks read, 57 ms (docs/benchmarks.md, "PostgreSQL"). Bitmap scans made dear here take the
    // same turn: only bounds that are a filter on the GIN index's matches, not a range of the key, keep it off that walk.
    await insertMessages(opened, ["the file: [LCM File: file_00000000000000b1 | big.log]"]);
    const path = join(tempDir(), "big.log");
    const lines = Array.from({ length: 100_000 }, (_, index) => `row ${index} status ok${index === 1_000 || index === 98_000 ? " walrusqq" : ""}`);
    writeFileSync(path, `${lines.join("\n")}\n`);
    await runFixtureSql(opened, [{
      sql: `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
              exploration_summary, explorer, origin, created_at) VALUES ('file_00000000000000b1', 1, 'hb1', 'big.log', 'text/plain', ?, 10, ?, 'a log', 'text', 'tool_output', 1)`,
      params: [lines.join("\n").length + 1, path],
    }]);
    // Each call indexes a time-boxed share of the file: called until the chunks stop growing.
    const chunkCount = async () => (await backend.database.row<{ n: number }>("SELECT count(*)::int AS n FROM file_chunks"))!.n;
    for (let indexed = -1; indexed !== (await chunkCount());) {
      indexed = await chunkCount();
      await backend.searchIndex.indexPending({ maxFileBytes: 10_000_000 });
    }
    await backend.database.run("ANALYZE");
    expect(await chunkCount()).toBeGreaterThan(400);
    const name = new URL(opened.location).pathname.slice(1);
    await backend.database.run(`ALTER DATABASE ${name} SET enable_bitmapscan = off`);
    const before = await indexRowsRead("file_chunks_pkey");
    const found = await search("walrusqq");
    // One match per stored file: its newest line holding the word.
    expect(found.matches.map((match) => (match as { inFile?: { line: number } }).inFile?.line)).toEqual([98_001]);
    // The index's highest chunk id is one entry of the key; a walk would read every chunk of the window.
    expect((await indexRowsRead("file_chunks_pkey")) - before).toBeLessThan(10);
  });

  it("finds a regex in the newest chunk of stored content and in older ones, the newest chunk read in the same statement", async () => {
    // Two stored files of one chunk each: "marmotlog" in the older (chunk 1) and in the newer (chunk 2, the newest).
    await insertMessages(opened, ["first file: [LCM File: file_00000000000000a1 | a.log]", "second file: [LCM File: file_00000000000000a2 | b.log]"]);
    const paths = ["a.log", "b.log"].map((name) => join(tempDir(), name));
    paths.forEach((path, index) => writeFileSync(path, `header ${index}\nthe marmotlog entry ${index}\nfooter\n`));
    await runFixtureSql(opened, paths.map((path, index) => ({
      sql: `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
              exploration_summary, explorer, origin, created_at) VALUES (?, 1, ?, ?, 'text/plain', 40, 10, ?, 'a log', 'text', 'tool_output', ?)`,
      params: [`file_00000000000000a${index + 1}`, `hash${index}`, `${"ab"[index]}.log`, path, index + 1],
    })));
    await backend.searchIndex.indexPending({ maxFileBytes: 1_000_000 });
    const found = await search("marmotlog entry \\d", { mode: "regex" });
    expect(found.matches.map((match) => (match as { inFile?: { fileId: string } }).inFile?.fileId)).toEqual(["file_00000000000000a2", "file_00000000000000a1"]);
  });

  it("reads a common word's newest matches in one conversation when other conversations hold the newest ids, by any plan", async () => {
    // Conversation 1: 3,000 messages, "often" in every other one, "seldom" in every 300th; then conversation 2's 3,000
    // newer messages hold both words everywhere. Conversation 1's newest matches must come back, newest first, whether
    // the store walks the conversation (a common word), reads the GIN index (a rare one), or walks and then reads
    // the index past the walk (a word rarer than its estimate).
    await insertMessages(opened, Array.from({ length: 3_000 }, (_, index) =>
      `entry ${index}${index % 2 === 0 ? " often" : ""}${index % 300 === 7 ? " seldom" : ""}${index < 40 && index % 4 === 1 ? " tardy" : ""}`));
    await insertMessages(opened, Array.from({ length: 3_000 }, (_, index) => `other ${index} often seldom tardy`), { conversationId: 2 });
    await backend.searchIndex.indexPending();
    expect(seqs((await search("often", { limit: 5 })).matches)).toEqual([2999, 2997, 2995, 2993, 2991]);
    expect(seqs((await search("seldom", { limit: 20 })).matches)).toEqual([2708, 2408, 2108, 1808, 1508, 1208, 908, 608, 308, 8]);
    // "tardy" is in half of all documents (conversation 2), so the walk reads conversation 1's newest messages first,
    // finds none there, and the rest comes from the index below where it stopped.
    expect(seqs((await search("tardy", { limit: 20 })).matches)).toEqual([38, 34, 30, 26, 22, 18, 14, 10, 6, 2]);
  });

  it("plans each index's look-up once per connection, not for every search", async () => {
    await insertMessages(opened, ["the otter-4411 swims", "a heron waits", "otters everywhere"]);
    await backend.searchIndex.indexPending();
    for (let run = 0; run < 7; run++) expect(seqs((await search("otter")).matches)).toEqual([3, 1]);
    // Every connection the look-ups may have run on, read at once (each read holds one): their prepared statements.
    const reads = new PgSearchReader(backend.database).pool;
    const prepared = preparedStatement("SELECT statement, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements", { plan: "generic" });
    const sessions = await Promise.all(Array.from({ length: 4 }, () => reads.rows<{ statement: string; generic: number; custom: number }>(prepared)));
    const lookUps = sessions.flat().filter((row) => row.statement.startsWith("WITH state AS MATERIALIZED"));
    // Seven searches of messages, each looking up the messages' index and stored content's: 14 runs, all on generic plans.
    expect(lookUps.reduce((sum, row) => sum + row.generic, 0)).toBe(14);
    expect(lookUps.reduce((sum, row) => sum + row.custom, 0)).toBe(0);
  });

  it("lets two gateways index one backlog at once: every row once, the statistics exact", async () => {
    await insertMessages(opened, Array.from({ length: 1_200 }, (_, index) => `message ${index} about topic${index % 7}`));
    const other = opened.reopen() as PostgresBackend;
    const progress = await Promise.all([backend.searchIndex.indexPending(), other.searchIndex.indexPending()]);
    expect(progress[0].indexed + progress[1].indexed).toBe(1_200);
    expect(progress[0].indexed).toBeGreaterThan(0);
    expect(progress[1].indexed).toBeGreaterThan(0);
    const counts = await backend.database.row<{ indexed: number; documents: number; total_words: number; words: number }>(
      `SELECT (SELECT count(*)::int FROM message_search) AS indexed, (SELECT sum(word_count)::int FROM message_search) AS words,
              documents, total_words FROM search_index_stats WHERE name = 'messages'`,
    );
    expect(counts).toEqual({ indexed: 1_200, documents: 1_200, words: 4_800, total_words: 4_800 });
    expect(await backend.searchIndex.pendingMessages()).toBe(0);
  });

  it("indexes a large backlog in the background until nothing is left, then finds its oldest detail; maintenance's turn again after", async () => {
    const texts = Array.from({ length: 1_500 }, (_, index) => index === 0 ? "the vault key is quokka-7741" : `message ${index} about topic${index % 7}`);
    await insertMessages(opened, texts);
    const logger = new RecordingLogger();
    const index = backend.searchIndex as PgSearchIndex;
    // Below its threshold the backlog is maintenance's: nothing starts, nothing is indexed.
    expect(await index.indexBacklogInBackground(logger, 2_000)).toBe(false);
    expect(index.backgroundRun()).toBeUndefined();
    expect(await index.pendingMessages()).toBe(1_500);
    expect(await index.indexBacklogInBackground(logger, 1_000)).toBe(true);
    const run = index.backgroundRun();
    expect(run).toBeDefined();
    // One run per database in the process: another backend on the same pool is told it runs.
    const sameProcess = new PgSearchIndex(backend.database, new PgFileIndex(backend.database));
    expect(await sameProcess.indexBacklogInBackground(logger, 1_000)).toBe(true);
    await run;
    expect(await index.pendingMessages()).toBe(0);
    expect(seqs((await search("quokka-7741")).matches)).toEqual([1]);
    expect(seqs((await search("quokka-\\d+", { mode: "regex" })).matches)).toEqual([1]);
    // Caught up: the next large backlog starts a new run; until then, maintenance indexes in turn.
    expect(await index.indexBacklogInBackground(logger, 1_000)).toBe(false);
    expect(logger.lines.filter((line) => line.level !== "debug")).toEqual([]);
  });

  it("stops indexing in the background when the pool closes, at once and quietly", async () => {
    await insertMessages(opened, Array.from({ length: 3_000 }, (_, index) => `message ${index} about topic${index % 7}`));
    const logger = new RecordingLogger();
    const index = backend.searchIndex as PgSearchIndex;
    expect(await index.indexBacklogInBackground(logger, 1_000)).toBe(true);
    const run = index.backgroundRun()!;
    while ((await index.pendingMessages()) === 3_000) await new Promise((resolve) => setTimeout(resolve, 5));
    await backend.database.close(); // the gateway shutting down, midway
    // A run that asked the closed pool for a connection would wait for its 10 s connection timeout: a shutdown held up.
    const ended = await Promise.race([run.then(() => "ended"), new Promise((resolve) => setTimeout(resolve, 5_000, "still running"))]);
    expect(ended).toBe("ended");
    expect(logger.lines.filter((line) => line.level !== "debug")).toEqual([]);
    backend = opened.reopen() as PostgresBackend;
    expect(await backend.searchIndex.pendingMessages()).toBeGreaterThan(0);
  });

  it("scans a large backlog in windows widened on the server, finding its oldest detail in a few reads, full text and regex", async () => {
    await insertBulkBacklog();
    expect(await backend.searchIndex.pendingMessages()).toBe(40_001);
    const scans = vi.spyOn(PgSearchReader.prototype, "rows");
    const scanReads = () => scans.mock.calls.filter(([what]) => what === "message scan").length;
    expect(seqs((await search("quokka-7741")).matches)).toEqual([1]);
    // Windows of 1,000, 4,000, 16,000, then 65,536 ids: 4 reads where fixed windows of 1,000 took 41.
    expect(scanReads()).toBeLessThanOrEqual(5);
    scans.mockClear();
    expect(seqs((await search("quokka-\\d{4}", { mode: "regex" })).matches)).toEqual([1]);
    expect(scanReads()).toBeLessThanOrEqual(5);
    scans.mockRestore();
    // Nothing was indexed by the searches (a backlog this large is left to the indexer): the reads above were scans.
    expect(await backend.searchIndex.pendingMessages()).toBe(40_001);
  });

  it("covers a large backlog with blocks first: searches read only the blocks that may hold their words until it is indexed", async () => {
    await insertBulkBacklog();
    const blocks = new PgBacklogBlocks(backend.database);
    expect(await blocks.fill(() => false)).toBe(40_001);
    expect(await blocks.fill(() => false)).toBe(0); // nothing above them is left
    const count = async () => (await backend.database.row<{ n: number }>("SELECT count(*)::int AS n FROM message_backlog_blocks"))!.n;
    expect(await count()).toBe(Math.ceil(40_001 / 256));
    // What each read of the blocks found (the blocks that passed), and whether anything was read directly.
    const reads = vi.spyOn(PgDatabase.prototype, "rows");
    const blocksFound = async () => {
      const found: number[] = [];
      for (const [index, [sql]] of reads.mock.calls.entries()) {
        if (typeof sql !== "string" || !sql.includes("'found' AS kind")) continue;
        const rows = (await reads.mock.results[index]!.value) as { kind: string }[];
        found.push(rows.filter((row) => row.kind === "found").length);
      }
      return found;
    };
    const scans = vi.spyOn(PgSearchReader.prototype, "rows");
    const scanReads = () => scans.mock.calls.filter(([what]) => what === "message scan").length;
    try {
      for (const [pattern, mode] of [["quokka-7741", "full_text"], ["quokka-\\d{4}", "regex"]] as const) {
        reads.mockClear();
        scans.mockClear();
        expect(seqs((await search(pattern, { mode })).matches)).toEqual([1]);
        // One read of the blocks covers all 157: one passed (the first, holding the match), no row was read directly.
        expect(await blocksFound()).toEqual([1]);
        expect(scanReads()).toBe(0);
      }
      reads.mockClear();
      expect((await search("wombat")).matches).toEqual([]);
      expect(await blocksFound()).toEqual([0]);
      // A message stored after the fill is above the blocks: read directly, and found.
      await insertMessages(opened, ["a later quokka-9999"], { firstSeq: 40_002 });
      scans.mockClear();
      expect(seqs((await search("quokka-9999")).matches)).toEqual([40_002]);
      expect(scanReads()).toBe(1);
    } finally {
      reads.mockRestore();
      scans.mockRestore();
    }
    // Nothing was indexed by the searches: the reads above were the blocks'. The background run indexes it all and
    // empties the blocks.
    expect(await backend.searchIndex.pendingMessages()).toBe(40_002);
    const index = backend.searchIndex as PgSearchIndex;
    expect(await index.indexBacklogInBackground(new RecordingLogger(), 1_000)).toBe(true);
    await index.backgroundRun();
    expect(await count()).toBe(0);
    expect(seqs((await search("quokka")).matches)).toEqual([40_002, 1]);
  });

  it("finds the message holding a stored file's reference through the backlog's blocks: the earliest that names it", async () => {
    const fileId = "file_7f3a9c0d5e1b2a44";
    await insertMessages(opened, ["first"]);
    await backend.database.run(
      `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key)
       SELECT 1, g, 'user', CASE WHEN g IN (20000, 30000) THEN 'stored aside as ' || $1 ELSE 'filler message number ' || g END, 1, g, 'k1-' || g
       FROM generate_series(2, 40001) g`,
      [fileId],
    );
    await backend.database.run(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, byte_size, token_count, storage_path, exploration_summary, explorer, origin, created_at)
       VALUES ($1, 1, 'h', 10, 3, '1/f.txt', 'a file', 'test', 'tool_result', 20000)`,
      [fileId],
    );
    const reference = async () => (await backend.retrieval.fileReferences([{ fileId: fileId as FileId, conversationId: 1 as ConversationId, messageId: null }])).get(fileId as FileId);
    const expected = async () => (await backend.database.row<{ id: number }>("SELECT message_id AS id FROM messages WHERE seq = 20000"))!.id;
    // Without blocks: every waiting row read in id order until the first that names it.
    expect((await reference())?.messageId).toBe(await expected());
    await backend.database.run("UPDATE file_index SET message_id = NULL");
    // With blocks: only the blocks that may hold the id are read (and the rows outside them, none here).
    expect(await new PgBacklogBlocks(backend.database).fill(() => false)).toBe(40_001);
    expect((await reference())?.messageId).toBe(await expected());
    expect((await reference())?.seq).toBe(20_000);
  });

  it("covers with blocks a message whose id commits after a higher one: the fill waits for it, and searches find it", async () => {
    await insertMessages(opened, ["first"]);
    // Gateway A takes the next id and has not committed; gateway B stores higher ids and they are committed.
    const client = await (await backend.database.pool()).connect();
    try {
      await client.query("BEGIN");
      await client.query(
        "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (1, 2, 'user', 'the late walrus-4410', 1, 2, 'k1-2')",
      );
      await backend.database.run(
        `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key)
         SELECT 1, g, 'user', 'filler message number ' || g, 1, g, 'k1-' || g FROM generate_series(3, 600) g`,
      );
      const filled = new PgBacklogBlocks(backend.database).fill(() => false);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await client.query("COMMIT");
      expect(await filled).toBe(600);
    } finally {
      client.release();
    }
    const scans = vi.spyOn(PgSearchReader.prototype, "rows");
    try {
      expect(seqs((await search("walrus-4410")).matches)).toEqual([2]);
      expect(seqs((await search("walrus-\\d+", { mode: "regex" })).matches)).toEqual([2]);
      // Found through the blocks, not by reading the rows (a block that left the late row out would hide it).
      expect(scans.mock.calls.filter(([what]) => what === "message scan")).toEqual([]);
    } finally {
      scans.mockRestore();
    }
  });

  it("stops a search statement at its timeout with a clear error, and changes nothing", async () => {
    await insertMessages(opened, ["a row to scan"]);
    // A pool with no timeout of its own: only the search's SET LOCAL can stop the statement.
    const database = new PgDatabase(opened.location, { statementTimeoutMs: 0 });
    const retrieval = new PgRetrievalStore(database, { statementTimeoutMs: 300 });
    const client = await (await backend.database.pool()).connect();
    try {
      await client.query("BEGIN");
      await client.query("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE");
      const error = await retrieval.scanMessages({ conversationIds: [1], since: null, before: null }, { by: "messageId", from: 1, to: 10 }, null)
        .then(() => null, (caught: unknown) => caught);
      expect(isLcmError(error, "timeout")).toBe(true);
      expect((error as Error).message).toMatch(/message scan ran past its 300 ms limit on PostgreSQL .* Narrow the search/);
      expect(backend.storage.isStorageFailure(error)).toBe(false);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
    const rows = await retrieval.scanMessages({ conversationIds: [1], since: null, before: null }, { by: "messageId", from: 1, to: 10 }, null);
    expect(rows.map((row) => row.text)).toEqual(["a row to scan"]);
    await database.close();
  });

  it("finds phrases and words in documents past tsvector's limits", async () => {
    // 2,504 bytes: past the 2,046 bytes PostgreSQL allows a lexeme.
    const long = `${"w".repeat(2_500)}tail`;
    await insertMessages(opened, [
      // 20,000 words: the phrase sits past position 16,383.
      `${Array.from({ length: 20_000 }, (_, index) => `filler${index % 500}`).join(" ")} alpha omega`,
      // One word 300 times, then a phrase with it.
      `${"echo ".repeat(300)}echo sierra`,
      `a word longer than a lexeme may be: ${long}`,
      // Over 1 MB of distinct words: no tsvector can hold it.
      `${Array.from({ length: 90_000 }, (_, index) => `unique${index.toString(36)}x`).join(" ")} needle-in-haystack`,
      "alpha and omega apart, sierra echo reversed",
    ]);
    await backend.searchIndex.indexPending();
    expect(await backend.searchIndex.pendingMessages()).toBe(0);
    expect(seqs((await search("\"alpha omega\"")).matches)).toEqual([1]);
    expect(seqs((await search("\"echo sierra\"")).matches)).toEqual([2]);
    expect(seqs((await search(`${"w".repeat(900)}*`)).matches)).toEqual([3]);
    expect(seqs((await search("w{600}tail", { mode: "regex" })).matches)).toEqual([3]);
    expect(seqs((await search("needle-in-haystack", { mode: "regex" })).matches)).toEqual([4]);
    expect(seqs((await search("\"needle in haystack\"")).matches)).toEqual([4]);
  });
});
