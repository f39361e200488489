/**
 * The plugin as a new user runs it (issue 12): the real OpenClaw gateway, the plugin entry with no configuration at
 * all (the defaults, the default database path), and a fake model that refuses, as providers do, any request that
 * does not fit its window. At each window size one session of 30+ turns: user turns of 1-3k tokens, a file read
 * by the host's `read` tool every third turn (from a few hundred tokens up to ~40% of the window, within `read`'s
 * own 50 KB cap), and one plain-text paste of twice the window. Every model request (tool-loop requests included)
 * must fit the window without the host clamping the reply, /compact must succeed, a detail of turn 2 must come back
 * through lcm_grep, and the gateway log must show no failure.
 *
 * An 8k window is run at the sizes that window can hold at all. OpenClaw's own system prompt and its six tool
 * schemas (the three recall tools included) are about 19 KB, which its pre-send check counts as 6k tokens
 * (characters / 3.2): with a 512-token reply that leaves about 1.5k tokens for the message, the tool results and
 * every bit of history, so there user turns are 150-450 tokens and file reads up to 10% of the window. (At 1-3k
 * tokens no engine could send the message: OpenClaw clamps the reply to one token before any history is added.)
 *
 * Every turn succeeds but one, by OpenClaw's design: the host sends the current message as typed, after the
 * engine's context, and no engine hook can shorten it (specs/011-budget-safe-context.md), so the turn carrying a
 * paste larger than the window ends with the host's own "Context overflow" answer. What the plugin owes that turn:
 * the paste is stored, byte-exact, and the next turns fit and carry it bounded (a reference, its head and tail).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultCharsFor } from "../../src/retrieval/window-share.js";
import { allTextOf, callToolMarker, toolResultsOf } from "./fake-model-script.js";
import type { RecordedRequest } from "./fake-model-server.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";

/** Per window: the model's reply size, and the share of the nominal message and file sizes that window can hold. */
const SCENARIOS = [
  // OpenClaw's first budget of an 8k turn (window less its 2,000-token reserve, system prompt and message, about
  // 1.3k) does not cover the tool schemas it sends besides (1.7k): no history fits, and the model reaches the
  // history, the paste included, only through the recall tools.
  { window: 8_000, maxOutputTokens: 512, turnScale: 0.15, fileScale: 0.25, historyFits: false },
  { window: 16_000, maxOutputTokens: 1_024, turnScale: 1, fileScale: 1, historyFits: true },
  { window: 32_000, maxOutputTokens: 1_024, turnScale: 1, fileScale: 1, historyFits: true },
  { window: 128_000, maxOutputTokens: 1_024, turnScale: 1, fileScale: 1, historyFits: true },
];
const TURNS = 32;
const PASTE_TURN = 17;
const DETAIL = "the staging vault code is 4417-KESTREL-09";
/** Lines the gateway writes when a turn or a compaction failed. */
const FAILURE_LINES = [
  /Preflight compaction required but failed/i, /Compaction failed/i, /context overflow/i, /insufficient_output_budget/i,
  /auto-compaction failed/i,
];

interface WindowRun {
  suite: HostSuite;
  session: HostConversation;
  /** Every model request of the scripted turns, with the turn it belongs to. */
  requests: { turn: number; request: RecordedRequest }[];
  failures: string[];
  paste: string;
  /** Failure lines the gateway logged while the paste turn ran: the host's expected answer to it. */
  pasteFailureLines: string[];
}

/** The gateway log's lines that report a failed turn or compaction. */
function failureLines(suite: HostSuite): string[] {
  return suite.logLines().filter((line) => FAILURE_LINES.some((pattern) => pattern.test(line.text))).map((line) => line.text);
}

/** `all` without one occurrence of each of `expected`. */
function withoutOnce(all: string[], expected: string[]): string[] {
  const left = [...all];
  for (const line of expected) {
    const index = left.indexOf(line);
    if (index >= 0) left.splice(index, 1);
  }
  return left;
}

/** Words of about 1-3k tokens (times `scale`), varying by turn. */
function userText(turn: number, scale: number): string {
  const tokens = Math.round((1_000 + ((turn * 677) % 2_000)) * scale);
  return fillerText(tokens, `turn-${turn}`);
}

/**
 * A file the `read` tool returns: from ~300 tokens up to 40% of the window (times `scale`), and at most `read`'s
 * 50 KB.
 */
function writeReadableFile(workspace: string, turn: number, window: number, scale: number): string {
  const step = Math.floor(turn / 3);
  const share = [0.02, 0.1, 0.2, 0.3, 0.4][step % 5]! * scale;
  const tokens = Math.max(300, Math.min(Math.floor(window * share), 12_000));
  const lines: string[] = [];
  for (let line = 0; lines.join("\n").length < tokens * 4; line++) {
    lines.push(`2026-11-23T10:${String(line % 60).padStart(2, "0")}:00Z INFO worker-${line % 8} request ${turn}-${line} took ${(line * 37) % 900} ms id=${(line * 2_654_435_761 >>> 0).toString(16)}`);
  }
  const path = join(workspace, `output-${turn}.log`);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

function overWindow(request: RecordedRequest, window: number): boolean {
  const body = request.body as { max_completion_tokens?: number; max_tokens?: number };
  const output = body.max_completion_tokens ?? body.max_tokens ?? 0;
  return request.promptTokens + output > window;
}

function clampedOutput(request: RecordedRequest, maxOutputTokens: number): boolean {
  const body = request.body as { max_completion_tokens?: number; max_tokens?: number };
  const output = body.max_completion_tokens ?? body.max_tokens;
  return output !== undefined && output < maxOutputTokens;
}

for (const { window, maxOutputTokens, turnScale, fileScale, historyFits } of SCENARIOS) {
  describe(`LCM on its defaults in a real gateway, ${window / 1_000}k-token window`, () => {
    let run: WindowRun;

    beforeAll(async () => {
      const suite = await HostSuite.create({
        name: `defaults-${window / 1_000}k`, contextWindow: window, maxOutputTokens,
        pluginConfig: "defaults", extraTools: ["read"], enforceWindow: true,
      });
      run = {
        suite, session: new HostConversation(suite, `agent:main:defaults-${window}`), requests: [], failures: [],
        paste: `${fillerText(window * 2, "paste")} END-OF-PASTE`, pasteFailureLines: [],
      };
      await suite.gateway.start();
    });

    afterAll(async () => {
      await run?.suite.dispose();
    });

    it(`answers all ${TURNS} turns but the paste of twice the window: long messages and file reads`, async () => {
      const workspace = run.suite.workspaceDir;
      mkdirSync(workspace, { recursive: true });
      for (let turn = 1; turn <= TURNS; turn++) {
        let message = `turn ${turn}: ${userText(turn, turnScale)}`;
        if (turn === 2) message = `turn 2: remember this, ${DETAIL}. ${userText(turn, turnScale)}`;
        if (turn % 3 === 0) message += ` ${callToolMarker("read", { path: writeReadableFile(workspace, turn, window, fileScale) })}`;
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
        } catch (error) {
          run.failures.push(`turn ${turn}: ${String(error).slice(0, 400)}`);
        }
      }
      expect(run.failures).toEqual([]);
      const stored = run.suite.database.messages(run.session.sessionKey).filter((message) => message.role === "user");
      expect(stored.length).toBe(TURNS); // the paste too: OpenClaw keeps the failed turn's message in its transcript
    }, 20 * 60_000);

    it("stores the paste byte-exact and shows the next turn a bounded form of it (where any history fits)", async () => {
      const paste = run.suite.database.largeFiles(run.session.sessionKey).find((file) => file.byteSize === Buffer.byteLength(run.paste));
      expect(paste?.fileName).toBe("pasted-text");
      expect(readFileSync(paste!.storagePath, "utf8")).toBe(run.paste);
      if (!historyFits) {
        // The model finds it through the recall tools instead: its tail, by a search inside stored files.
        const turn = await run.session.say(`where did the paste end? ${callToolMarker("lcm_grep", { pattern: "END-OF-PASTE", scope: "files" })}`);
        const last = turn.requests.filter((request) => request.kind === "agent").at(-1)!;
        expect(toolResultsOf(last.body).join("\n")).toContain(paste!.fileId);
        return;
      }
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

    it("runs /compact through the engine without a failure", async () => {
      await run.session.sendChat("/compact");
      const reply = (await run.suite.hostHistory(run.session.sessionKey)).filter((message) => message.role === "assistant").at(-1);
      expect(reply?.text ?? "").not.toMatch(/fail/i);
      expect(run.suite.database.conversations(run.session.sessionKey)[0]?.lastCompaction).toMatchObject({ trigger: "compact:threshold" });
    });

    it("recalls the detail of turn 2 with lcm_grep", async () => {
      const turn = await run.session.say(`what was the vault code? ${callToolMarker("lcm_grep", { pattern: "staging vault code" })}`);
      const last = turn.requests.filter((request) => request.kind === "agent").at(-1)!;
      expect(toolResultsOf(last.body).join("\n")).toContain("4417-KESTREL-09");
      // And it had left the model's view long before: the first request of this turn does not carry it.
      expect(allTextOf(turn.requests.find((request) => request.kind === "agent")!.body)).not.toContain("4417-KESTREL-09");
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

    it("leaves no failure in the gateway log but the host's answer to the paste", () => {
      expect(run.pasteFailureLines.some((line) => /Context overflow/.test(line))).toBe(true);
      expect(withoutOnce(failureLines(run.suite), run.pasteFailureLines).map((line) => line.slice(0, 300))).toEqual([]);
      expect(run.suite.healthProblems()).toEqual([]);
    });
  });
}
