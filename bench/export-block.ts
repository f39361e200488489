/**
 * Measures `lcm export` on a 100k-message conversation (not a timed test): the large peer database of the import
 * tests is imported (`lcm import lossless-claw --apply --no-index`), then exported as JSONL and as Markdown, each
 * in-process as the bin runs it, with bench/loop-probe.ts watching the event loop. Prints time, size, rate and the
 * longest block (wall-clock, and the main thread's CPU time in it). `npx tsx bench/export-block.ts` (MESSAGES=…).
 */
import { mkdtempSync, statSync } from "node:fs";
import os from "node:os";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildLargePeer } from "../test/transfer/lossless-claw/large-peer.js";
import { runLcmInProcess } from "./lcm-in-process.js";
import { round, startLoopProbe } from "./loop-probe.js";

const MESSAGES = Number(process.env.MESSAGES ?? 100_000);
const directory = mkdtempSync(join(tmpdir(), "lcm-export-block-"));
const source = join(directory, "lcm.db");
const target = join(directory, "lcm-context.db");
buildLargePeer(source, MESSAGES);

/** Runs `lcm <args>` in-process, HOME at the block's folder; returns the exit code. */
const lcm = (args: string[]): Promise<number> => runLcmInProcess(directory, args);

await lcm(["import", "lossless-claw", source, "--db", target, "--apply", "--no-index"]);
const figures: Record<string, unknown> = { messages: MESSAGES, loadAverageBefore: os.loadavg().map(round) };
for (const format of ["jsonl", "markdown"] as const) {
  const out = join(directory, `export.${format}`);
  const probe = startLoopProbe();
  const started = performance.now();
  const exitCode = await lcm(["export", "1", "--format", format, "--out", out, "--db", target]);
  const ms = performance.now() - started;
  const loop = probe.stop();
  figures[format] = {
    exitCode, ms: Math.round(ms), bytes: statSync(out).size, messagesPerSecond: Math.round((MESSAGES * 1_000) / ms),
    longestBlockMs: round(loop.longest.wallMs), longestBlockCpuMs: round(loop.longest.cpuMs), mostCpuInOneBlockMs: round(loop.longestCpu.cpuMs),
    loopDelayP99Ms: round(loop.delayP99Ms),
  };
}
figures.loadAverageAfter = os.loadavg().map(round);
console.log(JSON.stringify(figures, null, 1));
