/**
 * The end-to-end suite in gateway mode (issue 6): one OpenClaw gateway on loopback, the plugin built from the
 * repository, a scripted fake model. Asserted on the plugin's database against the host's own transcript
 * (`chat.history`), on what the model received, and on OpenClaw's log.
 * The tests of one `describe` share a session and run in order; later ones build on what earlier ones left
 * (the recall session is compacted by the compaction test and recalled from by the tool tests).
 *
 * Tuned settings, on purpose: a summary within three 300-token turns keeps this file short, and makes `lcm_describe`
 * of a summary, the summarizer's prompt carrying the /compact instructions, and a 300-row file stored aside
 * (largeFileTokenThreshold 1,000) cheap to reach. Their twins on the plugin's defaults (issue 31): summaries written and
 * carried, /compact compacting, restart, lcm_grep and lcm_expand_query (delegated) in default-config.test.ts (16k to
 * 128k) and small-windows.test.ts (8k, a restart in each); overflow recovery in small-windows' four-read turn; a paste
 * stored aside byte-exact in default-config's paste of twice the window.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_PROMPT_ADDITION } from "../../src/assembly/system-prompt.js";
import { DIRECT_SYSTEM_PROMPT, HELPER_SYSTEM_PROMPT } from "../../src/retrieval/expansion-prompts.js";
import {
  allTextOf,
  callToolMarker,
  FAKE_SUMMARY_PREFIX,
  overflowOnceMarker,
  systemTextOf,
  toolResultsOf,
} from "./fake-model-script.js";
import type { RecordedRequest } from "./fake-model-server.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";

const CONTEXT_WINDOW = 16_000;
const MAX_OUTPUT_TOKENS = 1_024;
/** Small enough that a 300-token turn is summarized once it leaves the fresh tail. */
const PLUGIN_CONFIG = {
  freshTailCount: 4, // the last two turns stay raw
  leafChunkTokens: 256, // the smallest allowed: a 300-token turn outside the tail is a leaf chunk on its own
  leafMinFanout: 2,
  leafTargetTokens: 64,
  condensedTargetTokens: 96,
  largeFileTokenThreshold: 1_000,
};
const VAULT_FACT = "the vault combination is 31-17-42";
const HELPER_ANSWER = "HELPER_ANSWER: the vault combination is 31-17-42";
const DIRECT_ANSWER = "DIRECT_ANSWER: the vault combination is 31-17-42";

/** The first request of a turn that offered tools: what the model saw before it answered. */
function firstAgentRequest(requests: RecordedRequest[]): RecordedRequest {
  const request = requests.find((candidate) => candidate.kind === "agent");
  if (!request) throw new Error(`No agent request among ${requests.length} recorded for the turn.`);
  return request;
}

/** The last agent request of a turn: after a tool loop, it carries every tool result. */
function lastAgentRequest(requests: RecordedRequest[]): RecordedRequest {
  const request = requests.filter((candidate) => candidate.kind === "agent").at(-1);
  if (!request) throw new Error(`No agent request among ${requests.length} recorded for the turn.`);
  return request;
}

describe("LCM in a real OpenClaw gateway", () => {
  let suite: HostSuite;
  let turns: HostConversation;
  let recall: HostConversation;
  let files: HostConversation;

  beforeAll(async () => {
    suite = await HostSuite.create({
      name: "gateway", contextWindow: CONTEXT_WINDOW, maxOutputTokens: MAX_OUTPUT_TOKENS, pluginConfig: PLUGIN_CONFIG,
    });
    // lcm_expand_query's helper sub-agent, and its one-call fallback, answer from "the history".
    suite.model.addRule((request) =>
      systemTextOf(request).includes(HELPER_SYSTEM_PROMPT.split("\n")[0]!) ? { kind: "text", text: HELPER_ANSWER } : undefined);
    suite.model.addRule((request) =>
      systemTextOf(request).includes(DIRECT_SYSTEM_PROMPT.split("\n")[0]!) ? { kind: "text", text: DIRECT_ANSWER } : undefined);
    turns = new HostConversation(suite, "agent:main:e2e-turns");
    recall = new HostConversation(suite, "agent:main:e2e-recall");
    files = new HostConversation(suite, "agent:main:e2e-large-file");
    await suite.gateway.start();
  });

  afterAll(async () => {
    await suite?.dispose();
  });

  describe("turns run through the engine", () => {
    it("stores every message of every turn exactly once, tool turns included", async () => {
      await turns.say("first turn: the launch window opens at 14:05");
      // session_status is one of the host's own tools in the minimal profile.
      await turns.say(`second turn runs a tool ${callToolMarker("session_status", {})}`);
      await turns.say("third turn: confirm the window");
      expect((await suite.database.messages(turns.sessionKey)).map((message) => message.role)).toContain("toolResult");
      await turns.expectStoredExactlyOnce();
      // Every turn after the first bootstraps through the host's transcript reader, from a stored cursor.
      expect((await suite.database.conversations(turns.sessionKey))[0]?.bootstrapState).toMatchObject({ source: "host" });
    });

    it("sends the model the engine's system prompt addition on every turn", () => {
      const agentRequests = suite.model.requests({ kind: "agent" });
      expect(agentRequests.length).toBeGreaterThanOrEqual(4); // three turns, one with a tool round trip
      expect(agentRequests.filter((request) => !systemTextOf(request.body).includes(SYSTEM_PROMPT_ADDITION))).toEqual([]);
    });
  });

  describe("compaction and recall", () => {
    it("summarizes older turns with the host's model, then sends <summary> items and the fresh tail within budget", async () => {
      const mark = suite.model.mark();
      await recall.say(`recall turn 1: ${VAULT_FACT}. ${fillerText(300, "recall-1")}`);
      for (let turn = 2; turn <= 6 && (await suite.database.summaries(recall.sessionKey)).length === 0; turn++) {
        await recall.say(`recall turn ${turn}: ${fillerText(300, `recall-${turn}`)}`);
      }
      const summaryRequests = suite.model.requests({ since: mark, kind: "summary" });
      expect(summaryRequests.length).toBeGreaterThan(0);
      expect(allTextOf(summaryRequests[0]!.body)).toContain(VAULT_FACT);
      expect((await suite.database.summaries(recall.sessionKey))[0]?.content).toContain(FAKE_SUMMARY_PREFIX);

      const next = await recall.say("recall: where are we?");
      const request = firstAgentRequest(next.requests);
      const seen = allTextOf(request.body);
      expect(seen).toMatch(/<summary id="sum_[0-9a-f]{16}"/);
      expect(seen).not.toContain(VAULT_FACT);
      for (const message of recall.sent.slice(-3, -1)) expect(seen).toContain(message); // freshTailCount 4 = two turns
      const [conversation] = await suite.database.conversations(recall.sessionKey);
      expect(conversation!.contextTokens).toBeLessThanOrEqual(conversation!.lastTokenBudget!);
      expect(request.promptTokens).toBeLessThanOrEqual(CONTEXT_WINDOW - MAX_OUTPUT_TOKENS);
    });

    it("lets the model grep and describe what compaction took out of its context", async () => {
      const [summary] = await suite.database.summaries(recall.sessionKey);
      const turn = await recall.say(
        `look it up ${callToolMarker("lcm_grep", { pattern: "vault combination" })} ` +
          callToolMarker("lcm_describe", { id: summary!.summaryId }),
      );
      const [grep, describeResult] = toolResultsOf(lastAgentRequest(turn.requests).body);
      // The match is the original message, which a summary now covers (the tool marks the hit with « »).
      expect(grep).toContain("«vault combination» is 31-17-42");
      expect(grep).toMatch(/"coveringSummaryId":"sum_[0-9a-f]{16}"/);
      expect(describeResult).toContain(summary!.summaryId);
      expect(describeResult).toContain(FAKE_SUMMARY_PREFIX);
    });

    it("answers lcm_expand_query through a helper sub-agent in gateway mode", async () => {
      const turn = await recall.say(
        `ask the helper ${callToolMarker("lcm_expand_query", { prompt: "What is the vault combination?", query: "earlier stretch" })}`,
      );
      const helperRequests = turn.requests.filter((request) => systemTextOf(request.body).includes(HELPER_SYSTEM_PROMPT.split("\n")[0]!));
      expect(helperRequests.length).toBeGreaterThan(0);
      const [result] = toolResultsOf(lastAgentRequest(turn.requests).body);
      expect(result).toContain(HELPER_ANSWER);
      expect(result).toContain('"mode": "delegated"');
    });

    it("runs /compact with its instructions through the engine", async () => {
      await recall.say(`before compacting: ${fillerText(200, "compact-1")}`);
      await recall.say(`before compacting, again: ${fillerText(200, "compact-2")}`);
      const mark = suite.model.mark();
      await recall.sendChat("/compact focus on the vault");
      const summaryRequests = suite.model.requests({ since: mark, kind: "summary" });
      expect(summaryRequests.map((request) => allTextOf(request.body)).join("\n")).toContain("focus on the vault");
      expect((await suite.database.conversations(recall.sessionKey))[0]?.lastCompaction).toMatchObject({ trigger: "compact:threshold" });
    });

    it("recovers from a provider context overflow by compacting to budget and retrying", async () => {
      await recall.say(`before the overflow: ${fillerText(300, "overflow-1")}`);
      const turn = await recall.say(`this one overflows once ${overflowOnceMarker("recall")}`);
      const failed = turn.requests.findIndex((request) => request.reply.kind === "error");
      expect(failed).toBeGreaterThanOrEqual(0);
      const afterwards = turn.requests.slice(failed + 1);
      expect(afterwards.some((request) => request.kind === "summary")).toBe(true);
      expect(afterwards.some((request) => request.kind === "agent" && request.reply.kind === "text")).toBe(true);
      expect((await suite.database.conversations(recall.sessionKey))[0]?.lastCompaction).toMatchObject({ trigger: "compact:budget" });
    });

    it("answers /lcm status in the chat", async () => {
      await recall.sendChat("/lcm status");
      const reply = (await suite.hostHistory(recall.sessionKey)).filter((message) => message.role === "assistant").at(-1);
      expect(reply?.text).toContain("LCM status · conversation");
      expect(reply?.text).toMatch(/Summaries: \d/);
    });

    it("stores the whole transcript exactly once, slash commands and host-written replies included", async () => {
      // The host writes /compact, /lcm and their replies outside any turn: bootstrap imports them on the next turn.
      await recall.say("after the commands");
      await recall.expectStoredExactlyOnce();
    });
  });

  describe("large files", () => {
    it("replaces a pasted large file by its reference in what the model receives afterwards", async () => {
      const rows = Array.from({ length: 300 }, (_, row) => `sku-${String(row).padStart(4, "0")},widget ${row},${(row * 37) % 1000}`);
      await files.say(`our inventory:\n<file name="inventory.csv" mime="text/csv">\nsku,name,count\n${rows.join("\n")}\n</file>`);
      const [file] = await suite.database.largeFiles(files.sessionKey);
      expect(file?.fileName).toBe("inventory.csv");

      const turn = await files.say(`read it back ${callToolMarker("lcm_describe", { id: file!.fileId })}`);
      const seen = allTextOf(firstAgentRequest(turn.requests).body);
      expect(seen).toContain(`[LCM File: ${file!.fileId}`);
      expect(seen).not.toContain("sku-0150,widget 150");
      const [describeResult] = toolResultsOf(lastAgentRequest(turn.requests).body);
      expect(describeResult).toContain("sku-0001,widget 1");
    });
  });

  describe("across a gateway restart", () => {
    it("still stores every message exactly once", async () => {
      await suite.gateway.restart();
      await turns.say("fourth turn, after the restart");
      await turns.say("fifth turn, after the restart");
      await turns.expectStoredExactlyOnce();
      await recall.say("recall after the restart");
      await recall.expectStoredExactlyOnce();
    });
  });

  describe("in embedded mode (agent --local, no gateway)", () => {
    it("answers lcm_expand_query with the direct fallback, since sub-agents need a gateway request", async () => {
      await suite.gateway.stop();
      const turn = await recall.say(
        `ask without a gateway ${callToolMarker("lcm_expand_query", { prompt: "What is the vault combination?", query: "earlier stretch" })}`,
        { local: true },
      );
      const [result] = toolResultsOf(lastAgentRequest(turn.requests).body);
      expect(result).toContain(DIRECT_ANSWER);
      expect(result).toContain('"mode": "direct"');
    });
  });

  it("never degrades, quarantines or fails the engine", () => {
    expect(suite.healthProblems()).toEqual([]);
  });
});
