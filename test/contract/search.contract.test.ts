/**
 * Search on every backend (issue 28): grep (search/grep.ts, what lcm_grep runs) over the backend's RetrievalStore
 * finds an early unique identifier, a fragment of a camelCase word, another form of a word, a number with its unit,
 * Chinese, a regex, a match inside content stored aside and a summary, in the same order on each backend; rows the
 * index has not reached yet are found too. Rows are written with plain SQL (test/helpers/sql-fixtures.ts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LargeFileReader } from "../../src/large-files/large-file-reader.js";
import { grep, type GrepMatch, type GrepRequest } from "../../src/search/grep.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { insertMessages, runFixtureSql } from "../helpers/sql-fixtures.js";
import { tempDir } from "../helpers/temp-dir.js";

const FILE_ID = "file_0123456789abcdef";
const FILLER = Array.from({ length: 24 }, (_, index) => `routine note ${index}: the build passed and tests ran`);
/** Seq 1…33: the needle first, then filler, then the words each search looks for. */
const TEXTS = [
  "the deploy key is zebra-7731, keep it",
  ...FILLER,
  "The LcmContextEngineFactory builds one engine per turn.",
  "We deployed the billing service yesterday",
  "p95 was 1234ms after the cache fix",
  "数据库迁移完成了，明天上线。",
  "request failed: timeout after 3000 ms on /api/orders",
  `tool output stored aside: [LCM File: ${FILE_ID} | build.log | text/plain | 2,000 bytes]`,
  "billing billing billing: the billing deploy again",
  "deploy notes for billing",
];
const SUMMARY = "Summary: the team discussed the quarterly okapi-migration plan";

describe.each(backendKinds())("grep on %s", (kind) => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
    await insertMessages(opened, TEXTS);
    const log = join(tempDir(), "build.log");
    writeFileSync(log, `${"line of build output\n".repeat(40)}ERROR: linker could not find symbol quokkaResolver\n${"tail line\n".repeat(20)}`);
    await runFixtureSql(opened, [
      {
        sql: `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
                exploration_summary, explorer, origin, created_at) VALUES (?, 1, 'hash', 'build.log', 'text/plain', 2000, 500, ?, 'a build log', 'text', 'tool_output', 31)`,
        params: [FILE_ID, log],
      },
      {
        sql: `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at,
                descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
              VALUES ('sum_0000000000000001', 1, 'leaf', 0, ?, 20, 200, 2, 25, 0, 24, 2, 25, '[]', 'normal', 26)`,
        params: [SUMMARY],
      },
    ]);
    await opened.backend.searchIndex.indexPending({ maxFileBytes: 1_000_000 });
  });
  afterEach(async () => {
    await opened.close();
  });

  const search = (pattern: string, options: Partial<GrepRequest> = {}) =>
    grep(opened.backend.retrieval, {
      pattern, mode: "full_text", scope: "both", conversationIds: [1], since: null, before: null, limit: 20, sort: "relevance", ...options,
    }, { now: 100, regexBudgetMs: 10_000, files: new LargeFileReader({ store: opened.backend.store }) });
  const seqs = (matches: GrepMatch[]) => matches.flatMap((match) => (match.type === "message" ? [match.seq] : []));

  it("finds an early unique identifier with the default parameters, newest first", async () => {
    const result = await search("zebra-7731", { mode: "regex", sort: "recency" });
    expect(seqs(result.matches)).toEqual([1]);
    expect(result.strategy).toBe("index");
  });

  it("finds a camelCase fragment, another form of a word, a number with its unit and Chinese", async () => {
    expect(seqs((await search("ContextEngine")).matches)).toEqual([26]);
    expect(seqs((await search("deployment")).matches)).toEqual(expect.arrayContaining([1, 27]));
    expect(seqs((await search("1234 ms")).matches)).toEqual([28]);
    expect(seqs((await search("迁移")).matches)).toEqual([29]);
  });

  it("finds a regex across words, a match inside stored content, and a summary", async () => {
    expect(seqs((await search("timeout after \\d+ ms", { mode: "regex", sort: "recency" })).matches)).toEqual([30]);
    for (const mode of ["regex", "full_text"] as const) {
      const stored = (await search("quokkaResolver", { mode, sort: "recency" })).matches;
      expect(stored, mode).toHaveLength(1);
      expect(stored[0], mode).toMatchObject({ type: "message", seq: 31, inFile: { fileId: FILE_ID, line: 41 } });
    }
    const summary = (await search("okapi migration")).matches;
    expect(summary).toEqual([expect.objectContaining({ type: "summary", summaryId: "sum_0000000000000001" })]);
  });

  it("ranks by relevance in the same order on every backend", async () => {
    // BM25 over the same frequencies, document counts and lengths: the message saying "billing" four times first,
    // then the short note, then the longer sentence; a common word ("routine", in 24 documents) weighs little.
    expect(seqs((await search("billing")).matches)).toEqual([32, 33, 27]);
    expect(seqs((await search("billing deploy")).matches)).toEqual([32, 33, 27, 1]);
    expect(seqs((await search("billing OR routine", { limit: 6 })).matches)).toEqual([32, 33, 27, 25, 24, 23]);
  });

  it("keeps a NUL, a line separator and an astral character in the text it finds and shows", async () => {
    const text = "before\u0000after the ibex-77 line\u2028next 𝒳 astral";
    await insertMessages(opened, [text], { firstSeq: TEXTS.length + 1 });
    await opened.backend.searchIndex.indexPending();
    for (const mode of ["regex", "full_text"] as const) {
      const found = (await search("ibex-77", { mode })).matches;
      expect(found.map((match) => match.type === "message" && match.snippet.includes("ibex"))).toEqual([true]);
    }
    const [row] = await opened.backend.retrieval.scanMessages(
      { conversationIds: [1], since: null, before: null }, { by: "messageId", from: TEXTS.length + 1, to: TEXTS.length + 2 }, { anyOf: ["ibex"], keepNonAscii: false },
    );
    expect(row!.text).toBe(text);
    expect((await opened.backend.retrieval.getMessageTexts([TEXTS.length + 1]))[0]!.content).toBe(text);
  });

  it("finds rows the index has not reached yet, with either mode", async () => {
    // More than a search indexes itself (400): the rows above the index are read directly.
    const late = Array.from({ length: 420 }, (_, index) => `later chatter ${index}`);
    late[100] = "late arrival: the wombat-4242 ticket";
    late[300] = "LateArrivalHandler registered";
    await insertMessages(opened, late, { firstSeq: TEXTS.length + 1 });
    expect(await opened.backend.searchIndex.pendingMessages()).toBe(420);
    expect(seqs((await search("wombat-4242", { mode: "regex" })).matches)).toEqual([TEXTS.length + 101]);
    expect(seqs((await search("ArrivalHandler")).matches)).toEqual([TEXTS.length + 301]);
    expect(seqs((await search("zebra-7731", { mode: "regex" })).matches)).toEqual([1]);
    expect(await opened.backend.searchIndex.pendingMessages()).toBe(420);
  });
});
