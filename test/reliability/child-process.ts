/**
 * Spawns the crash child (test/reliability/crash-child.mjs, which drives the built plugin) in its own process
 * group, collects its acknowledgements, and kills it with SIGKILL at a chosen moment.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./crash-child.mjs", import.meta.url));

export interface ChildRun {
  acked: number[];
  /** Errors the plugin logged (and warnings that something failed), in order. */
  errors: string[];
  done: string | null;
  killed: boolean;
  stderr: string;
}

/**
 * Runs the child; with `killAfterMs`, kills it that long after it reported READY (plugin loaded), or, with
 * `fromSpawn`, that long after spawning (to hit start-up and migration too).
 */
export function runChild(args: string[], killAfterMs: number | null, fromSpawn = false): Promise<ChildRun> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(process.execPath, [CHILD, ...args], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    const run: ChildRun = { acked: [], errors: [], done: null, killed: false, stderr: "" };
    let buffer = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (line === "READY" && !fromSpawn) armKill();
        if (line.startsWith("ACK ")) run.acked.push(Number(line.slice(4)));
        else if (line.startsWith("ERROR ")) run.errors.push(line.slice(6));
        else if (line.startsWith("DONE")) run.done = line;
      }
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (run.stderr += chunk));
    let timer: NodeJS.Timeout | null = null;
    function armKill() {
      if (killAfterMs === null || timer) return;
      timer = setTimeout(() => {
        run.killed = true;
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // already exited
        }
      }, killAfterMs);
    }
    if (fromSpawn) armKill();
    child.on("close", () => {
      if (timer) clearTimeout(timer);
      resolve(run);
    });
  });
}

export { seededRandom } from "../helpers/agent-session.js";
