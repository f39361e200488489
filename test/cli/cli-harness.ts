/**
 * Runs the `lcm` command tree in-process, as the bin does (same commander setup, same runtime), against real
 * database files, capturing stdout, stderr and the exit code; and builds those files through the real engine: turns
 * stored by the engine's batch path (ingestBatch) and compacted by its compact hook.
 */
import { Writable } from "node:stream";
import { Command, CommanderError } from "commander";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { expect } from "vitest";
import type { CliEnvironment } from "../../src/cli/cli-runtime.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { defineLcmCommands } from "../../src/cli/lcm-program.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Milliseconds until the first byte reached stdout (or the end, when nothing was written). */
  firstOutputMs: number;
}

class Capture extends Writable {
  text = "";
  firstAt: number | null = null;
  isTTY = false;
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.firstAt ??= performance.now();
    this.text += chunk.toString();
    done();
  }
}

/** `extra`: what `openclaw lcm` adds to the environment (the host's transcript reader, its model, a clock). */
export async function runLcm(args: string[], env: NodeJS.ProcessEnv = {}, extra: Partial<CliEnvironment> = {}): Promise<CliRun> {
  const stdout = new Capture();
  const stderr = new Capture();
  let code = -1;
  const program = new Command("lcm");
  program.exitOverride();
  program.configureOutput({ writeOut: (text) => stdout.write(text), writeErr: (text) => stderr.write(text) });
  defineLcmCommands(program, {
    stdout: stdout as unknown as NodeJS.WriteStream, stderr: stderr as unknown as NodeJS.WriteStream,
    env: { HOME: "/nonexistent-home", ...env }, setExitCode: (exit) => {
      code = exit;
    },
    ...extra,
  });
  const started = performance.now();
  try {
    await program.parseAsync(["node", "lcm", ...args]);
  } catch (error) {
    code = error instanceof CommanderError && error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  const ended = performance.now();
  return { code, stdout: stdout.text, stderr: stderr.text, firstOutputMs: (stdout.firstAt ?? ended) - started };
}

/** Runs with --json, checks the exit code and that stdout is one JSON document valid against `schema`; returns it. */
export async function runJson<T>(
  args: string[], schema: TSchema, options: { code?: number; env?: NodeJS.ProcessEnv; environment?: Partial<CliEnvironment> } = {},
): Promise<T> {
  const run = await runLcm([...args, "--json"], options.env, options.environment);
  expect(run.code, run.stderr).toBe(options.code ?? EXIT.ok);
  const data = JSON.parse(run.stdout) as unknown;
  const errors = [...Value.Errors(schema, data)].slice(0, 5).map((error) => `${error.path}: ${error.message}`);
  expect(errors).toEqual([]);
  return data as T;
}

/** `turns` exchanges of about `wordsPerMessage` words, with a unique marker word in each. */
export function exchanges(turns: number, wordsPerMessage = 30, prefix = "t"): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const filler = Array.from({ length: wordsPerMessage }, (_, index) => `w${(turn * 7 + index) % 97}`).join(" ");
    messages.push(userMessage(`${prefix}${turn} question marker${prefix}${turn} ${filler}`));
    messages.push(assistantMessage(`${prefix}${turn} answer detail${prefix}${turn} ${filler}`));
  }
  return messages;
}

/** A new database file holding these sessions, compacted (buildDatabase), for a test file's commands to read. */
export async function compactedDatabase(sessions: { sessionKey: string; sessionId: string; messages: AgentMessage[] }[]): Promise<string> {
  const databasePath = tempDatabasePath();
  await buildDatabase({ databasePath, compact: true, sessions });
  return databasePath;
}

/**
 * A database made by the engine: one conversation per entry of `sessions`, each stored through ingestBatch in
 * batches of `batch` messages, then compacted by the compact hook when `compact` is set (deterministic summaries).
 */
export async function buildDatabase(options: {
  databasePath?: string;
  sessions: { sessionKey: string; sessionId: string; messages: AgentMessage[] }[];
  batch?: number;
  compact?: boolean;
  config?: Record<string, unknown>;
}) {
  const harness = createTestEngine({ ...(options.databasePath ? { databasePath: options.databasePath } : {}), config: { leafChunkTokens: 2_000, ...options.config } });
  const batch = options.batch ?? 5_000;
  for (const session of options.sessions) {
    for (let start = 0; start < session.messages.length; start += batch) {
      await harness.newEngine().ingestBatch({ sessionId: session.sessionId, sessionKey: session.sessionKey, messages: session.messages.slice(start, start + batch) });
    }
    // The budget a turn would record, so that status and context show a recorded budget.
    await harness.newEngine().assemble({ sessionId: session.sessionId, sessionKey: session.sessionKey, messages: [], tokenBudget: 8_000 });
    if (options.compact) {
      await harness.newEngine().compact({ sessionId: session.sessionId, sessionKey: session.sessionKey, force: true, compactionTarget: "threshold" });
    }
  }
  return harness;
}
