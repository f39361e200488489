/**
 * The plugin as a new user runs it (issue 12): the real OpenClaw gateway, the plugin entry with no configuration at
 * all (the defaults, the default database path), and a fake model that counts with a real tokenizer and refuses, as
 * providers do, any request that does not fit its window (issue 31). At 16k, 32k and 128k one session of 24 turns: user
 * turns of 1-3k tokens, a file read by the host's `read` tool every third turn (from a few hundred tokens up to ~40%
 * of the window, within `read`'s own 50 KB cap), and one plain-text paste of twice the window. Every model request
 * (tool-loop requests included) must fit the window without the host clamping the reply; summaries must be written and
 * reach the model (at 128k through incremental compaction, the threshold not reached); /compact must compact, or say
 * that nothing older than its small tail is left raw; a detail of turn 2 must come back through lcm_grep and
 * lcm_expand_query, and so must a key in the middle of the paste and one in a file read (content stored aside, issue
 * 22), on lcm_grep's default parameters; the gateway log must show no failure.
 * Windows of 8k and a heavy tool profile are in small-windows.test.ts.
 *
 * Every turn succeeds but one, by OpenClaw's design: the host sends the current message as typed, after the
 * engine's context, and no engine hook can shorten it (specs/011-budget-safe-context.md), so the turn carrying a
 * paste larger than the window ends with the host's own "Context overflow" answer. What the plugin owes that turn:
 * the paste is stored, byte-exact, and the next turns fit and carry it bounded (a reference, its head and tail).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HELPER_SYSTEM_PROMPT } from "../../src/retrieval/expansion-prompts.js";
import { toolResultCharsFor } from "../../src/retrieval/window-share.js";
import { MANUAL_TAIL_MESSAGES } from "../../src/services/compaction-service.js";
import { allTextOf, callToolMarker, systemTextOf, toolResultsOf } from "./fake-model-script.js";
import type { RecordedRequest } from "./fake-model-server.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";
import {
  carriesSummary, clampedOutput, failureLines, FiguresRecorder, overWindow, withoutOnce,
} from "./harness/window-checks.js";

/** Per window: the model's reply size, and whether the 24 turns pass the compaction threshold by themselves. */
const SCENARIOS = [
  { window: 16_000, maxOutputTokens: 1_024, compactsByItself: true },
  { window: 32_000, maxOutputTokens: 1_024, compactsByItself: true },
  // Under 0.75 of a 128k window's budget for most of the 24 turns, but the raw history beyond the fresh tail passes a
  // leaf chunk (20k tokens) by the middle of the session, and maintain summarizes it (incremental compaction).
  { window: 128_000, maxOutputTokens: 1_024, compactsByItself: true },
];
const TURNS = 24; // 32 until 2026-11-27: the host suite had to fit CI's time; the first summary comes at turn 9 at 128k
const PASTE_TURN = 17;
const DETAIL = "the staging vault code is 4417-KESTREL-09";
const HELPER_ANSWER = "HELPER_ANSWER: the staging vault code is 4417-KESTREL-09";
/** Keys in the middle of content a small window stores aside: the paste, and the largest file read (turn 12). */
const PASTE_KEY = "PASTE-KEY-7781-ORCHID";
const READ_KEY_TURN = 12;
const READ_KEY = "TOOLKEY-5523-HERON";

interface WindowRun {
  suite: HostSuite;
  figures: FiguresRecorder;
  session: HostConversation;
  /** Every model request of the scripted turns, with the turn it belongs to. */
  requests: { turn: number; request: RecordedRequest }[];
  failures: string[];
  paste: string;
  /** Failure lines the gateway logged while the paste turn ran: the host's expected answer to it. */
  pasteFailureLines: string[];
}

/** Words of 1-3k tokens, varying by turn. */
function userText(turn: number): string {
  return fillerText(1_000 + ((turn * 677) % 2_000), `turn-${turn}`);
}

/** A file the `read` tool returns: from ~300 tokens up to 40% of the window, and at most `read`'s 50 KB. */
function writeReadableFile(workspace: string, turn: number, window: number): string {
  const step = Math.floor(turn / 3);
  const share = [0.02, 0.1, 0.2, 0.3, 0.4][step % 5]!;
  const tokens = Math.max(300, Math.min(Math.floor(window * share), 12_000));
  const lines: string[] = [];
  for (let line = 0; lines.join("\n").length < tokens * 4; line++) {
    if (turn === READ_KEY_TURN && line === 60) lines.push(`2026-11-23T10:59:30Z WARN deploy token rotated to ${READ_KEY}`);
    lines.push(`2026-11-23T10:${String(line % 60).padStart(2, "0")}:00Z INFO worker-${line % 8} request ${turn}-${line} took ${(line * 37) % 900} ms id=${(line * 2_654_435_761 >>> 0).toString(16)}`);
  }
  const path = join(workspace, `output-${turn}.log`);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

for (const { window, maxOutputTokens, compactsByItself } of SCENARIOS) {
  describe(`LCM on its defaults in a real gateway, ${window / 1_000}k-token window`, () => {
    let run: WindowRun;

    beforeAll(async () => {
      const suite = await HostSuite.create({
        name: `defaults-${window / 1_000}k`, contextWindow: window, maxOutputTokens,
        pluginConfig: "defaults", extraTools: ["read"], enforceWindow: true,
      });
      run = {
        suite, session: new HostConversation(suite, `agent:main:defaults-${window}`), requests: [], failures: [],
        paste: `${fillerText(window, "paste")} the paste key is ${PASTE_KEY}. ${fillerText(window, "paste-b")} END-OF-PASTE`, pasteFailureLines: [],
        figures: new FiguresRecorder(`${window / 1_000}k, 1-3k-token messages and file reads, minimal profile`, maxOutputTokens),
      };
      // lcm_expand_query's helper sub-agent answers from "the history" (what it read is LCM's business, not the fake's).
      suite.model.addRule((request) =>
        systemTextOf(request).includes(HELPER_SYSTEM_PROMPT.split("\n")[0]!) ? { kind: "text", text: HELPER_ANSWER } : undefined);
      await suite.gateway.start();
    });

    afterAll(async () => {
      await run?.suite.dispose();
    });

    it(`answers all ${TURNS} turns but the paste of twice the window: long messages and file reads`, async () => {
      const workspace = run.suite.workspaceDir;
      mkdirSync(workspace, { recursive: true });
      for (let turn = 1; turn <= TURNS; turn++) {
        let message = `turn ${turn}: ${userText(turn)}`;
        if (turn === 2) message = `turn 2: remember this, ${DETAIL}. ${userText(turn)}`;
        if (turn % 3 === 0) message += ` ${callToolMarker("read", { path: writeReadableFile(workspace, turn, window) })}`;
        if (turn === PASTE_TURN) {
          const before = failureLines(run.suite);
          await expect(run.session.say(run.paste)).rejects.toThrow(/Context overflow|context length/i).catch((error: unknown) => {
            run.failures.push(`turn ${turn} (the paste) did not end as expected: ${String(error).slice(0, 400)}`);
          });
          run.pasteFailureLines = withoutOnce(failureLines(run.suite), before);
          continue;
        }
        try {
          const answered = await run.session.say(message);
          for (const request of answered.requests) run.requests.push({ turn, request });
          run.figures.turn(turn, answered.requests, await run.suite.database.lastAssembly(run.session.sessionKey));
        } catch (error) {
          run.failures.push(`turn ${turn}: ${String(error).slice(0, 400)}`);
        }
      }
      expect(run.failures).toEqual([]);
      const stored = (await run.suite.database.messages(run.session.sessionKey)).filter((message) => message.role === "user");
      expect(stored.length).toBe(TURNS); // the paste too: OpenClaw keeps the failed turn's message in its transcript
    }, 20 * 60_000);

    it("stores the paste byte-exact and shows the next turn a bounded form of it", async () => {
      const paste = (await run.suite.database.largeFiles(run.session.sessionKey)).find((file) => file.byteSize === Buffer.byteLength(run.paste));
      expect(paste?.fileName).toBe("pasted-text");
      expect(readFileSync(paste!.storagePath, "utf8")).toBe(run.paste);
      const next = run.requests.find(({ turn, request }) => turn === PASTE_TURN + 1 && request.kind === "agent")!.request;
      const seen = allTextOf(next.body);
      expect(seen).toContain(`[LCM File: ${paste!.fileId}`);
      expect(seen).toContain("END-OF-PASTE"); // the tail of the paste
    });

    it("sends every request within the window, tool-loop requests included, without clamping the reply", () => {
      const agentRequests = run.requests.filter(({ request }) => request.kind === "agent");
      expect(agentRequests.length).toBeGreaterThan(TURNS);
      const refused = run.requests.filter(({ request }) => request.reply.kind === "error").map(({ turn }) => turn);
      expect(refused).toEqual([]);
      expect(run.requests.filter(({ request }) => overWindow(request, window)).map(({ turn }) => turn)).toEqual([]);
      expect(agentRequests.filter(({ request }) => clampedOutput(request, maxOutputTokens)).map(({ turn }) => turn)).toEqual([]);
    });

    it(compactsByItself ? "writes summaries along the way and shows them to the model" : `stays under the compaction threshold in ${TURNS} turns`, async () => {
      const withSummary = run.requests.filter(({ request }) => request.kind === "agent" && carriesSummary(request.body));
      if (compactsByItself) {
        expect((await run.suite.database.summaries(run.session.sessionKey)).length).toBeGreaterThan(0);
        expect(withSummary.length).toBeGreaterThan(0);
      } else {
        expect(await run.suite.database.summaries(run.session.sessionKey)).toEqual([]);
      }
    });

    it("compacts on /compact (all but the newest messages) and answers with LCM's figures", async () => {
      const summariesBefore = (await run.suite.database.summaries(run.session.sessionKey)).length;
      // Incremental compaction after each turn may already have summarized everything older than /compact's small tail
      // (at 16k it usually has): then /compact says so in LCM's words. Otherwise it must compact.
      const items = await run.suite.database.contextItems(run.session.sessionKey);
      const olderRaw = items.slice(0, Math.max(0, items.length - MANUAL_TAIL_MESSAGES)).filter((item) => item.kind === "message");
      await run.session.sendChat("/compact");
      const reply = (await run.suite.hostHistory(run.session.sessionKey)).filter((message) => message.role === "assistant").at(-1);
      const outcome = (await run.suite.database.conversations(run.session.sessionKey))[0]?.lastCompaction as
        { trigger?: string; compacted?: boolean; tokensBefore?: number; tokensAfter?: number } | null;
      console.log(`[defaults ${window / 1_000}k] /compact with ${olderRaw.length} raw messages older than its tail: compacted ${outcome?.compacted}`);
      // After it, nothing older than its tail is raw, but a short message just before the tail: too small for a summary
      // of its own, it rides with the next message once that one leaves the tail.
      const after = await run.suite.database.contextItems(run.session.sessionKey);
      const tailStart = Math.max(0, after.length - MANUAL_TAIL_MESSAGES);
      const leftRaw = after.slice(0, tailStart).flatMap((item, index) => item.kind === "message" && !(index === tailStart - 1 && item.tokens <= 64) ? [index] : []);
      expect(leftRaw, "raw messages older than /compact's tail, after it").toEqual([]);
      if (outcome?.compacted === false) {
        expect(reply?.text ?? "").toMatch(/only the newest [\d,]+ messages and summaries that cannot be merged further are left.*LCM's context uses [\d,]+ tokens of its [\d,]+-token budget/s);
        // Nothing older than the tail was raw: a turn's short closing reply before a large message used to stay raw
        // between two summaries for good (issue 23), and kept them from being condensed.
        expect(olderRaw.length).toBeLessThanOrEqual(1);
        return;
      }
      expect(reply?.text ?? "").toMatch(/Compacted \(.+ → .+\): .*LCM's context uses [\d,]+ tokens of its [\d,]+-token budget/);
      expect(outcome).toMatchObject({ trigger: "compact:threshold", compacted: true });
      expect(outcome!.tokensAfter!).toBeLessThan(outcome!.tokensBefore!);
      expect((await run.suite.database.summaries(run.session.sessionKey)).length).toBeGreaterThan(summariesBefore);
    });

    it("recalls the detail of turn 2 with lcm_grep", async () => {
      const turn = await run.session.say(`what was the vault code? ${callToolMarker("lcm_grep", { pattern: "staging vault code" })}`);
      const last = turn.requests.filter((request) => request.kind === "agent").at(-1)!;
      expect(toolResultsOf(last.body).join("\n")).toContain("4417-KESTREL-09");
      // And it had left the model's view: the first request of this turn carries summaries, not the detail.
      const first = turn.requests.find((request) => request.kind === "agent")!;
      expect(allTextOf(first.body)).not.toContain("4417-KESTREL-09");
      expect(carriesSummary(first.body)).toBe(true);
    });

    it("finds keys in the middle of the paste and of a file read with lcm_grep's default parameters", async () => {
      for (const key of [PASTE_KEY, READ_KEY]) {
        const turn = await run.session.say(`find ${key} ${callToolMarker("lcm_grep", { pattern: key })}`);
        const result = toolResultsOf(turn.requests.filter((request) => request.kind === "agent").at(-1)!.body).join("\n");
        expect(result, key).toMatch(/"matchCount": [1-9]/);
        expect(result, key).toContain(key);
      }
      // The paste is found inside its stored content; the read is too where this window stores it aside.
      const stored = await run.suite.database.largeFiles(run.session.sessionKey);
      expect(stored.some((file) => readFileSync(file.storagePath, "utf8").includes(PASTE_KEY))).toBe(true);
      const readAside = stored.some((file) => readFileSync(file.storagePath, "utf8").includes(READ_KEY));
      console.log(`[defaults ${window / 1_000}k] the turn-${READ_KEY_TURN} read was ${readAside ? "stored aside" : "kept as a message"}; both keys found`);
    });

    it("answers lcm_expand_query through a helper sub-agent on the defaults", async () => {
      const turn = await run.session.say(
        `ask the helper ${callToolMarker("lcm_expand_query", { prompt: "What is the staging vault code?", query: "vault code" })}`,
      );
      const [result] = toolResultsOf(turn.requests.filter((request) => request.kind === "agent").at(-1)!.body);
      expect(result).toContain(HELPER_ANSWER);
      expect(result).toContain('"mode": "delegated"');
    });

    it("answers a broad lcm_grep with what fits the window: the request carrying it fits, the reply is not clamped", async () => {
      // "turn" is in every stored user message: far more matches (up to 200) than any small window holds.
      const turn = await run.session.say(`list every turn ${callToolMarker("lcm_grep", { pattern: "turn \\d+", limit: 200 })}`);
      const agentRequests = turn.requests.filter((request) => request.kind === "agent");
      const carrying = agentRequests.at(-1)!;
      const result = toolResultsOf(carrying.body).join("\n");
      expect(result).toMatch(/"matchCount": \d+/);
      expect(result.length).toBeLessThanOrEqual(toolResultCharsFor(window));
      if (window <= 16_000) expect(result).toMatch(/more match\(es\) not shown, to fit this conversation's model window/);
      expect(agentRequests.filter((request) => overWindow(request, window) || request.reply.kind === "error")).toEqual([]);
      expect(agentRequests.filter((request) => clampedOutput(request, maxOutputTokens))).toEqual([]);
    });

    it("leaves no failure in the gateway log but the host's answer to the paste, and reports its figures", () => {
      expect(run.pasteFailureLines.some((line) => /Context overflow/.test(line))).toBe(true);
      expect(withoutOnce(failureLines(run.suite), run.pasteFailureLines).map((line) => line.slice(0, 300))).toEqual([]);
      expect(run.suite.healthProblems()).toEqual([]);
      const figures = run.figures.write(run.suite);
      expect(figures.largestRequest.tokens + figures.largestRequest.outputAsked).toBeLessThanOrEqual(window);
    });
  });
}
