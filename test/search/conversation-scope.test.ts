/**
 * Conversation tokens in the full-text indexes (schema 20, src/sqlite/search-scope.ts): a search within a conversation
 * ANDs its MATCH with the conversation's token for rows indexed since the upgrade, and reads the rows indexed before
 * it without the token. Driven through the plugin (lcm_grep, /lcm doctor) on a file made at schema 19.
 */
import { describe, expect, it } from "vitest";
import { Database } from "../../src/sqlite/database.js";
import { MIGRATIONS, migrate } from "../../src/sqlite/migrations.js";
import { analyzeDocument } from "../../src/text/text-analysis.js";
import type { GrepMatch } from "../../src/search/grep.js";
import { createRecallEnv, detailsOf, MAIN, type RecallEnv, sessionOf } from "../helpers/recall.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { insertLeafSummary } from "../helpers/summaries.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

const SIDE = sessionOf("main", "side");

/** A schema-19 file: MAIN and SIDE each with three messages and a summary, all indexed as version 19 indexed them. */
function schema19File(): string {
  const path = tempDatabasePath();
  const db = new Database(path);
  db.raw.exec("PRAGMA journal_mode = WAL");
  migrate(db, MIGRATIONS.filter((migration) => migration.version <= 19));
  for (const session of [MAIN, SIDE]) {
    db.run(
      "INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, next_seq, next_ordinal) VALUES ('main', ?, ?, 1, 1, 4, 4)",
      session.sessionId, session.sessionKey,
    );
  }
  const texts: [conversation: number, text: string][] = [
    [1, "kestrel before upgrade in main one"], [2, "kestrel before upgrade in side one"], [1, "kestrel before upgrade in main two"],
    [2, "kestrel before upgrade in side two"], [1, "kestrel before upgrade in main three"], [2, "kestrel before upgrade in side three"],
  ];
  const seq = new Map<number, number>();
  for (const [conversation, text] of texts) {
    const next = (seq.get(conversation) ?? 0) + 1;
    seq.set(conversation, next);
    const { lastInsertRowid } = db.run(
      "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (?, ?, 'user', ?, 6, ?, ?)",
      conversation, next, text, 1_000 + next, `fp:${conversation}:${next}`,
    );
    db.run("INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) VALUES (?, ?, ?, 6)", conversation, next, lastInsertRowid);
  }
  insertLeafSummary(db, 1, 1, 3, "osprey summary of main before upgrade");
  insertLeafSummary(db, 2, 1, 3, "osprey summary of side before upgrade");
  // Version 19 indexed the words and their fragments, and nothing else.
  for (const [table, source] of [["messages_fts", "SELECT message_id AS id, content FROM messages"], ["summaries_fts", "SELECT id, content FROM summaries"]]) {
    for (const row of db.all<{ id: number; content: string }>(source!)) {
      const document = analyzeDocument(row.content);
      db.run(`INSERT INTO ${table} (rowid, words, derived) VALUES (?, ?, ?)`, row.id, document.words, document.derived);
    }
    db.run(`UPDATE search_index_state SET through = (SELECT max(rowid) FROM ${table}_docsize) WHERE name = ?`, table!);
  }
  db.close();
  return path;
}

const grep = async (env: RecallEnv, params: Record<string, unknown>) =>
  detailsOf<{ matches: GrepMatch[] }>(await env.call("lcm_grep", { mode: "full_text", sort: "recency", ...params })).matches;
const snippets = (matches: GrepMatch[]) => matches.map((match) => match.snippet.replace(/[«»]/g, "")).sort();
const scopedFrom = (env: RecallEnv, table: string) =>
  env.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = ?", `${table}_scoped`)!.through;

describe("conversation tokens in the full-text indexes", () => {
  it("finds a conversation's rows indexed before the upgrade and after it, never another's, and again after a rebuild", async () => {
    const env = createRecallEnv({ databasePath: schema19File() });
    // The upgrade starts the tokens at the next row indexed: rows 1-6 and summaries 1-2 have none.
    expect(scopedFrom(env, "messages_fts")).toBe(7);
    expect(scopedFrom(env, "summaries_fts")).toBe(3);
    await env.commit(MAIN, [userMessage("kestrel after upgrade in main"), assistantMessage("noted, kestrel in main")]);
    // The side conversation is busier: the main one holds under 5% of the rows, so regexes read through the tokens too.
    const filler = Array.from({ length: 100 }, (_, index) => userMessage(`kestrel side filler ${index}`));
    await env.commit(SIDE, [userMessage("kestrel after upgrade in side"), assistantMessage("noted, kestrel in side"), ...filler]);
    insertLeafSummary(env.db, env.conversationId(MAIN), 4, 5, "osprey summary of main after upgrade");
    insertLeafSummary(env.db, env.conversationId(SIDE), 4, 5, "osprey summary of side after upgrade");

    const expected = {
      kestrel: [
        "kestrel after upgrade in main", "kestrel before upgrade in main one", "kestrel before upgrade in main three",
        "kestrel before upgrade in main two", "noted, kestrel in main",
      ],
      osprey: ["osprey summary of main after upgrade", "osprey summary of main before upgrade"],
    };
    // Each row indexed since carries its conversation's token, and only those.
    const tokened = (table: string, session: typeof MAIN) =>
      env.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`, `derived : "§c${env.conversationId(session)}"`)!.n;
    await grep(env, { pattern: "kestrel" });
    expect([tokened("messages_fts", MAIN), tokened("messages_fts", SIDE), tokened("summaries_fts", MAIN)]).toEqual([2, 102, 1]);
    const found = async (pattern: string) => snippets(await grep(env, { pattern }));
    expect(await found("kestrel")).toEqual(expected.kestrel);
    expect(await found("osprey")).toEqual(expected.osprey);
    // A regex reads the index's candidates a page at a time: through the tokens, then below them without.
    const regex = async (pattern: string) => snippets(await grep(env, { pattern, mode: "regex" }));
    expect(await regex("kestrel (before|after) upgrade in \\w+")).toEqual(expected.kestrel.filter((text) => text.includes("upgrade")));
    expect(await regex("osprey summary of \\w+")).toEqual(expected.osprey);
    expect((await grep(env, { pattern: "kestrel", allConversations: true })).length).toBe(50);
    expect((await grep(env, { pattern: "osprey", allConversations: true })).length).toBe(4);

    const doctor = (args: string) =>
      env.api.command("lcm").handler({ agentId: "main", sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId, args, commandBody: `/lcm ${args}` });
    // An index that lost its rows is rebuilt, every row with its conversation's token.
    env.db.run("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
    expect((await doctor("doctor all")).text).toMatch(/messages_fts/);
    await doctor("doctor all repair");
    expect(scopedFrom(env, "messages_fts")).toBe(1);
    expect(scopedFrom(env, "summaries_fts")).toBe(1);
    expect(await found("kestrel")).toEqual(expected.kestrel);
    expect(await found("osprey")).toEqual(expected.osprey);
  });

  it("never lets a query reach a conversation's token", async () => {
    const env = createRecallEnv();
    await env.commit(MAIN, [userMessage("plain words only"), assistantMessage("more plain words")]);
    const conversation = env.conversationId(MAIN);
    for (const pattern of [`§c${conversation}`, `c${conversation}`, "§c*", `"§c${conversation}"`]) {
      expect(await grep(env, { pattern }), pattern).toEqual([]);
      expect(await grep(env, { pattern, sort: "relevance" }), pattern).toEqual([]);
    }
    expect((await grep(env, { pattern: "plain" })).length).toBe(2);
  });

  it("reads a window's matches past the first chunk when the conversation filter drops them", async () => {
    const env = createRecallEnv();
    // The main conversation holds most messages and one "heron", the oldest; the side one's 300 are newer.
    // The word is rare enough that the filter, not the token, keeps the main conversation's (search-scope.ts), and
    // the ids come a chunk at a time from the newest (fts-window.ts): the match is in the third chunk.
    await env.commit(MAIN, [userMessage("the heron nests by the main lake"), ...Array.from({ length: 1_499 }, (_, index) => userMessage(`main note ${index}`))]);
    await env.commit(SIDE, [
      ...Array.from({ length: 300 }, (_, index) => userMessage(`side heron sighting ${index}`)),
    ]);
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages_fts_docsize")!.n).toBe(1_800);
    for (const sort of ["recency", "relevance"]) {
      expect(snippets(await grep(env, { pattern: "heron", sort })), sort).toEqual(["the heron nests by the main lake"]);
    }
    expect((await grep(env, { pattern: "heron", allConversations: true })).length).toBe(50);
  });
});
