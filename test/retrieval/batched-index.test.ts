/**
 * The messages' full-text index is written in batches (schema version 2; contentless since 8): storing a turn
 * does not index it, maintain indexes once a batch is waiting, and a search indexes a small backlog itself (a
 * larger one it reads directly: no-inline-backlog.test.ts).
 * Driven through the plugin: engine hooks, lcm_grep, /lcm status and /lcm doctor.
 */
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import { Database } from "../../src/sqlite/database.js";
import { MIGRATIONS, migrate } from "../../src/sqlite/migrations.js";
import { INDEX_BATCH_MESSAGES } from "../../src/engine/lcm-context-engine.js";
import type { GrepMatch } from "../../src/search/grep.js";
import { createRecallEnv, detailsOf, exchanges, MAIN, type RecallEnv } from "../helpers/recall.js";

const status = async (env: RecallEnv) =>
  (await env.api.command("lcm").handler({ agentId: "main", sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId, args: "status", commandBody: "/lcm status" })).text;
const indexed = (env: RecallEnv) => env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages_fts_docsize")!.n;
const grep = async (env: RecallEnv, pattern: string, mode: "full_text" | "regex" = "full_text") =>
  detailsOf<{ matches: GrepMatch[]; strategy?: string }>(await env.call("lcm_grep", { pattern, mode }));

describe("batched full-text index", () => {
  it("leaves a committed turn out of the index until a search needs it, and the search still finds it", async () => {
    const env = createRecallEnv();
    await env.commit(MAIN, exchanges(3, "walrus"));
    expect(indexed(env)).toBe(0);
    expect(await status(env)).toContain("6 messages waiting for the full-text index");
    const { matches } = await grep(env, "walrus2");
    expect(matches.map((match) => match.snippet)).toEqual([expect.stringContaining("walrus2"), expect.stringContaining("walrus2")]);
    expect(indexed(env)).toBe(6);
    expect(await status(env)).not.toContain("waiting for the full-text index");
  });

  it("finds the newest messages with a regex that uses the index, and never indexes a message twice", async () => {
    const env = createRecallEnv();
    await env.commit(MAIN, exchanges(2, "heron"));
    expect((await grep(env, "heron1")).matches).toHaveLength(2);
    await env.commit(MAIN, exchanges(2, "heron", 3));
    const regex = await grep(env, "explaining heron[34]", "regex");
    expect(regex.strategy).toBe("index");
    expect(regex.matches).toHaveLength(2);
    expect(indexed(env)).toBe(8);
    const doctor = await env.api.command("lcm").handler({ agentId: "main", sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId, args: "doctor all", commandBody: "/lcm doctor all" });
    expect(doctor.text).toMatch(/no problems/i);
  });

  it("indexes in maintain once a batch is waiting, not before", async () => {
    const env = createRecallEnv();
    const engine = env.api.engine();
    const small = exchanges(5, "otter");
    await engine.ingestBatch({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages: small });
    await engine.maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    expect(indexed(env)).toBe(0);
    const batch = exchanges(INDEX_BATCH_MESSAGES / 2, "otter", 6);
    await engine.ingestBatch({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages: batch });
    await engine.maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    expect(indexed(env)).toBe(small.length + batch.length);
    expect(await status(env)).not.toContain("waiting for the full-text index");
  });

  it("doctor checks the index against every message, pending ones included, and a rebuild leaves nothing pending", async () => {
    const env = createRecallEnv();
    await env.commit(MAIN, exchanges(4, "ibis"));
    const run = (args: string) =>
      env.api.command("lcm").handler({ agentId: "main", sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId, args, commandBody: `/lcm ${args}` });
    expect((await run("doctor all")).text).toMatch(/no problems/i);
    // The index loses its rows but not its watermark: it now claims messages it does not hold.
    env.db.run("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
    expect((await run("doctor all")).text).toMatch(/messages_fts/);
    await run("doctor all repair");
    expect((await run("doctor all")).text).toMatch(/no problems/i);
    expect(indexed(env)).toBe(8);
    expect((await grep(env, "ibis3")).matches).toHaveLength(2);
  });

  it("upgrades a version-7 file: the index starts over, a search still finds every message, then maintain indexes it", async () => {
    const env = createRecallEnv();
    const path = `${env.databasePath}.v7.db`;
    const v7 = new Database(path);
    v7.raw.exec("PRAGMA journal_mode = WAL");
    migrate(v7, MIGRATIONS.filter((migration) => migration.version <= 7));
    v7.run("INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at) VALUES ('main', ?, ?, 1, 1)", MAIN.sessionId, MAIN.sessionKey);
    for (const [seq, text] of ["kestrel one", "kestrel two"].entries()) {
      v7.run(
        "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (1, ?, 'user', ?, 2, 1, ?)",
        seq + 1, text, `fp:${seq}`,
      );
    }
    v7.run("INSERT INTO messages_fts (rowid, content) SELECT message_id, content FROM messages"); // as version 7 indexed it
    v7.run("UPDATE search_index_state SET through = 2 WHERE name = 'messages_fts'");
    v7.close();
    const upgraded = openDatabase(path);
    expect(upgraded.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = 'messages_fts'")!.through).toBe(0);
    expect(upgraded.get<{ v: number }>("SELECT v FROM messages_fts_config WHERE k = 'automerge'")!.v).toBe(0);
    upgraded.close();
    const raw = new DatabaseSync(path);
    expect((raw.prepare("SELECT count(*) AS n FROM messages_fts_docsize").get() as { n: number }).n).toBe(0);
    raw.close();
  });
});
