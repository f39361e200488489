import { beforeAll, describe, expect, it } from "vitest";
import { createLcmCommand } from "../../src/chat/lcm-command.js";
import type { CommandContext } from "../../src/host/openclaw-types.js";
import { SqliteStore } from "../../src/sqlite/sqlite-store.js";
import { RecordingLogger } from "../helpers/engine.js";
import { createRecallEnv, exchanges, MAIN, sessionOf, type RecallEnv } from "../helpers/recall.js";
import { insertCondensedSummary, insertLeafSummary } from "../helpers/summaries.js";

const context = (args: string, extra: Partial<CommandContext> = {}): CommandContext => ({
  agentId: "main", sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId, args, commandBody: `/lcm ${args}`, ...extra,
});

describe("/lcm", () => {
  let env: RecallEnv;

  beforeAll(async () => {
    env = createRecallEnv();
    await env.commit(MAIN, exchanges(20));
    const conversation = env.conversationId(MAIN);
    const leafA = insertLeafSummary(env.db, conversation, 1, 10, "first", { tokenCount: 50 });
    const leafB = insertLeafSummary(env.db, conversation, 11, 20, "second", { tokenCount: 40, level: "fallback" });
    insertCondensedSummary(env.db, conversation, [leafA, leafB], "both", { tokenCount: 30 });
    await new SqliteStore(env.db).setLastCompaction(conversation, {
      at: Date.now() - 5 * 60_000, trigger: "threshold", compacted: true, tokensBefore: 1_000, tokensAfter: 400, passes: 2,
    });
  });

  const run = async (args: string, extra: Partial<CommandContext> = {}) => (await env.api.command("lcm").handler(context(args, extra))).text;

  it("is registered as a command that takes arguments", () => {
    expect(env.api.command("lcm")).toMatchObject({ name: "lcm", acceptsArgs: true, description: expect.stringMatching(/status/) });
  });

  it("reports stored messages, context against budget, summaries per depth, fallbacks, last compaction and ingest", async () => {
    const text = await run("status");
    expect(text).toMatch(/^LCM status · conversation \d+ \(agent main\)/);
    expect(text).toMatch(/Stored: 40 messages · [\d,]+ tokens/);
    expect(text).toMatch(/Context: 21 items · [\d,]+ tokens \([\d,]+ raw\) · budget 128,000 \(default; no turn assembled yet\) · \d+%/);
    expect(text).toContain("Summaries: 2 at depth 0 (90 tokens), 1 at depth 1 (30 tokens) · fallback summaries: 1 (truncations written when the model failed; maintain redoes 2 a turn once a model answers, `lcm repair fallbacks --apply` all of them, and the messages they cover stay stored for recall)");
    expect(text).toMatch(/Last compaction: 5 min ago \(threshold\): 1,000 → 400 tokens in 2 passes/);
    expect(text).toMatch(/Last message stored: (just now|\d+ s ago)/);
    expect(text).toMatch(/Database: 1 conversation · 40 messages/);
  });

  it("shows the database's size and growth, and with retention off, what a cap could archive", async () => {
    const text = await run("status");
    expect(text).toMatch(/\nSize: [\d.]+ MB in use.* · growth: [\d,]+ messages? stored in the last 7 days \(≈ [\d.]+ MB at the mean size of a stored message\)\n/);
    expect(text).toMatch(/\nRetention: off\. A 30-day age cap \(retentionMaxAgeDays\) would archive ~[\d,]+ covered messages \([\d,]+ tokens\)/);
    // Two leaf summaries cover messages 1-20: all a size cap could ever archive here.
    expect(text).toMatch(/; a size cap \(retentionMaxDatabaseMb\) at most the 20 that summaries cover \([\d,]+ tokens\), oldest first\. Estimates;/);
  });

  it("with retention on, says what the next background run would archive", async () => {
    const retained = createRecallEnv({ config: { retentionMaxAgeDays: 1, retentionPruneEndedSessions: true } });
    await retained.commit(MAIN, exchanges(20)); // stamped from 2026-11-01: older than a day
    const conversation = retained.conversationId(MAIN);
    insertLeafSummary(retained.db, conversation, 1, 10, "first");
    insertLeafSummary(retained.db, conversation, 11, 30, "second");
    const status = async () => (await retained.api.command("lcm").handler(context("status"))).text;
    expect(await status()).toMatch(
      /\nRetention: on \(age cap 1 day, ended sessions archived\) · next background run \(every 10 min at most\): archives ~30 of 30 covered messages \([\d,]+ tokens\) · no archive yet\./,
    );
    // Once a run archived them, nothing is left to do, and status says when it last archived.
    retained.db.run(
      `INSERT INTO retention_archives (kind, path, created_at, conversation_id, agent_id, session_id, reason, message_count, byte_size, state)
       VALUES ('messages', '/archive.jsonl.gz', ?, ?, 'main', ?, 'age', 30, 1, 'done')`,
      Date.now() - 3 * 60_000, conversation, MAIN.sessionId,
    );
    expect(await status()).toMatch(/next background run \(every 10 min at most\): nothing to archive · last archive 3 min ago\./);
  });

  it("shows status when called without arguments", async () => {
    expect(await run("")).toMatch(/^LCM status/);
  });

  it("says when nothing is stored for the session yet", async () => {
    const fresh = sessionOf("main", "fresh");
    const text = (await env.api.command("lcm").handler({ sessionKey: fresh.sessionKey, sessionId: fresh.sessionId, args: "status", commandBody: "/lcm status" })).text;
    expect(text).toMatch(/nothing is stored for this session yet/);
  });

  it("compacts through the host's compactCurrent", async () => {
    let calls = 0;
    const compactCurrent = async () => {
      calls++;
      return { compacted: true, tokensBefore: 12_000, tokensAfter: 3_000 };
    };
    expect(await run("compact", { runtimeContext: { compactCurrent } })).toBe("Compacted: 12,000 → 3,000 tokens.");
    expect(calls).toBe(1);
    // LCM's own answer, as /compact shows it: the same words and numbers as /lcm status.
    const answered = async () => ({ compacted: true, reason: "3 summaries written; the context uses 3,000 of 9,000 tokens" });
    expect(await run("compact", { runtimeContext: { compactCurrent: answered } }))
      .toBe("Compacted: 3 summaries written; the context uses 3,000 of 9,000 tokens.");
    const nothing = async () => ({ compacted: false, reason: "already under target: the context uses 99 of 9,122 tokens; LCM compacts above 6,841" });
    expect(await run("compact", { runtimeContext: { compactCurrent: nothing } }))
      .toBe("Nothing compacted: the context uses 99 of 9,122 tokens; LCM compacts above 6,841.");
    expect(await run("compact")).toMatch(/use \/compact instead/);
  });

  it("explains its usage for an unknown subcommand", async () => {
    expect(await run("frobnicate")).toMatch(/Unknown \/lcm subcommand "frobnicate"\.\nUsage: \/lcm \[status\|compact\|doctor\]/);
  });

  it("replies with the failure instead of throwing", async () => {
    const logger = new RecordingLogger();
    const command = createLcmCommand({
      services: () => { throw new Error("database is gone"); },
      config: { databasePath: "/x/lcm.db", defaultTokenBudget: 1_000 }, clock: { now: () => 0 }, logger,
    });
    expect((await command.handler(context("status"))).text).toBe(
      "/lcm status failed: database is gone. Database: /x/lcm.db (set by plugins.entries.lcm.config.databasePath (or the " +
        'LCM_DATABASE_PATH environment variable)). Fix: look for "[lcm]" lines in the gateway log; /lcm doctor checks the stored history.',
    );
    expect(logger.errors()).toEqual(["/lcm status failed: database is gone"]);
  });
});
