/**
 * The full-text contract of RetrievalStore (store/retrieval-store.ts), written against the store's methods only so
 * that every backend runs it: for each query, the indexed candidates a backend lists hold every document the
 * backend-neutral matcher (text/text-matcher.ts) finds the terms in, and the rows not indexed yet are read with the
 * same text. Runs on each backend of backendKinds() (test/helpers/backends.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { analyzeDocument } from "../../src/text/text-analysis.js";
import { QueryMatcher } from "../../src/text/text-matcher.js";
import { parseTextQuery, queryTerms } from "../../src/text/text-query.js";
import type { MessageHitRow } from "../../src/store/retrieval-store.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { insertMessages } from "../helpers/sql-fixtures.js";

const TEXTS = [
  "The LcmContextEngineFactory builds one engine per turn.",
  "see get_user_id_from_token in src/auth/token-reader.ts",
  "p95 was 1234ms, then 87 ms after the fix",
  "We deployed the billing service; deploying again tomorrow, redeploy later.",
  "commit 4f2a9c1d7e3b5a6c removes the fallback",
  "数据库迁移完成了，明天上线。",
  "データベースの移行は完了しました。",
  "🤖deploy finished 👍🏽great work",
  "café au lait, NAÏVE question, Straße",
  "the rollout flag for the payment migration is PAYMENTS_V2_ROLLOUT",
  "nothing of interest here at all",
  "Deploy KEY rotated; the deploy key lives in vault",
];
const QUERIES = [
  "ContextEngine", "engineFactory", "user_id", "auth/token", "1234 ms", "87ms", "deploy", "deployment", "4f2a9c1",
  "迁移", "数据库迁移", "移行", "great", "cafe", "naive", "STRAßE", "payments rollout", "\"deploy key\"", "deploy*",
  "payment OR billing", "fix",
];

describe.each(backendKinds())("the full-text contract on %s", (kind) => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
  });
  afterEach(async () => {
    await opened.close();
  });

  /** The store holding TEXTS as the messages of conversation 1, the first `indexed` of them in the index. */
  async function store(indexed: number) {
    await insertMessages(opened, TEXTS);
    await opened.backend.searchIndex.indexPending({ maxRows: indexed });
    return opened.backend.retrieval;
  }

  it("lists among its candidates every indexed message the matcher finds a query in", async () => {
    const retrieval = await store(TEXTS.length);
    const filter = { conversationIds: [1], since: null, before: null };
    for (const text of QUERIES) {
      const query = parseTextQuery(text)!;
      const terms = queryTerms(query);
      const prepared = await retrieval.prepareText("messages", terms);
      expect(prepared.indexedThrough, text).toBe(TEXTS.length);
      const groups = query.groups.map((group) => group.map((term) => terms.indexOf(term)).filter((index) => index >= 0));
      const listed = await retrieval.messageTextCandidates(prepared, filter, { groups }, { from: 1, to: prepared.indexedThrough }, 100);
      const matcher = new QueryMatcher(terms);
      const expected = TEXTS.flatMap((content, index) => (QueryMatcher.holdsGroup(matcher.match(content), groups) ? [index + 1] : []));
      expect(expected.length, `${text} matches something`).toBeGreaterThan(0);
      expect(listed.rows.map((row: MessageHitRow) => row.messageId).sort((a, b) => a - b), text).toEqual(expect.arrayContaining(expected));
    }
  });

  it("gives ranking the same document statistics and frequencies as the analysis counts", async () => {
    const retrieval = await store(TEXTS.length);
    const terms = queryTerms(parseTextQuery("deploy billing")!);
    const prepared = await retrieval.prepareText("messages", terms);
    const analysed = TEXTS.map((text) => analyzeDocument(text));
    expect(prepared.documents).toBe(TEXTS.length);
    expect(prepared.averageWords).toBeCloseTo(analysed.reduce((sum, document) => sum + document.wordCount, 0) / TEXTS.length, 9);
    const holding = (word: string) => analysed.filter((document) => `${document.words} ${document.derived}`.split(" ").includes(word)).length;
    expect(prepared.frequencies).toEqual([holding("deploy"), holding("billing")]);
    expect(prepared.frequencies).toEqual([2, 1]);
  });

  it("reads rows by window with their searchable text, newest first", async () => {
    const retrieval = await store(4);
    const rows = await retrieval.scanMessages({ conversationIds: [1], since: null, before: null }, { by: "messageId", from: 5, to: 13 }, null);
    expect(rows.map((row) => row.messageId)).toEqual([12, 11, 10, 9, 8, 7, 6, 5]);
    expect(rows.at(-1)!.text).toBe(TEXTS[4]);
    const filtered = await retrieval.scanMessages(
      { conversationIds: [1], since: null, before: null }, { by: "messageId", from: 1, to: 13 }, { anyOf: ["deploy"], keepNonAscii: false },
    );
    expect(filtered.map((row) => row.messageId)).toEqual([12, 8, 4]);
  });
});
