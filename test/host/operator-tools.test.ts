/**
 * The operators' tools in the real host (issues 17 and 25): `openclaw lcm status` and `conversations` against the
 * running gateway's database (named by OpenClaw's own config; the CLI process says the spend guard's count is the
 * gateway's), the `lcm.status` gateway RPC (the count; a note for a session with no conversation), and the Prometheus
 * metrics route, whose compaction counters move after a /compact and which follows `openclaw config set …
 * metricsEnabled` from the next request.
 *
 * Tuned compaction settings, on purpose: the CLI, the RPC and the metrics are checked on a conversation that has
 * summaries after three short turns. What they report does not depend on the sizes; the defaults' compaction in a real
 * gateway is default-config.test.ts and small-windows.test.ts (issue 31).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConversationsOutputSchema, StatusOutputSchema } from "../../src/cli/output-schemas.js";
import type { ConversationsOutput } from "../../src/cli/commands/conversations-command.js";
import type { StatusOutput } from "../../src/cli/commands/status-command.js";
import type { StatusSnapshot } from "../../src/services/status-service.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";
import { parseJsonOutput } from "./harness/openclaw-cli.js";
import { launchChromium } from "../browser/browser.js";

const PLUGIN_CONFIG = {
  freshTailCount: 4,
  leafChunkTokens: 256,
  leafMinFanout: 2,
  leafTargetTokens: 64,
  condensedTargetTokens: 96,
  metricsEnabled: true,
};

/** The sum of a metric's samples whose line matches `filter` (all samples when none is given). */
function metricSum(text: string, name: string, filter: RegExp = /./): number {
  return text.split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => filter.test(line))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

describe("operators' tools in a running gateway", () => {
  let suite: HostSuite;
  let session: HostConversation;
  let gateway: { port: number; token: string };

  const metrics = async (token: string | null = gateway.token) => {
    const response = await fetch(`http://127.0.0.1:${gateway.port}/lcm/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return { status: response.status, text: await response.text() };
  };

  beforeAll(async () => {
    suite = await HostSuite.create({ name: "operator-tools", pluginConfig: PLUGIN_CONFIG });
    const config = JSON.parse(readFileSync(join(suite.home, ".openclaw", "openclaw.json"), "utf8")) as { gateway: { port: number; auth: { token: string } } };
    gateway = { port: config.gateway.port, token: config.gateway.auth.token };
    session = new HostConversation(suite, "agent:main:operator");
    await suite.gateway.start();
    await session.say(`operator turn 1: ${fillerText(300, "operator-1")}`);
    await session.say(`operator turn 2: ${fillerText(300, "operator-2")}`);
  });

  afterAll(async () => {
    await suite?.dispose();
  });

  // Each `openclaw lcm` call pays OpenClaw's start and its two loads of the plugin: 80-120 s apiece at load average 12
  // on the shared 2-core machine (docs/operations.md, the CLI's "How fast"), hence the deadlines.
  it("answers `openclaw lcm status` and `conversations` on the gateway's database while it runs", async () => {
    const slow = { timeoutMs: 240_000 };
    const status = await suite.cli.json<StatusOutput>(["lcm", "status", "--json"], slow);
    expect([...Value.Errors(StatusOutputSchema, status)].map((error) => `${error.path}: ${error.message}`)).toEqual([]);
    expect(status).toMatchObject({ databasePath: suite.database.location, databasePathSource: "openclaw-config" });
    const stored = (await suite.database.messages(session.sessionKey)).length;
    expect(status.status.totals.messages).toBeGreaterThanOrEqual(stored);

    const listed = await suite.cli.json<ConversationsOutput>(["lcm", "conversations", "--json"], slow);
    expect([...Value.Errors(ConversationsOutputSchema, listed)].map((error) => `${error.path}: ${error.message}`)).toEqual([]);
    const row = listed.conversations.find((conversation) => conversation.sessionKey === session.sessionKey);
    expect(row).toMatchObject({ agentId: "main", messages: stored });

    const text = await suite.cli.runOk(["lcm", "status", String(row!.conversationId)], slow);
    expect(text.stdout).toMatch(new RegExp(`LCM status · conversation ${row!.conversationId} \\(agent main\\)`));
    // The CLI runs in a process of its own: the spend guard's count is the gateway's, and it says so.
    expect(text.stdout).toMatch(/\nSpend guard: at most 100 summarizer model calls per 60 min; the count is not visible here: /);
    const missing = await suite.cli.run(["lcm", "status", "99999", "--json"], slow);
    expect(missing.code).toBe(3);
    expect(parseJsonOutput<{ error: { code: string } }>(missing)).toMatchObject({ error: { code: "notFound" } });
    expect((await suite.cli.run(["lcm", "frobnicate"], slow)).code).toBe(2);
  }, 1_200_000);

  it("answers the lcm.status RPC with what /lcm status shows, as data", async () => {
    const snapshot = await suite.cli.gatewayCall<StatusSnapshot>("lcm.status", { sessionKey: session.sessionKey });
    expect(Value.Check(StatusOutputSchema.properties.status, snapshot)).toBe(true);
    expect(snapshot.conversation).toMatchObject({ agentId: "main", sessionKey: session.sessionKey, messages: (await suite.database.messages(session.sessionKey)).length });
    expect(snapshot.databasePath).toBe(suite.database.location);
    expect(snapshot.conversation!.spendGuard).toMatchObject({ visible: true, maxCalls: 100 });
    const unknown = await suite.cli.gatewayCall<StatusSnapshot>("lcm.status", { sessionKey: "agent:main:never-used" });
    expect(unknown).toMatchObject({ conversation: null });
    expect(unknown.note).toMatch(/^No conversation is stored for session key "agent:main:never-used" \(agent main\)\./);
  });

  it("serves the inspector's Control UI route behind the gateway's auth: the page, its read-only API on the gateway's database", async () => {
    const get = async (path: string, init: RequestInit = {}, token: string | null = gateway.token) => {
      const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as Record<string, string> | undefined) };
      const response = await fetch(`http://127.0.0.1:${gateway.port}/lcm/inspector/${path}`, { ...init, headers });
      return { status: response.status, text: await response.text() };
    };
    expect((await get("", {}, null)).status).toBe(401);
    const page = await get("");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<script type="application/json" id="lcm-page-data">'); // the view's data inside the page
    expect(page.text).not.toMatch(/<script[^>]+src=/);
    const overview = await get("api/overview");
    expect(overview.status).toBe(200);
    const body = JSON.parse(overview.text) as { databasePath: string; readOnly: boolean; conversations: { sessionKey: string; messages: number }[] };
    expect(body.databasePath).toBe(suite.database.location);
    expect(body.readOnly).toBe(true);
    expect(body.conversations.find((conversation) => conversation.sessionKey === "agent:main:operator")?.messages).toBeGreaterThanOrEqual(4);
    const repair = await get("api/repairs/propose", {
      method: "POST", headers: { "x-lcm-inspector": "1", "content-type": "application/json" }, body: JSON.stringify({ kind: "rewrite", summaryId: "sum_x", content: "x" }),
    });
    expect(repair.status).toBeGreaterThanOrEqual(400); // the tab is read-only: repairs run from the CLI
  });

  it("shows the LCM memory tab in OpenClaw's Control UI, in a real Chromium: the stored conversation, its DAG, a view changed in the frame", async () => {
    // As an operator opens it: the Control UI's generic plugin-tab address, the gateway token in the fragment (a
    // loopback browser is paired on its first connection). OpenClaw mounts the tab's route in a frame sandboxed with
    // allow-scripts alone (an opaque origin), authorized by a short-lived cookie grant for GET and HEAD. The page reads
    // nothing by script there: each view is a navigation of the frame, served with its data inside (spec 027).
    const browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const reads: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname.startsWith("/lcm/inspector/") && !request.isNavigationRequest()) reads.push(request.url());
    });
    try {
      await page.goto(`http://127.0.0.1:${gateway.port}/plugin?plugin=lcm&id=lcm-inspector#token=${gateway.token}`);
      const element = await page.waitForSelector("iframe[src*='/lcm/inspector/']", { timeout: 120_000 });
      expect(await element.getAttribute("sandbox")).toBe("allow-scripts");
      const frame = (await element.contentFrame())!;
      await frame.waitForSelector("body[data-ready='true']", { timeout: 120_000 });
      expect(await frame.evaluate(() => window.origin)).toBe("null");
      const listed = await frame.textContent("#conversations");
      expect(listed).toContain("agent:main:operator");
      // Pick the operator's conversation (a navigation of the frame, which must carry the grant) and check its DAG.
      const conversationId = (await suite.database.conversations("agent:main:operator")).at(-1)!.conversationId;
      await frame.click(`button.conversation[data-conversation='${conversationId}']`);
      await frame.waitForFunction((id) => location.search.includes(`c=${id}`) && document.body.getAttribute("data-ready") === "true", conversationId, { timeout: 60_000 });
      const summaries = (await suite.database.summaries("agent:main:operator")).filter((summary) => summary.conversationId === conversationId);
      expect(await frame.getAttribute("#dag", "data-node-count")).toBe(String(summaries.length));
      await frame.click("button[data-tab='context']");
      await frame.waitForFunction(() => location.search.includes("tab=context") && document.body.getAttribute("data-ready") === "true", undefined, { timeout: 60_000 });
      expect(await frame.locator("#context-items tr").count()).toBeGreaterThan(1);
      expect(reads).toEqual([]);
      await page.screenshot({ path: join(suite.dir, "control-ui-tab.png") });
    } finally {
      await browser.close();
    }
  });

  it("serves Prometheus metrics behind the gateway's auth, and they move after a compaction", async () => {
    expect((await metrics(null)).status).toBe(401);
    const before = await metrics();
    expect(before.status).toBe(200);
    for (const name of ["lcm_context_tokens_total", "lcm_compaction_runs_total", "lcm_summaries_created_total", "lcm_hook_event_loop_block_max_ms", "lcm_database_size_bytes"]) {
      expect(before.text).toContain(`# TYPE ${name} `);
    }
    expect(metricSum(before.text, "lcm_hook_duration_ms_count", /hook="commitTurn"/)).toBeGreaterThan(0);
    const runsBefore = metricSum(before.text, "lcm_compaction_runs_total", /trigger="compact:threshold"/);
    const summariesBefore = metricSum(before.text, "lcm_summaries_created_total");

    await session.say(`operator turn 3: ${fillerText(300, "operator-3")}`);
    await session.sendChat("/compact keep the operator turns");
    expect((await suite.database.conversations(session.sessionKey))[0]?.lastCompaction).toMatchObject({ trigger: "compact:threshold" });

    const after = await metrics();
    expect(metricSum(after.text, "lcm_compaction_runs_total", /trigger="compact:threshold"/)).toBe(runsBefore + 1);
    expect(metricSum(after.text, "lcm_summaries_created_total")).toBeGreaterThan(summariesBefore);
    expect(metricSum(after.text, "lcm_summarizer_calls_total")).toBeGreaterThan(0);
    expect(suite.healthProblems()).toEqual([]);
  });

  it("follows metricsEnabled changed while the gateway runs, from the next request", async () => {
    /** Asks until the answer has `status` (OpenClaw applies a config change a moment after `config set` returns). */
    const until = async (status: number) => {
      let last = await metrics();
      for (let attempt = 0; attempt < 60 && last.status !== status; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        last = await metrics();
      }
      return last;
    };
    await suite.cli.runOk(["config", "set", "plugins.entries.lcm.config.metricsEnabled", "false"]);
    const off = await until(404);
    expect(off.status).toBe(404);
    expect(off.text).toMatch(/^LCM metrics are off\. Turn them on with `openclaw config set plugins\.entries\.lcm\.config\.metricsEnabled true`/);
    await suite.cli.runOk(["config", "set", "plugins.entries.lcm.config.metricsEnabled", "true"]);
    const on = await until(200);
    expect(on.status).toBe(200);
    expect(on.text).toContain("# TYPE lcm_compaction_runs_total ");
    expect(suite.healthProblems()).toEqual([]);
  });
});
