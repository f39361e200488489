/**
 * Drives OpenClaw's own CLI (`node openclaw.mjs …`) against one isolated HOME, the way a user would. Each call
 * is a tracked process in its own group, with a deadline; its output is kept under `<suite>/cli/` and a one-line
 * record goes to `<suite>/cli.log`, so a failed run can be read afterwards.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OPENCLAW_ENTRY, OPENCLAW_PACKAGE_DIR } from "./paths.js";
import { sleep, spawnTracked, stopTracked, type TrackedProcess } from "./process-tracker.js";

const RPC_HELPER = join(dirname(fileURLToPath(import.meta.url)), "gateway-rpc-helper.mjs");

export interface CliResult {
  args: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
}

export interface AgentTurn {
  runId: string;
  sessionId: string;
  /** The reply text the CLI printed (all payloads joined). */
  text: string;
  durationMs: number;
  raw: unknown;
}

/** What `openclaw agent --json` prints about a turn (the fields read here). */
interface TurnOutput {
  payloads?: { text?: string | null }[];
  meta?: { aborted?: boolean; stopReason?: string; agentMeta?: { sessionId?: string } };
}

/** Only the fields the suite asserts on; the real output has many more. */
export interface PluginInspection {
  plugin: {
    id: string;
    status: string;
    enabled: boolean;
    activated: boolean;
    contextEngineIds: string[];
    toolNames: string[];
    commands: unknown[];
    configSchema: boolean;
    configJsonSchema?: { properties?: Record<string, unknown> };
    rootDir?: string;
    source?: string;
  };
  tools: unknown[];
  commands: unknown[];
  diagnostics: unknown[];
  install?: { source?: string };
}

/**
 * The environment of every OpenClaw process: an isolated HOME, the suite's Node first on PATH (OpenClaw needs
 * Node >= 24.16), and nothing inherited that would change the plugin or host (LCM_* overrides, OPENCLAW_*, the
 * test runner's own variables).
 */
export function hostEnv(home: string, gatewayToken?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(LCM_|OPENCLAW_|VITEST|NODE_OPTIONS$|NODE_ENV$|TEST$)/.test(key)) continue;
    env[key] = value;
  }
  env.HOME = home;
  env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
  env.NO_COLOR = "1";
  env.FORCE_COLOR = "0";
  if (gatewayToken) env.OPENCLAW_GATEWAY_TOKEN = gatewayToken;
  // Diagnostics: node options for OpenClaw's processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (docs/operations.md).
  if (process.env.HOST_NODE_OPTIONS) env.NODE_OPTIONS = process.env.HOST_NODE_OPTIONS;
  return env;
}

export class OpenClawCli {
  private calls = 0;
  /** The long-lived gateway client (gateway-rpc-helper.mjs), started on the first call that uses it. */
  private rpc: { process: TrackedProcess; port: number } | null = null;

  constructor(private readonly options: { env: NodeJS.ProcessEnv; workDir: string }) {
    mkdirSync(join(options.workDir, "cli"), { recursive: true });
  }

  get env(): NodeJS.ProcessEnv {
    return this.options.env;
  }

  /** Runs `openclaw <args>`; never throws for a failing command (see runOk). */
  async run(args: string[], { timeoutMs = 120_000 }: { timeoutMs?: number } = {}): Promise<CliResult> {
    const number = String(++this.calls).padStart(3, "0");
    const base = join(this.options.workDir, "cli", `${number}-${args.slice(0, 2).join("-").replace(/[^A-Za-z0-9.-]/g, "_")}`);
    const started = Date.now();
    const tracked = spawnTracked(`openclaw ${args[0] ?? ""}`, process.execPath, [OPENCLAW_ENTRY, ...args], {
      env: this.options.env,
      cwd: this.options.workDir,
      stdoutFile: `${base}.out`,
      stderrFile: `${base}.err`,
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void stopTracked(tracked, 2_000);
    }, timeoutMs);
    const { code, signal } = await tracked.exited;
    clearTimeout(timer);
    await stopTracked(tracked, 2_000); // the leader is gone; stop anything it left in its group
    const result: CliResult = {
      args, code, signal, timedOut,
      stdout: readFileSync(`${base}.out`, "utf8"),
      stderr: readFileSync(`${base}.err`, "utf8"),
      durationMs: Date.now() - started,
    };
    appendFileSync(
      join(this.options.workDir, "cli.log"),
      `${new Date(started).toISOString()} ${number} rc=${code}${timedOut ? " TIMEOUT" : ""} ${result.durationMs}ms openclaw ${args.join(" ")}\n`,
    );
    return result;
  }

  /** Runs a command that must succeed; the error carries its output. */
  async runOk(args: string[], options: { timeoutMs?: number } = {}): Promise<CliResult> {
    const result = await this.run(args, options);
    if (result.code !== 0 || result.timedOut) throw new Error(describeFailure(result));
    return result;
  }

  async json<T>(args: string[], options: { timeoutMs?: number } = {}): Promise<T> {
    const result = await this.runOk(args, options);
    return parseJsonOutput<T>(result);
  }

  /**
   * One agent turn through the gateway (or embedded with `local`). The message goes through --message-file so
   * any size and any characters arrive unchanged.
   */
  async agentTurn(
    sessionKey: string,
    message: string,
    { local = false, timeoutSeconds = 150, viaCli = false }: { local?: boolean; timeoutSeconds?: number; viaCli?: boolean } = {},
  ): Promise<AgentTurn> {
    if (!local && !viaCli) return this.agentTurnOverRpc(sessionKey, message, timeoutSeconds);
    const messageFile = join(this.options.workDir, "messages", `${String(this.calls + 1).padStart(3, "0")}.txt`);
    mkdirSync(dirname(messageFile), { recursive: true });
    writeFileSync(messageFile, message);
    const args = ["agent", ...(local ? ["--local"] : []), "--session-key", sessionKey, "--message-file", messageFile,
      "--json", "--timeout", String(timeoutSeconds)];
    const result = await this.runOk(args, { timeoutMs: (timeoutSeconds + 30) * 1_000 });
    // Through the gateway: { runId, status, result: { payloads, meta } }; embedded (--local): { payloads, meta }.
    const output = parseJsonOutput<AgentOutput>(result);
    const turn = output.result ?? output;
    const succeeded = local
      ? turn.meta?.aborted !== true && turn.meta?.stopReason !== "error"
      : output.status === "ok";
    if (!succeeded) throw new Error(`The agent turn did not succeed:\n${describeFailure(result)}`);
    return agentTurnOf(output, result.durationMs);
  }

  /**
   * The same turn as `openclaw agent --session-key … --json` through the gateway (OpenClaw's `agent` method, as the CLI
   * calls it), sent by the long-lived client: about 0.7-1 s a turn instead of 3-5 s, most of which was the CLI's
   * start. Timed turns (turn-latency.test.ts) use the CLI, as a user waits for it.
   */
  private async agentTurnOverRpc(sessionKey: string, message: string, timeoutSeconds: number): Promise<AgentTurn> {
    const idempotencyKey = `e2e-${Date.now()}-${++this.calls}`;
    const started = Date.now();
    const answer = await this.rpcCall("agent", {
      message, sessionKey, deliver: false, timeout: timeoutSeconds, idempotencyKey,
    }, (timeoutSeconds + 30) * 1_000);
    const durationMs = Date.now() - started;
    appendFileSync(join(this.options.workDir, "cli.log"),
      `${new Date(started).toISOString()} ${String(this.calls).padStart(3, "0")} ${answer.ok ? "ok" : "FAILED"} ${durationMs}ms rpc agent --session-key ${sessionKey} (${message.length} chars)\n`);
    const output = (answer.ok ? answer.result : null) as AgentOutput | null;
    if (!output || output.status !== "ok") {
      throw new Error(`The agent turn did not succeed (rpc agent, ${durationMs} ms): ${answer.ok ? JSON.stringify(output).slice(0, 3_000) : answer.error}`);
    }
    return agentTurnOf(output, durationMs);
  }

  /**
   * One gateway method through the long-lived client, as `openclaw gateway call <method>` sends it, without the CLI's
   * start (2.5-5 s a call on the shared machine): how the suite's own plumbing (readiness, chat.send, agent.wait,
   * chat.history) talks to the gateway. Tests of what an operator types keep `gatewayCall`. Throws when the call fails.
   */
  async callGateway<T>(method: string, params: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<T> {
    const started = Date.now();
    const answer = await this.rpcCall(method, params, timeoutMs, false);
    appendFileSync(join(this.options.workDir, "cli.log"),
      `${new Date(started).toISOString()} --- ${answer.ok ? "ok" : "FAILED"} ${Date.now() - started}ms rpc ${method}\n`);
    if (!answer.ok) throw new Error(`The gateway call ${method} failed: ${answer.error}`);
    return answer.result as T;
  }

  /** One call through the long-lived client: {ok, result} or {ok: false, error} (never throws for the call's own failure). */
  private async rpcCall(
    method: string, params: Record<string, unknown>, timeoutMs: number, expectFinal = true,
  ): Promise<{ ok: true; result: unknown } | { ok: false; error: string }> {
    const { port } = await this.rpcClient();
    const response = await fetch(`http://127.0.0.1:${port}/`, {
      method: "POST", body: JSON.stringify({ method, params, timeoutMs, expectFinal }), signal: AbortSignal.timeout(timeoutMs + 15_000),
    });
    return await response.json() as { ok: true; result: unknown } | { ok: false; error: string };
  }

  private async rpcClient(): Promise<{ process: TrackedProcess; port: number }> {
    if (this.rpc && !this.rpc.process.hasExited()) return this.rpc;
    const portFile = join(this.options.workDir, "rpc-helper.port");
    rmSync(portFile, { force: true });
    const output = join(this.options.workDir, "rpc-helper.out");
    const process = spawnTracked("gateway rpc client", globalThis.process.execPath, [RPC_HELPER, OPENCLAW_PACKAGE_DIR, portFile], {
      env: this.options.env, cwd: this.options.workDir, stdoutFile: output, stderrFile: output,
    });
    const deadline = Date.now() + 60_000;
    while (!existsSync(portFile) || readFileSync(portFile, "utf8") === "") {
      if (process.hasExited()) throw new Error(`The gateway rpc client exited:\n${readFileSync(output, "utf8").slice(-3_000)}`);
      if (Date.now() > deadline) throw new Error(`The gateway rpc client did not start within 60 s:\n${readFileSync(output, "utf8").slice(-3_000)}`);
      await sleep(50);
    }
    this.rpc = { process, port: Number(readFileSync(portFile, "utf8")) };
    return this.rpc;
  }

  /** Stops the long-lived client (HostSuite.dispose). */
  async close(): Promise<void> {
    if (this.rpc) await stopTracked(this.rpc.process, 2_000);
    this.rpc = null;
  }

  /** `openclaw gateway call <method> --params <json> --json`. */
  gatewayCall<T>(method: string, params: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<T> {
    return this.json<T>(
      ["gateway", "call", method, "--params", JSON.stringify(params), "--json", "--timeout", String(timeoutMs)],
      { timeoutMs: timeoutMs + 30_000 },
    );
  }

  /**
   * `openclaw plugins inspect <id> --runtime --json`. When the plugin's files changed while OpenClaw loaded it
   * (someone building in a shared checkout), OpenClaw reports a load error that asks to retry: retried twice.
   */
  async inspectPlugin(id: string): Promise<PluginInspection> {
    for (let attempt = 1; ; attempt++) {
      const inspection = await this.json<PluginInspection>(["plugins", "inspect", id, "--runtime", "--json"], { timeoutMs: 120_000 });
      const changedWhileLoading = JSON.stringify(inspection.diagnostics ?? []).includes("changed while preparing");
      if (!changedWhileLoading || attempt === 3) return inspection;
    }
  }
}

/** What the `agent` method answers through the gateway: { runId, status, result: { payloads, meta } }; embedded: { payloads, meta }. */
type AgentOutput = TurnOutput & { runId?: string; status?: string; result?: TurnOutput };

/** A turn as the tests read it, from the `agent` method's answer (through the CLI or the long-lived client). */
function agentTurnOf(output: AgentOutput, durationMs: number): AgentTurn {
  const turn = output.result ?? output;
  return {
    runId: output.runId ?? "",
    sessionId: turn.meta?.agentMeta?.sessionId ?? "",
    text: (turn.payloads ?? []).map((payload) => payload.text ?? "").join("\n"),
    durationMs,
    raw: output,
  };
}

/** The JSON document in a command's stdout (OpenClaw may print notices before it). */
export function parseJsonOutput<T>(result: CliResult): T {
  const start = result.stdout.search(/^[{[]/m);
  if (start < 0) throw new Error(`Expected JSON output:\n${describeFailure(result)}`);
  try {
    return JSON.parse(result.stdout.slice(start)) as T;
  } catch (error) {
    throw new Error(`Could not parse JSON output (${(error as Error).message}):\n${describeFailure(result)}`);
  }
}

function describeFailure(result: CliResult): string {
  const how = result.timedOut ? "timed out" : `exited with code ${result.code}${result.signal ? ` (${result.signal})` : ""}`;
  return `openclaw ${result.args.join(" ")} ${how} after ${result.durationMs} ms.\n` +
    `stdout (tail):\n${result.stdout.slice(-3_000)}\nstderr (tail):\n${result.stderr.slice(-3_000)}`;
}
