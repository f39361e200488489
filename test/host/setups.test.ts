/**
 * The plugin in ordinary OpenClaw setups (issue 16), in one real gateway serving four agents with different tool
 * policies: no profile (OpenClaw's default), `coding`, `messaging` and `full`, with OpenClaw's default Tool Search and
 * nothing allowed by name. Shown on what the model received, the plugin's database and OpenClaw's log:
 * - the recall tools are offered under each profile (the manifest contributes them: toolMetadata.<tool>.profiles);
 * - after `/new` (sent as users send it, `openclaw agent --message /new`) the model starts fresh, and a question about
 *   the earlier session is answered through lcm_grep;
 * - `/lcm status`, `/lcm doctor` and their answers never reach a later request;
 * - a cron-like session is served but not stored; a deleted session's conversation is marked ended.
 *
 * Tuned compaction settings, on purpose: `/new` must carry summaries over, which needs summaries within a few turns.
 * The tool profiles on the defaults: small-windows.test.ts runs the coding profile at 16k on the plugin's defaults
 * (issue 31), where OpenClaw's own prompt and tools leave history nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_PROMPT_ADDITION } from "../../src/assembly/system-prompt.js";
import { allTextOf, callToolMarker, textOf, toolNamesOf } from "./fake-model-script.js";
import type { RecordedRequest } from "./fake-model-server.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";

/** Large enough for the unfiltered tool set and system prompt of the default profile. */
const CONTEXT_WINDOW = 200_000;
const RECALL_TOOLS = ["lcm_grep", "lcm_describe", "lcm_expand_query"];
const PROFILES: Record<string, string | undefined> = { main: undefined, coder: "coding", chat: "messaging", power: "full" };
const EARLIER_FACT = "the deploy token is ZEBRA-7731";

function agentRequests(requests: RecordedRequest[]): RecordedRequest[] {
  return requests.filter((request) => request.kind === "agent");
}

describe("LCM in ordinary OpenClaw setups", () => {
  let suite: HostSuite;

  beforeAll(async () => {
    suite = await HostSuite.create({
      name: "setups",
      contextWindow: CONTEXT_WINDOW,
      // OpenClaw's defaults: no tool profile, Tool Search on, nothing allowed by name.
      tools: {},
      agentEntries: Object.fromEntries(Object.entries(PROFILES).map(([agent, profile]) =>
        [agent, profile ? { tools: { profile } } : {}])),
      // Summaries come within a few turns even in a 200k window (a leaf chunk is at most half the budget).
      pluginConfig: { freshTailCount: 4, leafChunkTokens: 256, leafMinFanout: 2, leafTargetTokens: 64, condensedTargetTokens: 96 },
    });
    await suite.gateway.start();
  });

  afterAll(async () => {
    await suite?.dispose();
  });

  it.each(Object.entries(PROFILES))("offers the recall tools to agent %s (tool profile %s) without any allow rule", async (agent) => {
    const turn = await new HostConversation(suite, `agent:${agent}:profiles`).say("which tools do you have?");
    const [request] = agentRequests(turn.requests);
    const offered = toolNamesOf(request!.body);
    for (const tool of RECALL_TOOLS) expect(offered).toContain(tool);
    // lcm_expand exists only inside lcm_expand_query's helper sessions.
    expect(offered).not.toContain("lcm_expand");
    expect(allTextOf(request!.body)).toContain(SYSTEM_PROMPT_ADDITION.split("\n")[0]!);
  });

  describe("/new", () => {
    const session = () => new HostConversation(suite, "agent:main:renewed");
    let conversation: HostConversation;
    const earlierTexts: string[] = [];

    beforeAll(() => {
      conversation = session();
    });

    it("starts the model fresh: the first request after /new holds none of the earlier turns, at most carried summaries", async () => {
      const first = `earlier session: ${EARLIER_FACT}. ${fillerText(300, "renew-1")}`;
      await conversation.say(first);
      earlierTexts.push(first);
      for (let turn = 2; turn <= 6; turn++) {
        const text = `earlier turn ${turn}: ${fillerText(300, `renew-${turn}`)}`;
        await conversation.say(text);
        earlierTexts.push(text);
      }
      expect((await suite.database.summaries(conversation.sessionKey)).length).toBeGreaterThan(0);
      const reset = await suite.cli.runOk(["agent", "--session-key", conversation.sessionKey, "--message", "/new", "--json"]);
      expect(reset.stdout).toContain("New session started");
      const turn = await conversation.say("fresh start: hello");
      const seen = allTextOf(agentRequests(turn.requests)[0]!.body);
      for (const text of earlierTexts) expect(seen).not.toContain(text.slice(0, 60));
      expect(seen).not.toContain(EARLIER_FACT);
      // Whatever of the earlier session remains is summaries, within the default carry-over (2,000 tokens ≈ 8,000 chars).
      const carried = [...seen.matchAll(/<summary id="sum_[0-9a-f]{16}"[\s\S]*?<\/summary>/g)].map((match) => match[0]);
      expect(carried.join("").length).toBeLessThanOrEqual(8_000);
    });

    it("keeps the earlier session searchable: a question about it is answered through lcm_grep", async () => {
      const turn = await conversation.say(`what was the deploy token? ${callToolMarker("lcm_grep", { pattern: "deploy token" })}`);
      // With exec tools offered, OpenClaw puts its internal-context carrier after the tool result: read every tool message.
      const results = (agentRequests(turn.requests).at(-1)!.body.messages ?? []).filter((message) => message.role === "tool").map(textOf);
      expect(results.join("\n")).toContain("ZEBRA-7731");
    });

    it("says in /lcm status what happened", async () => {
      await conversation.sendChat("/lcm status");
      const reply = (await suite.hostHistory(conversation.sessionKey)).filter((message) => message.role === "assistant").at(-1);
      expect(reply?.text).toMatch(/New session: .*\((\/new|a new session)\)/);
    });
  });

  describe("host commands", () => {
    it("keeps /lcm status, /lcm doctor and their answers out of every later request, while storing them", async () => {
      const commands = new HostConversation(suite, "agent:main:commands");
      await commands.say("a first real turn");
      await commands.sendChat("/lcm status");
      await commands.sendChat("/lcm doctor");
      const later = [await commands.say("a second real turn"), await commands.say("a third real turn")];
      for (const request of later.flatMap((turn) => agentRequests(turn.requests))) {
        const text = allTextOf(request.body);
        expect(text).not.toContain("/lcm status");
        expect(text).not.toContain("/lcm doctor");
        expect(text).not.toContain("LCM status ·");
        expect(text).not.toContain("LCM doctor");
        expect(text).toContain("a first real turn");
      }
      await commands.expectStoredExactlyOnce();
    });
  });

  describe("sessions LCM does not store", () => {
    it("serves a cron job's session without storing it", async () => {
      const cron = new HostConversation(suite, "agent:main:cron:nightly-digest:run:1");
      const turn = await cron.say("nightly digest: nothing new");
      expect(turn.text).toBeTruthy();
      expect(await suite.database.conversations(cron.sessionKey)).toEqual([]);
      expect(suite.healthProblems()).toEqual([]);
    });

    it("marks the conversation of a session OpenClaw deleted as ended, and keeps it", async () => {
      const doomed = new HostConversation(suite, "agent:main:doomed");
      await doomed.say("this session will be deleted");
      await suite.cli.callGateway("sessions.delete", { key: doomed.sessionKey });
      let ended: unknown = null;
      for (let attempt = 0; attempt < 40 && !ended; attempt++) {
        ended = await suite.database.endedConversation(doomed.sessionKey);
        if (!ended) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(ended).toMatchObject({ endReason: "deleted" });
      expect((await suite.database.messages(doomed.sessionKey)).length).toBeGreaterThan(0);
    });
  });

  it("ran every turn through the engine", () => {
    expect(suite.healthProblems()).toEqual([]);
  });
});
