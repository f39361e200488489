/**
 * Backfill on the real host (issue 24): a gateway on OpenClaw's own engine (LCM installed, not selected) chats in two
 * sessions, one message holding a line separator; OpenClaw 2026.9.6 keeps them in its agent database. The `lcm` bin's
 * dry run (the file read-only) and `openclaw lcm import openclaw --apply` (the host's own reader) find every session;
 * every turn is stored exactly once, and a second run by the other reader stores nothing. Then LCM is selected
 * (config change, restart) and the next turn's model request carries the backfilled history.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allTextOf } from "./fake-model-script.js";
import { HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";
import { hostEnv, parseJsonOutput } from "./harness/openclaw-cli.js";
import { PLUGIN_STAGE_DIR } from "./harness/paths.js";

interface ImportOutput {
  dryRun: boolean;
  reader: string | null;
  sessions: number;
  importedMessages: number;
  byStatus: Record<string, number>;
  results: { sessionKey: string | null; status: string; imported: number; note: string | null }[];
  unread: unknown[];
}

describe("lcm import openclaw against OpenClaw 2026.9.6's own store", () => {
  let suite: HostSuite;
  let first: HostConversation;
  let second: HostConversation;

  beforeAll(async () => {
    suite = await HostSuite.create({ name: "backfill", contextEngine: "legacy" });
    first = new HostConversation(suite, "agent:main:before-lcm");
    second = new HostConversation(suite, "agent:main:before-lcm-2");
    await suite.gateway.start();
  });

  afterAll(async () => {
    await suite?.dispose();
  });

  /** The standalone `lcm` bin of the staged plugin, outside OpenClaw: it reads OpenClaw's agent database read-only. */
  function lcmBin(args: string[]): ImportOutput {
    const result = spawnSync(process.execPath, [join(PLUGIN_STAGE_DIR, "dist", "src", "cli", "bin.js"), ...args, "--json"], {
      env: hostEnv(suite.home), encoding: "utf8", timeout: 240_000,
    });
    expect(result.status, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as ImportOutput;
  }

  /** The database the bin writes: the suite's file, or its PostgreSQL database. */
  function databaseArguments(): string[] {
    return suite.database.url === null ? ["--db", suite.database.path] : ["--database-url", suite.database.url];
  }

  it("chats on OpenClaw's own engine: LCM stores nothing", async () => {
    await first.say("before lcm turn 1: the harbour code is 7741");
    await first.say("before lcm turn 2: a line\u2028separator and a paragraph\u2029separator");
    await first.say("before lcm turn 3: remember the harbour");
    await second.say("a second session before lcm");
    // OpenClaw's engine served them: LCM stored nothing (its database may not even exist yet).
    expect(await suite.database.exists() ? await suite.database.messages(first.sessionKey) : []).toEqual([]);
  }, 600_000);

  it("the lcm bin's dry run reads OpenClaw's agent database while the gateway runs", () => {
    const plan = lcmBin(["import", "openclaw", "--state-dir", join(suite.home, ".openclaw"), ...databaseArguments()]);
    // Two sessions of three and one turns: eight messages.
    expect(plan).toMatchObject({ dryRun: true, reader: "agent-database", importedMessages: 8, byStatus: { imported: 2, failed: 0, unavailable: 0 } });
  });

  it("openclaw lcm import openclaw --apply stores every turn exactly once, through the host's own reader", async () => {
    const applied = parseJsonOutput<ImportOutput>(await suite.cli.runOk(["lcm", "import", "openclaw", "--apply", "--json"], { timeoutMs: 300_000 }));
    expect(applied).toMatchObject({ dryRun: false, reader: "host", importedMessages: 8, byStatus: { imported: 2, failed: 0, unavailable: 0 } });
    await first.expectStoredExactlyOnce();
    await second.expectStoredExactlyOnce();
    expect((await suite.database.messages(first.sessionKey))[2]!.content).toContain("a line\u2028separator and a paragraph\u2029separator");
  }, 600_000);

  it("the other reader finds the same identities: a second run stores nothing", async () => {
    const again = lcmBin(["import", "openclaw", "--state-dir", join(suite.home, ".openclaw"), ...databaseArguments(), "--apply"]);
    expect(again).toMatchObject({ reader: "agent-database", importedMessages: 0, byStatus: { "up-to-date": 2 } });
    await first.expectStoredExactlyOnce();
  }, 600_000);

  it("once LCM is selected, the next turn's model request carries the backfilled history", async () => {
    suite.reconfigure({ contextEngine: "lcm" });
    await suite.gateway.restart();
    const turn = await first.say("after lcm: what was the harbour code?");
    const request = turn.requests.find((candidate) => candidate.kind === "agent");
    expect(request).toBeDefined();
    const seen = allTextOf(request!.body);
    expect(seen).toContain("the harbour code is 7741");
    expect(seen).toContain("a line\u2028separator");
    // Bootstrap continued from the backfill's cursor: the new turn is stored once, after the backfilled ones.
    await first.expectStoredExactlyOnce();
    expect(suite.healthProblems()).toEqual([]);
  }, 900_000);
});
