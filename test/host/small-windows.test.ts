/**
 * Small windows and heavy tool profiles in the real gateway (issue 23, spec 023), on the plugin's defaults, with a fake
 * model that counts with a real tokenizer and refuses what a real model of its window would refuse:
 * - 8k with 1.5k-token messages: OpenClaw's own prompt and tools leave LCM no budget; the model still sees its history
 *   (the memory floor with the newest summary), after a restart too; /compact compacts; lcm_grep finds turn 2; status
 *   names the cause. OpenClaw clamps the reply itself (its characters / 3.2 measure), from the first turn, where LCM
 *   sends nothing: that is asserted as OpenClaw's, not LCM's.
 * - 8k with tool results of 40% of the window: OpenClaw assembles again before every model call of the tool loop, LCM
 *   sheds its part down to the floor's line, and a follow-up with one such result fits (OpenClaw caps a live result at
 *   30% of the window). A turn of four reads (the issue's) cannot fit with any engine: its over-window requests are
 *   over by OpenClaw's own part alone, and LCM answers the overflow recovery without summarizing again and again.
 * - 16k under `tools.profile: "coding"` (Tool Search on, as a new user has it): status names the cause and the fix,
 *   and no summary prompt asks for a uselessly small summary.
 * Each scenario prints its figures (the budget OpenClaw passed, what assemble returned, the largest request) and
 * appends them to `window-figures.jsonl` in the run folder.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MEMORY_FLOOR_TOKENS } from "../../src/assembly/memory-floor.js";
import { callToolMarker, toolResultsOf } from "./fake-model-script.js";
import type { RecordedRequest } from "./fake-model-server.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";
import {
  carriesFloor, carriesSummary, clampedOutput, currentUserText, failureLines, FiguresRecorder, lcmTokens, overWindow,
  summaryTargets,
} from "./harness/window-checks.js";

const DETAIL = "the staging vault code is 4417-KESTREL-09";
/** LCM's estimate counts a little above a real tokenizer: the floor's 320 stay below this many real tokens. */
const FLOOR_REAL_TOKENS = MEMORY_FLOOR_TOKENS + 10;

interface Turned {
  turn: number | string;
  request: RecordedRequest;
}

/** Every model request of a scenario's turns, the assembled figures, and what failed. */
class ScenarioRun {
  readonly requests: Turned[] = [];
  readonly failures: string[] = [];
  readonly figures: FiguresRecorder;

  constructor(readonly suite: HostSuite, readonly session: HostConversation, scenario: string, maxOutputTokens: number) {
    this.figures = new FiguresRecorder(scenario, maxOutputTokens);
  }

  async say(turn: number | string, message: string): Promise<RecordedRequest[]> {
    const mark = this.suite.model.mark();
    try {
      await this.session.say(message);
    } catch (error) {
      this.failures.push(`turn ${turn}: ${String(error)}`); // whole: OpenClaw's answer is in the CLI output's tail
    }
    const requests = this.suite.model.requests({ since: mark });
    for (const request of requests) this.requests.push({ turn, request });
    this.figures.turn(turn, requests, await this.suite.database.lastAssembly(this.session.sessionKey));
    return requests;
  }

  agent(filter: (entry: Turned) => boolean = () => true): Turned[] {
    return this.requests.filter((entry) => entry.request.kind === "agent" && filter(entry));
  }

  /**
   * The first model request of each numbered turn: what the model saw before it answered (OpenClaw's own background
   * runs in the same session, a heartbeat-monitor task for one, are left out: their message is not the turn's).
   */
  firstOfEachTurn(): Turned[] {
    const seen = new Set<number | string>();
    return this.turnRequests().filter(({ turn }) => !seen.has(turn) && Boolean(seen.add(turn)));
  }

  /** The model requests of the numbered turns themselves (tool-loop follow-ups included), not OpenClaw's background runs. */
  turnRequests(): Turned[] {
    return this.agent(({ turn, request }) => typeof turn === "number" && new RegExp(`\\bturn ${turn}\\b`).test(currentUserText(request.body)));
  }

  async lastReply(): Promise<string> {
    return (await this.suite.hostHistory(this.session.sessionKey)).filter((message) => message.role === "assistant").at(-1)?.text ?? "";
  }
}

/** A log file the host's `read` tool returns, of about `share` of the window in real tokens. */
function writeLog(workspace: string, name: string, window: number, share: number): string {
  mkdirSync(workspace, { recursive: true });
  const lines: string[] = [];
  for (let line = 0; lines.join("\n").length < window * share * 3; line++) {
    lines.push(`2026-11-23T10:${String(line % 60).padStart(2, "0")}:00Z INFO worker-${line % 8} request ${name}-${line} took ${(line * 37) % 900} ms`);
  }
  const path = join(workspace, `${name}.log`);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

describe("an 8k window with 1.5k-token messages, on the plugin's defaults", () => {
  const WINDOW = 8_000;
  const MAX_OUTPUT = 512;
  const TURNS = 16;
  let run: ScenarioRun;

  beforeAll(async () => {
    const suite = await HostSuite.create({
      // The host's `read` tool as in default-config.test.ts: OpenClaw's system prompt is then 13.5 KB (7.6 KB without it).
      name: "small-8k-turns", contextWindow: WINDOW, maxOutputTokens: MAX_OUTPUT, pluginConfig: "defaults", extraTools: ["read"],
      enforceWindow: true,
    });
    run = new ScenarioRun(suite, new HostConversation(suite, "agent:main:small-8k"), "8k, 1.5k-token messages, minimal profile", MAX_OUTPUT);
    await suite.gateway.start();
  });

  afterAll(async () => {
    await run?.suite.dispose();
  });

  it(`answers ${TURNS} turns, then two more after a gateway restart`, async () => {
    for (let turn = 1; turn <= TURNS; turn++) {
      const tokens = 1_200 + ((turn * 389) % 600);
      await run.say(turn, `turn ${turn}: ${turn === 2 ? `remember this, ${DETAIL}. ` : ""}${fillerText(tokens, `turn-${turn}`)}`);
    }
    await run.suite.gateway.restart();
    for (let turn = TURNS + 1; turn <= TURNS + 2; turn++) await run.say(turn, `turn ${turn}, after the restart: ${fillerText(1_500, `turn-${turn}`)}`);
    expect(run.failures).toEqual([]);
  }, 40 * 60_000);

  it("sends every request within the window; LCM's part of it is the memory floor", () => {
    expect(run.agent().length).toBeGreaterThanOrEqual(TURNS + 2);
    expect(run.requests.filter(({ request }) => overWindow(request, WINDOW) || request.reply.kind === "error").map(({ turn }) => turn)).toEqual([]);
    expect(run.turnRequests().filter(({ request }) => lcmTokens(request.body) > FLOOR_REAL_TOKENS).map(({ turn }) => turn)).toEqual([]);
  });

  it("clamps replies by OpenClaw's own measure from the first turn, where LCM sends nothing", () => {
    const [first] = run.firstOfEachTurn();
    expect(lcmTokens(first!.request.body)).toBe(0);
    expect(clampedOutput(first!.request, MAX_OUTPUT)).toBe(true);
  });

  it("shows the model the newest summary on every turn once there is one, after the restart too", () => {
    const firsts = run.firstOfEachTurn();
    expect(firsts.length).toBe(TURNS + 2);
    const withSummary = firsts.findIndex(({ request }) => carriesSummary(request.body));
    expect(withSummary).toBeGreaterThanOrEqual(0);
    expect(withSummary).toBeLessThan(6); // compaction comes within a few turns
    expect(firsts.slice(withSummary).filter(({ request }) => !carriesSummary(request.body)).map(({ turn }) => turn)).toEqual([]);
    expect(firsts.slice(1).filter(({ request }) => !carriesFloor(request.body)).map(({ turn }) => turn)).toEqual([]);
    expect(firsts.filter(({ turn }) => Number(turn) > TURNS).length).toBe(2); // the turns after the restart are in it
  });

  it("never asks the summarizer for a uselessly small summary, nor calls it over and over", async () => {
    const summaries = run.requests.filter(({ request }) => request.kind === "summary").map(({ request }) => request);
    expect(summaryTargets(summaries).filter((target) => target < 128)).toEqual([]);
    expect(summaries.length).toBeLessThanOrEqual(2 * (TURNS + 2));
  });

  it("compacts on /compact and answers with LCM's figures", async () => {
    await run.session.sendChat("/compact");
    const outcome = (await run.suite.database.conversations(run.session.sessionKey))[0]?.lastCompaction as
      { trigger?: string; compacted?: boolean; tokensBefore?: number; tokensAfter?: number } | null;
    expect(outcome).toMatchObject({ trigger: "compact:threshold", compacted: true });
    expect(outcome!.tokensAfter!).toBeLessThan(outcome!.tokensBefore!);
    expect(await run.lastReply()).toMatch(/Compacted \(.+ → .+\): .*LCM's context uses [\d,]+ tokens of its [\d,]+-token budget/);
  });

  it("names the cause and the fix in /lcm status", async () => {
    await run.session.sendChat("/lcm status");
    const status = await run.lastReply();
    expect(status).toMatch(/Host: OpenClaw's 8,000-token window keeps 2,000 for the reply; its system prompt (about|at least) [\d,]+/);
    expect(status).toMatch(/Too little for history: the model sees only LCM's memory floor/);
    expect(status).toMatch(/Fix: a model with a larger window/);
  });

  it("finds the detail of turn 2 with lcm_grep's default parameters", async () => {
    const requests = await run.say("recall", `what was the vault code? ${callToolMarker("lcm_grep", { pattern: "staging vault code" })}`);
    const last = requests.filter((request) => request.kind === "agent").at(-1)!;
    expect(toolResultsOf(last.body).join("\n")).toContain("4417-KESTREL-09");
  });

  it("leaves no failure in the gateway log but OpenClaw's own reply clamps, and reports its figures", () => {
    expect(failureLines(run.suite).filter((line) => !/insufficient_output_budget/.test(line)).map((line) => line.slice(0, 300))).toEqual([]);
    expect(run.suite.healthProblems()).toEqual([]);
    const figures = run.figures.write(run.suite);
    expect(figures.lcmBudget.max).toBeLessThan(1_024);
    expect(figures.largestRequest.tokens + figures.largestRequest.outputAsked).toBeLessThanOrEqual(WINDOW);
  });
});

describe("an 8k window with tool results of 40% of the window, on the plugin's defaults", () => {
  const WINDOW = 8_000;
  const MAX_OUTPUT = 512;
  const TURNS = 12;
  /** The turn that reads four such files, as the issue measured: no engine can fit its later follow-ups. */
  const FOUR_READS_TURN = 9;
  let run: ScenarioRun;

  beforeAll(async () => {
    const suite = await HostSuite.create({
      name: "small-8k-tools", contextWindow: WINDOW, maxOutputTokens: MAX_OUTPUT, pluginConfig: "defaults", extraTools: ["read"],
      enforceWindow: true,
    });
    run = new ScenarioRun(suite, new HostConversation(suite, "agent:main:small-8k-tools"), "8k, tool results of 40%, minimal profile", MAX_OUTPUT);
    await suite.gateway.start();
  });

  afterAll(async () => {
    await run?.suite.dispose();
  });

  function toolTurn(turn: number, reads: number): string {
    const markers = Array.from({ length: reads }, (_, read) =>
      callToolMarker("read", { path: writeLog(run.suite.workspaceDir, `turn-${turn}-${read}`, WINDOW, 0.4) }));
    return `turn ${turn}: read the logs. ${fillerText(150, `turn-${turn}`)} ${markers.join(" ")}`;
  }

  it(`answers ${TURNS} turns with a read of 40% of the window every third, then two after a restart`, async () => {
    for (let turn = 1; turn <= TURNS; turn++) {
      if (turn % 3 === 0) await run.say(turn, toolTurn(turn, turn === FOUR_READS_TURN ? 4 : 1));
      else await run.say(turn, `turn ${turn}: ${turn === 2 ? `remember this, ${DETAIL}. ` : ""}${fillerText(150, `turn-${turn}`)}`);
    }
    await run.suite.gateway.restart();
    await run.say(TURNS + 1, `turn ${TURNS + 1}, after the restart: ${fillerText(150, `turn-${TURNS + 1}`)}`);
    await run.say(TURNS + 2, toolTurn(TURNS + 2, 1));
    // Only the four-read turn fails, with OpenClaw's own overflow answer.
    expect(run.failures.map((failure) => failure.split(":")[0])).toEqual([`turn ${FOUR_READS_TURN}`]);
    expect(run.failures[0]).toMatch(/Context overflow|context length/i);
  }, 40 * 60_000);

  it("fits every request in the window but those whose own part (OpenClaw's prompt, tools and pending turn) is over it", () => {
    const over = run.requests.filter(({ request }) => request.kind === "agent" && (overWindow(request, WINDOW) || request.reply.kind === "error"));
    expect(new Set(over.map(({ turn }) => turn))).toEqual(new Set([FOUR_READS_TURN]));
    for (const { request } of over) {
      // LCM's part is the floor's line at most: without it the request is over the window still.
      expect(lcmTokens(request.body)).toBeLessThanOrEqual(120);
      expect(request.promptTokens - lcmTokens(request.body)).toBeGreaterThan(WINDOW - MAX_OUTPUT);
    }
    // The single-read follow-ups fit: LCM shed its part to make room for the result.
    const followUps = run.agent(({ turn, request }) => turn !== FOUR_READS_TURN && toolResultsOf(request.body).length > 0);
    expect(followUps.length).toBeGreaterThanOrEqual(4);
    expect(followUps.filter(({ request }) => overWindow(request, WINDOW)).map(({ turn }) => turn)).toEqual([]);
  });

  it("answers the four-read turn's overflow recovery without summarizing the history again", () => {
    // OpenClaw's recovery asked LCM to compact; LCM wrote nothing and said why (the log line and the answer).
    const lines = run.suite.logLines().map((line) => line.text).filter((text) => /\[lcm\] compaction \(compact:budget\)/.test(text));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/no passes, .*the current turn with its tool results is larger than the window allows/);
  });

  it("shows the model the newest summary on every turn once there is one, after the restart too", () => {
    const firsts = run.firstOfEachTurn().filter(({ turn }) => turn !== FOUR_READS_TURN);
    const withSummary = firsts.findIndex(({ request }) => carriesSummary(request.body));
    expect(withSummary).toBeGreaterThanOrEqual(0);
    expect(firsts.slice(withSummary).filter(({ request }) => !carriesSummary(request.body)).map(({ turn }) => turn)).toEqual([]);
    expect(firsts.filter(({ turn }) => Number(turn) > TURNS).length).toBe(2);
  });

  it("compacts on /compact, and lcm_grep's default parameters find turn 2", async () => {
    await run.session.sendChat("/compact");
    expect((await run.suite.database.conversations(run.session.sessionKey))[0]?.lastCompaction).toMatchObject({ trigger: "compact:threshold", compacted: true });
    const requests = await run.say("recall", `what was the vault code? ${callToolMarker("lcm_grep", { pattern: "staging vault code" })}`);
    expect(toolResultsOf(requests.filter((request) => request.kind === "agent").at(-1)!.body).join("\n")).toContain("4417-KESTREL-09");
  });

  it("leaves no engine failure in the gateway log, and reports its figures", () => {
    expect(run.suite.healthProblems()).toEqual([]);
    const figures = run.figures.write(run.suite);
    expect(figures.lcmBudget.max).toBeLessThan(1_024);
  });
});

describe("a 16k window under OpenClaw's coding tool profile (Tool Search on), on the plugin's defaults", () => {
  const WINDOW = 16_000;
  const MAX_OUTPUT = 1_024;
  const TURNS = 6;
  let run: ScenarioRun;

  beforeAll(async () => {
    const suite = await HostSuite.create({
      name: "small-16k-coding", contextWindow: WINDOW, maxOutputTokens: MAX_OUTPUT, pluginConfig: "defaults", enforceWindow: true,
      tools: { profile: "coding" },
    });
    run = new ScenarioRun(suite, new HostConversation(suite, "agent:main:coding-16k"), "16k, 1.5k-token messages, coding profile", MAX_OUTPUT);
    await suite.gateway.start();
  });

  afterAll(async () => {
    await run?.suite.dispose();
  });

  it(`answers ${TURNS} turns within the window, the model seeing the memory floor`, async () => {
    for (let turn = 1; turn <= TURNS; turn++) {
      await run.say(turn, `turn ${turn}: ${turn === 2 ? `remember this, ${DETAIL}. ` : ""}${fillerText(1_500, `turn-${turn}`)}`);
    }
    expect(run.failures).toEqual([]);
    expect(run.requests.filter(({ request }) => overWindow(request, WINDOW) || request.reply.kind === "error").map(({ turn }) => turn)).toEqual([]);
    // From the second turn on the model sees its history: all of it when it fits, else the memory floor.
    expect(run.firstOfEachTurn().length).toBe(TURNS);
    expect(run.firstOfEachTurn().slice(1).filter(({ request }) => !carriesFloor(request.body) && !carriesSummary(request.body))
      .map(({ turn }) => turn)).toEqual([]);
  }, 30 * 60_000);

  it("names the cause and the fix in /lcm status: OpenClaw's prompt and the profile's tools leave history nothing", async () => {
    await run.session.sendChat("/lcm status");
    const status = await run.lastReply();
    expect(status).toMatch(/Host: OpenClaw's 16,000-token window keeps 4,000 for the reply; .* \d+ tool schemas about [\d,]+ \(its measure\); LCM has [\d,]+ tokens for history/);
    expect(status).toMatch(/Too little for history/);
    expect(status).toMatch(/Fix: a model with a larger window, or fewer tools \(tools\.profile "minimal" with LCM's tools in tools\.alsoAllow\)/);
  });

  it("never asks the summarizer for a uselessly small summary, nor calls it over and over", async () => {
    const summaries = run.requests.filter(({ request }) => request.kind === "summary").map(({ request }) => request);
    expect(summaryTargets(summaries).filter((target) => target < 128)).toEqual([]);
    expect(summaries.length).toBeLessThanOrEqual(2 * TURNS);
    // Ordinary messages stay messages: nothing was stored aside.
    expect(await run.suite.database.largeFiles(run.session.sessionKey)).toEqual([]);
  });

  it("leaves no engine failure in the gateway log, and reports its figures", () => {
    expect(run.suite.healthProblems()).toEqual([]);
    run.figures.write(run.suite);
  });
});
