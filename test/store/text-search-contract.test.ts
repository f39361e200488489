/**
 * The full-text contract of RetrievalStore (store/retrieval-store.ts), written against the store's methods only
 * so that every backend runs it: for each query, the indexed candidates a backend lists hold every document the
 * backend-neutral matcher (text/text-matcher.ts) finds the terms in, and the rows not indexed yet are read with
 * the same text. Backends: the embedded SQLite one (a second backend adds its factory here).
 */
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import { QueryMatcher } from "../../src/text/text-matcher.js";
import { parseTextQuery, queryTerms } from "../../src/text/text-query.js";
import type { MessageHitRow, RetrievalStore } from "../../src/store/retrieval-store.js";
import { SqliteRetrievalStore } from "../../src/sqlite/sqlite-retrieval-store.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

interface Backend {
  name: string;
  /** A store holding `texts` as the messages of conversation 1, the first `indexed` of them in the index. */
  create(texts: readonly string[], indexed: number): Promise<RetrievalStore>;
}

const BACKENDS: Backend[] = [
  {
    name: "sqlite",
    async create(texts, indexed) {
      const db = openDatabase(tempDatabasePath());
      await db.write(() => {
        db.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a', 's', 1, 1)");
        texts.forEach((text, index) =>
          db.run(
            "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (1, ?, 'user', ?, 1, ?, ?)",
            index + 1, text, index + 1, `k${index}`,
          ),
        );
      });
      await new SqliteSearchIndex(db).indexPending({ maxRows: indexed });
      return new SqliteRetrievalStore(db);
    },
  },
];

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

describe.each(BACKENDS)("the full-text contract ($name)", (backend) => {
  it("lists among its candidates every indexed message the matcher finds a query in", async () => {
    const store = await backend.create(TEXTS, TEXTS.length);
    const filter = { conversationIds: [1], since: null, before: null };
    for (const text of QUERIES) {
      const query = parseTextQuery(text)!;
      const terms = queryTerms(query);
      const prepared = await store.prepareText("messages", terms);
      expect(prepared.indexedThrough, text).toBe(TEXTS.length);
      const groups = query.groups.map((group) => group.map((term) => terms.indexOf(term)).filter((index) => index >= 0));
      const listed = await store.messageTextCandidates(prepared, filter, { groups }, { from: 1, to: prepared.indexedThrough }, 100);
      const matcher = new QueryMatcher(terms);
      const expected = TEXTS.flatMap((content, index) => (QueryMatcher.holdsGroup(matcher.match(content), groups) ? [index + 1] : []));
      expect(expected.length, `${text} matches something`).toBeGreaterThan(0);
      expect(listed.rows.map((row: MessageHitRow) => row.messageId).sort((a, b) => a - b), text).toEqual(expect.arrayContaining(expected));
    }
  });

  it("reads rows by window with their searchable text, newest first", async () => {
    const store = await backend.create(TEXTS, 4);
    const rows = await store.scanMessages({ conversationIds: [1], since: null, before: null }, { by: "messageId", from: 5, to: 13 }, null);
    expect(rows.map((row) => row.messageId)).toEqual([12, 11, 10, 9, 8, 7, 6, 5]);
    expect(rows.at(-1)!.text).toBe(TEXTS[4]);
    const filtered = await store.scanMessages(
      { conversationIds: [1], since: null, before: null }, { by: "messageId", from: 1, to: 13 }, { anyOf: ["deploy"], keepNonAscii: false },
    );
    expect(filtered.map((row) => row.messageId)).toEqual([12, 8, 4]);
  });
});
