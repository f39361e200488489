/**
 * Measures the data paths of issue 24 (not a timed test): `lcm import openclaw` (dry run, then --apply) reading an
 * OpenClaw 2026.9.6 agent database of MESSAGES messages in one session from the file (test/fixtures/openclaw-agent-
 * database.ts, the host's layout), then `lcm export` of the backfilled conversation and `lcm import jsonl --apply` of it
 * into a new database (the checks before writing, the doctor check before publishing, indexing included), each
 * in-process as the bin runs it with bench/loop-probe.ts watching the event loop. `npx tsx bench/backfill-block.ts`.
 */
import { mkdtempSync, statSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentMessage } from "../src/host/openclaw-types.js";
import { writeAgentDatabase } from "../test/fixtures/openclaw-agent-database.js";
import { runLcmInProcess } from "./lcm-in-process.js";
import { round, startLoopProbe } from "./loop-probe.js";

const MESSAGES = Number(process.env.MESSAGES ?? 20_000);
const directory = mkdtempSync(join(tmpdir(), "lcm-backfill-block-"));
const stateDir = join(directory, "openclaw");
const database = join(directory, "lcm-context.db");

const messages: AgentMessage[] = Array.from({ length: MESSAGES }, (_, index) => index % 2 === 0
  ? { role: "user", content: `question ${index} about the deployment of service ${index % 97} and its \u2028 logs`, timestamp: 1_790_000_000_000 + index * 1_000 }
  : { role: "assistant", content: [{ type: "text", text: `answer ${index}: the service restarted cleanly after the config change ${index}` }], timestamp: 1_790_000_000_000 + index * 1_000 });
writeAgentDatabase(join(stateDir, "agents", "main", "agent", "openclaw-agent.sqlite"), [{ sessionId: "s-bench", sessionKey: "agent:main:main", messages }]);

/** Runs `lcm <args>` in-process, HOME at the block's folder; returns the exit code. */
const lcm = (args: string[]): Promise<number> => runLcmInProcess(directory, args);

async function measure(name: string, args: string[], figures: Record<string, unknown>): Promise<void> {
  const probe = startLoopProbe();
  const started = performance.now();
  const exitCode = await lcm(args);
  const ms = performance.now() - started;
  const loop = probe.stop();
  figures[name] = {
    exitCode, ms: Math.round(ms), messagesPerSecond: Math.round((MESSAGES * 1_000) / ms),
    longestBlockMs: round(loop.longest.wallMs), longestBlockCpuMs: round(loop.longest.cpuMs),
  };
}

const figures: Record<string, unknown> = { messages: MESSAGES, loadAverageBefore: os.loadavg().map(round) };
await measure("importOpenclawDryRun", ["import", "openclaw", "--state-dir", stateDir, "--db", database], figures);
await measure("importOpenclawApply", ["import", "openclaw", "--state-dir", stateDir, "--db", database, "--apply"], figures);
await measure("importOpenclawAgain", ["import", "openclaw", "--state-dir", stateDir, "--db", database, "--apply"], figures);
const exported = join(directory, "export.jsonl");
await measure("exportJsonl", ["export", "1", "--format", "jsonl", "--out", exported, "--db", database], figures);
await measure("importJsonlApply", ["import", "jsonl", exported, "--db", join(directory, "restored.db"), "--apply"], figures);
figures.exportBytes = statSync(exported).size;
figures.loadAverageAfter = os.loadavg().map(round);
console.log(JSON.stringify(figures, null, 1));
