/**
 * A recording fake of OpenClaw's api.runtime.subagent. `run` records its params and returns a run id; the
 * helper's work (`play`) runs when the test's code waits, as the real child runs between run and waitForRun —
 * typically the test plays the helper by calling the registered lcm_expand tool with the child's session key.
 */
import type { SubagentRuntime } from "../../src/host/openclaw-types.js";

type RunParams = Parameters<SubagentRuntime["run"]>[0];

export interface SubagentScript {
  /** The helper's work; returns its final reply text. */
  play?: (params: RunParams) => string | Promise<string>;
  /** `run` throws this (e.g. requestScopeError()). */
  runError?: unknown;
  /** What waitForRun reports; default "ok". */
  status?: "ok" | "error" | "timeout" | "pending";
}

export class RecordingSubagentRuntime implements SubagentRuntime {
  readonly runs: RunParams[] = [];
  readonly waits: { runId: string; timeoutMs?: number }[] = [];
  readonly deletes: { sessionKey: string; deleteTranscript?: boolean }[] = [];
  private readonly started = new Map<string, RunParams>();

  constructor(private readonly script: SubagentScript = {}) {}

  async run(params: RunParams): Promise<{ runId: string; sessionKey?: string }> {
    this.runs.push(params);
    if (this.script.runError !== undefined) throw this.script.runError;
    const runId = `run-${this.runs.length}`;
    this.started.set(runId, params);
    return { runId, sessionKey: params.sessionKey };
  }

  async waitForRun(params: { runId: string; timeoutMs?: number }): Promise<{ status: string; terminalReply?: { text?: string }; error?: unknown }> {
    this.waits.push(params);
    const run = this.started.get(params.runId);
    if (!run) return { status: "error", error: `unknown run ${params.runId}` };
    const status = this.script.status ?? "ok";
    const text = this.script.play ? await this.script.play(run) : "";
    if (status !== "ok") return { status, error: status === "error" ? "the child model failed" : undefined };
    return { status: "ok", terminalReply: { text } };
  }

  async getSessionMessages(): Promise<{ messages: unknown[] }> {
    return { messages: [] };
  }

  async deleteSession(params: { sessionKey: string; deleteTranscript?: boolean }): Promise<void> {
    this.deletes.push(params);
  }
}

/** The error OpenClaw throws from every subagent method outside a gateway request (`openclaw agent --local`). */
export function requestScopeError(): Error {
  const error = new Error("Plugin runtime subagent methods are only available during a gateway request.");
  error.name = "RequestScopedSubagentRuntimeError";
  (error as Error & { code: string }).code = "OPENCLAW_SUBAGENT_RUNTIME_REQUEST_SCOPE";
  return error;
}
