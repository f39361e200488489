/**
 * The term dictionary (schema version 3, written with the index since 8): a regex whose required word may end a longer one ("INC" in
 * `INC-\d{6}-Z`, which "XINC-123456-Z" matches) is answered from the full-text index through the index terms
 * that end with that word, and finds exactly what running the regex over every message finds. Driven through
 * lcm_grep, the engine's maintain and /lcm doctor.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { Database } from "../../src/sqlite/database.js";
import { MIGRATIONS, migrate } from "../../src/sqlite/migrations.js";
import type { GrepMatch } from "../../src/search/grep.js";
import plugin from "../../index.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { seededRandom } from "../helpers/agent-session.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN } from "../helpers/recall.js";
import { tempDir } from "../helpers/temp-dir.js";

type GrepDetails = { matches: GrepMatch[]; strategy?: string; truncated?: boolean };
const regexGrep = async (call: (name: string, params: unknown) => Promise<{ details: unknown }>, pattern: string) =>
  detailsOf<GrepDetails>(await call("lcm_grep", { pattern, mode: "regex", limit: 200 }));
const ids = (details: GrepDetails) => details.matches.map((match) => match.id).sort((a, b) => Number(a) - Number(b));

describe("regex through the term dictionary", () => {
  it("finds a word that ends a longer one, whatever script comes before it, from the index", async () => {
    const env = createRecallEnv();
    await env.commit(MAIN, [
      userMessage("incident XINC-123456-Z opened"),
      assistantMessage("see ÉINC-222222-Z and inc-333333-z"),
      userMessage("INC 444444 Z is spaced out, ZINC-55555-Z has five digits"),
      assistantMessage("plain INC-666666-Z"),
      userMessage("Greek λINC-777777-Z too"),
    ]);
    const found = await regexGrep(env.call, String.raw`INC-\d{6}-Z`);
    expect(found.strategy).toBe("index");
    expect(found.matches.map((match) => match.snippet)).toEqual([
      expect.stringContaining("λ«INC-777777-Z»"),
      expect.stringContaining("«INC-666666-Z»"),
      expect.stringContaining("É«INC-222222-Z»"),
      expect.stringContaining("X«INC-123456-Z»"),
    ]);
    // No index term ends with the word: nothing can match, and the index says so without reading any message.
    const none = await regexGrep(env.call, String.raw`QQZX-\d+`);
    expect(none).toMatchObject({ strategy: "index", matches: [] });
  });

  it("finds the same messages as the regex run over every stored message", async () => {
    const env = createRecallEnv();
    const random = seededRandom(7);
    const syllables = ["ka", "ri", "mon", "tel", "ax", "zu", "inc", "dor", "pe", "lo", "é", "ß"];
    const word = () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * syllables.length)]).join("");
    const separators = ["-", ".", " ", "_", "/", ":"];
    const text = () =>
      Array.from({ length: 12 }, () => word() + separators[Math.floor(random() * separators.length)] + (random() < 0.3 ? String(Math.floor(random() * 1_000)) : ""))
        .join(" ");
    for (let turn = 0; turn < 20; turn++) {
      await env.commit(MAIN, Array.from({ length: 10 }, (_, index) => (index % 2 ? assistantMessage(text()) : userMessage(text()))));
    }
    const stored = env.db.all<{ message_id: number; content: string }>("SELECT message_id, content FROM messages");
    const patterns = ["inc-\\d", "dor\\.", "telax_", "monzu/\\d+", "ka:", "rié-", "peloß ", "axinc-[0-9]{2}"];
    let viaIndex = 0;
    for (const pattern of patterns) {
      const regex = new RegExp(pattern, "i");
      const expected = stored.filter((row) => regex.test(row.content)).map((row) => row.message_id).sort((a, b) => a - b);
      const found = await regexGrep(env.call, pattern);
      expect(found.truncated ?? false).toBe(false);
      expect(ids(found), pattern).toEqual(expected.slice(-200));
      if (found.strategy === "index") viaIndex++;
    }
    // Most of these patterns start inside a word, so only the dictionary lets the index answer them.
    expect(viaIndex).toBeGreaterThanOrEqual(5);
  });
});

describe("a dictionary written with the index", () => {
  it("after a large import, reads the messages not indexed yet directly, and finds the same once maintenance indexed them", async () => {
    const env = createRecallEnv();
    // 1,500 messages: more than a search indexes itself.
    await env.commit(MAIN, Array.from({ length: 1_500 }, (_, index) => userMessage(`entry ${index}: X${index % 100 ? "OUT" : "INC"}-${100_000 + index}-Z`)));
    const before = await regexGrep(env.call, String.raw`INC-\d{6}-Z`);
    expect(before.matches).toHaveLength(15);
    expect(before.truncated).toBe(false);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages_fts_docsize")!.n).toBe(0);
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM search_terms WHERE term = 'xinc'")!.n).toBe(1);
    const after = await regexGrep(env.call, String.raw`INC-\d{6}-Z`);
    expect(after.strategy).toBe("index");
    expect(ids(after)).toEqual(ids(before));
  });
});

describe("a file from schema version 2", () => {
  function versionTwoFile(texts: string[]): string {
    const path = join(tempDir(), "v2.db");
    const v2 = new Database(path);
    v2.raw.exec("PRAGMA journal_mode = WAL");
    migrate(v2, MIGRATIONS.slice(0, 2));
    v2.run("INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at) VALUES ('main', ?, ?, 1, 1)", MAIN.sessionId, MAIN.sessionKey);
    texts.forEach((text, index) =>
      v2.run(
        "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (1, ?, 'user', ?, 4, 1, ?)",
        index + 1, text, `fp:${index}`,
      ),
    );
    v2.run("INSERT INTO messages_fts (rowid, content) SELECT message_id, content FROM messages");
    v2.run("UPDATE search_index_state SET through = (SELECT max(message_id) FROM messages)");
    v2.close();
    return path;
  }

  it("starts the index over on upgrade, finds every match meanwhile, then through the index, and again after a rebuild", async () => {
    const texts = Array.from({ length: 1_200 }, (_, index) => `note ${index} about the X${index % 24 ? "OUT" : "INC"}-${100_000 + index}-Z ticket`);
    const path = versionTwoFile(texts);
    const api = new FakePluginApi({ databasePath: path });
    plugin.register(api);
    const call = (name: string, params: unknown) =>
      api.tool(name, { agentId: MAIN.agentId, sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId }).execute("call-1", params);
    const pattern = String.raw`INC-\d{6}-Z`;

    const before = await regexGrep(call, pattern);
    expect(before.matches).toHaveLength(50);
    const engine = api.engine();
    await engine.maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    const after = await regexGrep(call, pattern);
    expect(after.strategy).toBe("index");
    expect(ids(after)).toEqual(ids(before));

    // A rebuild by /lcm doctor starts the index and its dictionary over; meanwhile the rows are read directly.
    const doctor = (args: string) =>
      api.command("lcm").handler({ agentId: "main", sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId, args, commandBody: `/lcm ${args}` });
    openSharedDatabase(path).run("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
    await doctor("doctor all repair");
    expect(ids(await regexGrep(call, pattern))).toEqual(ids(before));
    await engine.maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    const rebuilt = await regexGrep(call, pattern);
    expect(rebuilt.strategy).toBe("index");
    expect(ids(rebuilt)).toEqual(ids(before));
  });
});
