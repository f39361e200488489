/**
 * Turn latency as a user feels it, against OpenClaw's own engine (peer lesson lc#1146: on the peer's engine a "Hi"
 * took 44 s where OpenClaw's built-in engine took 3 s). The same 16-turn script runs through the real gateway twice,
 * one gateway after the other, with a model that takes 150 ms per request: on OpenClaw's built-in engine in a
 * window large enough that it never compacts (its fastest case: the fake model's summaries fail its compaction
 * safeguard's quality checks, so it could not compact here anyway), then on LCM on its defaults in a 32k window,
 * where LCM summarizes (through the same model) several times along the way, after each answer (it declares
 * `turnMaintenanceMode: "background"`: with maintenance inside the turn its median was 1.9 s against 1.3 s,
 * docs/operations.md). A turn is timed as the user waits for
 * it: `openclaw agent` from start to answer, its process start included. The figures are printed
 * (docs/operations.md quotes them); the bound is loose because the machine is shared: LCM's median turn within a
 * second of the built-in engine's, and no turn of LCM's slower than 10 s.
 */
import { afterAll, describe, expect, it } from "vitest";
import { delayMarker } from "./fake-model-script.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";

const TURNS = 16;
const WINDOW = { lcm: 32_000, legacy: 200_000 };
const MODEL_DELAY_MS = 150;

interface EngineRun {
  turnMs: number[];
  summaryRequests: number;
}

/** Words of 1-2.5k tokens, varying by turn: LCM's context passes its threshold every few turns. */
function message(turn: number): string {
  return `turn ${turn}: ${fillerText(1_000 + ((turn * 389) % 1_500), `latency-${turn}`)} ${delayMarker(MODEL_DELAY_MS)}`;
}

async function runScript(engine: "lcm" | "legacy"): Promise<EngineRun> {
  const suite = await HostSuite.create({
    name: `latency-${engine}`, contextWindow: WINDOW[engine], maxOutputTokens: 1_024,
    ...(engine === "legacy" ? { contextEngine: "legacy" as const } : { pluginConfig: "defaults" as const }),
  });
  try {
    await suite.gateway.start();
    const session = new HostConversation(suite, `agent:main:latency-${engine}`);
    await session.say(`warm-up ${delayMarker(MODEL_DELAY_MS)}`, { viaCli: true }); // the first turn of a gateway loads its runtime
    const mark = suite.model.mark();
    const turnMs: number[] = [];
    for (let turn = 1; turn <= TURNS; turn++) turnMs.push((await session.say(message(turn), { viaCli: true })).durationMs);
    const summaryRequests = suite.model.requests({ since: mark }).filter((request) => request.kind === "summary").length;
    return { turnMs, summaryRequests };
  } finally {
    await suite.dispose();
  }
}

function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

describe("turn latency: LCM against OpenClaw's built-in engine, in the real gateway", () => {
  const runs: Partial<Record<"lcm" | "legacy", EngineRun>> = {};

  afterAll(() => {
    for (const [engine, run] of Object.entries(runs)) {
      console.log(
        `turn latency (${engine}): ${TURNS} turns, median ${percentile(run.turnMs, 0.5)} ms, p90 ${percentile(run.turnMs, 0.9)} ms, ` +
          `max ${Math.max(...run.turnMs)} ms (first turn ${run.turnMs[0]} ms, slowest later ${Math.max(...run.turnMs.slice(1))} ms), ` +
          `${run.summaryRequests} summarizer requests`,
      );
    }
  });

  it("runs the script on OpenClaw's built-in engine, which never compacts", async () => {
    runs.legacy = await runScript("legacy");
    expect(runs.legacy.turnMs).toHaveLength(TURNS);
    expect(runs.legacy.summaryRequests).toBe(0);
  }, 15 * 60_000);

  it("runs it on LCM with summaries along the way, within a second of the built-in engine's median turn", async () => {
    runs.lcm = await runScript("lcm");
    expect(runs.lcm.summaryRequests).toBeGreaterThan(0);
    expect(percentile(runs.lcm.turnMs, 0.5)).toBeLessThan(percentile(runs.legacy!.turnMs, 0.5) + 1_000);
    // No turn over 10 s, the first included. Before the package bundled its dependencies (dist/vendor), OpenClaw
    // copied their 4,812 files synchronously when LCM first called the model, and the turn waiting on it took 12.7 s
    // beside a 3.2 s median (docs/operations.md, "Plugin loads"); since, the slowest turn was 4.5-5.9 s.
    expect(Math.max(...runs.lcm.turnMs)).toBeLessThan(10_000);
  }, 15 * 60_000);
});
