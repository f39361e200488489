/**
 * Opening phases: engine construction on an open database (the host builds one engine per turn), and cold open
 * = first engine + first assemble with no connection yet, measured two ways: after closing the shared
 * connection in this process, and in a new process (bench/cold-open-child.ts; module loading is excluded, it is
 * the host's cost). The OS page cache stays warm: dropping it would slow every other process on the machine.
 */
import { execFileSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { closeShared, locationOf } from "../bench-database.js";
import { type BenchContext, conversationOf } from "../context.js";
import { Phase, type PhaseResult, latencyOf, round } from "../measure.js";
import { ROOT, scriptArgs } from "../paths.js";

const CONSTRUCTIONS = 2_000;
const COLD_OPENS_IN_PROCESS = 20;
const COLD_OPENS_NEW_PROCESS = 5;

export async function runOpenPhases(context: BenchContext): Promise<PhaseResult[]> {
  return [await construction(context), await coldOpenInProcess(context), await coldOpenNewProcess(context)];
}

async function construction(context: BenchContext): Promise<PhaseResult> {
  context.host.engine(); // the first one opens the database: that is cold open, measured below
  const phase = new Phase("engine.construct");
  for (let index = 0; index < CONSTRUCTIONS; index++) {
    await phase.time(() => {
      context.host.engine();
    });
  }
  return phase.finish({ values: { constructions: CONSTRUCTIONS } });
}

async function coldOpenInProcess(context: BenchContext): Promise<PhaseResult> {
  const main = conversationOf(context, "main");
  const params = { sessionId: main.sessionId, sessionKey: main.sessionKey, messages: [], tokenBudget: 32_000 };
  const phase = new Phase("open.cold.in-process");
  for (let index = 0; index < COLD_OPENS_IN_PROCESS; index++) {
    await closeShared(context.target);
    await phase.time(() => context.host.engine().assemble(params));
  }
  const closed = context.target.kind === "sqlite" ? "the shared connection closed" : "the shared pool ended (new connections, schema check)";
  return phase.finish({ values: { note: `${closed}, then first engine + first assemble (32k budget)` } });
}

async function coldOpenNewProcess(context: BenchContext): Promise<PhaseResult> {
  const main = conversationOf(context, "main");
  await closeShared(context.target);
  const phase = new Phase("open.cold.new-process");
  const samples: number[] = [];
  const processSamples: number[] = [];
  for (let index = 0; index < COLD_OPENS_NEW_PROCESS; index++) {
    const started = performance.now();
    const output = execFileSync(
      process.execPath,
      [...scriptArgs(import.meta.url, "../cold-open-child"), locationOf(context.target), context.target.filesDirectory, main.sessionId, main.sessionKey],
      { encoding: "utf8", cwd: ROOT },
    );
    processSamples.push(performance.now() - started);
    const measured = JSON.parse(output.trim().split("\n").at(-1)!) as { firstAssembleMs: number; assembledMessages: number };
    samples.push(measured.firstAssembleMs);
  }
  const result = phase.finish({
    latency: latencyOf(samples),
    values: {
      note: "new node process: register + first engine + first assemble, module loading excluded",
      processWallP50Ms: round(latencyOf(processSamples).p50, 1),
    },
  });
  delete result.eventLoopMaxMs; // the child's figure is its own; this process only waited
  return result;
}
