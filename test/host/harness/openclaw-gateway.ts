/**
 * One `openclaw gateway run` on loopback for a suite. Readiness is the TCP port accepting connections, the
 * gateway's "[gateway] ready" line, and then the `health` RPC answering (through the suite's long-lived client,
 * openclaw-cli.ts `callGateway`). Stopping sends
 * SIGTERM to its process group; OpenClaw drains and exits in a few seconds, workers included.
 */
import { connect, createServer } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { OpenClawCli } from "./openclaw-cli.js";
import { OPENCLAW_ENTRY } from "./paths.js";
import { sleep, spawnTracked, stopTracked, type TrackedProcess } from "./process-tracker.js";

const START_TIMEOUT_MS = 180_000;
/**
 * Printed once channels and sidecars have started. Until then the health RPC times out (each try costs a CLI
 * start); "spawn broker ready" comes much earlier and means nothing for clients.
 */
const READY_LINE = /\[gateway\] ready\b/;

export class OpenClawGateway {
  private process: TrackedProcess | undefined;
  private starts = 0;

  constructor(private readonly options: { cli: OpenClawCli; port: number; workDir: string }) {}

  get pid(): number | undefined {
    return this.process?.pid;
  }

  async start(): Promise<{ durationMs: number }> {
    if (this.process && !this.process.hasExited()) throw new Error("The gateway is already running.");
    const started = Date.now();
    const output = join(this.options.workDir, `gateway-${++this.starts}.out`);
    this.process = spawnTracked("openclaw gateway", process.execPath,
      [OPENCLAW_ENTRY, "gateway", "run", "--port", String(this.options.port), "--bind", "loopback"], {
        env: this.options.cli.env, cwd: this.options.workDir, stdoutFile: output, stderrFile: output,
      });
    const deadline = started + START_TIMEOUT_MS;
    const failure = (why: string) =>
      new Error(`The gateway ${why} (pid ${this.process?.pid}).\nOutput (tail):\n${readTail(output)}`);
    while (!(await isPortOpen(this.options.port)) || !READY_LINE.test(readOutput(output))) {
      if (this.process.hasExited()) throw failure("exited before it was ready");
      if (Date.now() > deadline) throw failure(`was not ready on port ${this.options.port} within ${START_TIMEOUT_MS} ms`);
      await sleep(250);
    }
    for (;;) {
      const healthy = await this.options.cli.callGateway("health", {}, 30_000).then(() => true, () => false);
      if (healthy) break;
      if (this.process.hasExited()) throw failure("exited before it was healthy");
      if (Date.now() > deadline) throw failure(`was not healthy within ${START_TIMEOUT_MS} ms`);
      await sleep(500);
    }
    return { durationMs: Date.now() - started };
  }

  /**
   * Starts a gateway that is expected to refuse to start (an invalid configuration): resolves with its exit code and
   * output once it exits, or throws when it became ready instead.
   */
  async startExpectingExit(timeoutMs = START_TIMEOUT_MS): Promise<{ code: number | null; output: string }> {
    if (this.process && !this.process.hasExited()) throw new Error("The gateway is already running.");
    const output = join(this.options.workDir, `gateway-${++this.starts}.out`);
    const tracked = spawnTracked("openclaw gateway", process.execPath,
      [OPENCLAW_ENTRY, "gateway", "run", "--port", String(this.options.port), "--bind", "loopback"], {
        env: this.options.cli.env, cwd: this.options.workDir, stdoutFile: output, stderrFile: output,
      });
    const deadline = Date.now() + timeoutMs;
    while (!tracked.hasExited()) {
      if (READY_LINE.test(readOutput(output))) {
        await stopTracked(tracked, 20_000);
        throw new Error(`The gateway started although it was expected to refuse.\nOutput (tail):\n${readTail(output)}`);
      }
      if (Date.now() > deadline) {
        await stopTracked(tracked, 20_000);
        throw new Error(`The gateway neither exited nor became ready within ${timeoutMs} ms.`);
      }
      await sleep(250);
    }
    const { code } = await tracked.exited;
    return { code, output: readOutput(output) };
  }

  async stop(): Promise<void> {
    if (!this.process) return;
    await stopTracked(this.process, 20_000);
    this.process = undefined;
  }

  async restart(): Promise<{ durationMs: number }> {
    await this.stop();
    return this.start();
  }
}

/** A loopback port nobody listens on right now (the gateway binds it a moment later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("Could not allocate a loopback port.");
  return address.port;
}

function isPortOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function readOutput(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return ""; // not created yet
  }
}

function readTail(file: string): string {
  return readOutput(file).slice(-4_000) || "(no output)";
}
