/**
 * Starts every OpenClaw process of the suite in its own process group (a gateway that shared the runner's group
 * was observed to receive a stray SIGTERM) and stops it by PID, whatever happens to the test: suites stop what
 * they started in afterAll, an exit handler covers a worker that ends early, and a PID file per live process lets
 * the global teardown (and the next run's setup) stop anything a killed worker left behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PIDS_DIR } from "./paths.js";

export interface TrackedProcess {
  readonly pid: number;
  readonly label: string;
  readonly child: ChildProcess;
  /** Settles when the group leader exits. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
}

export interface SpawnOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Files receiving the process's stdout and stderr (appended). */
  stdoutFile: string;
  stderrFile: string;
}

const live = new Map<number, TrackedProcess>();
let exitHandlerInstalled = false;

export function spawnTracked(label: string, command: string, args: string[], options: SpawnOptions): TrackedProcess {
  installExitHandler();
  const stdout = openSync(options.stdoutFile, "a");
  const stderr = openSync(options.stderrFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ["ignore", stdout, stderr] });
  } finally {
    closeSync(stdout);
    closeSync(stderr);
  }
  if (child.pid === undefined) throw new Error(`Could not start ${label}: ${command} ${args.join(" ")}`);
  const pid = child.pid;
  let exitedFlag = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      exitedFlag = true;
      resolve({ code, signal });
    });
    child.once("error", () => {
      exitedFlag = true;
      resolve({ code: null, signal: null });
    });
  });
  const tracked: TrackedProcess = { pid, label, child, exited, hasExited: () => exitedFlag };
  live.set(pid, tracked);
  mkdirSync(PIDS_DIR, { recursive: true });
  writeFileSync(join(PIDS_DIR, String(pid)), JSON.stringify({ pid, label, command: [command, ...args].join(" ") }));
  void exited.then(() => {
    // The leader is gone; its group may still hold workers until stopTracked has swept it.
    if (!isGroupAlive(pid)) forget(pid);
  });
  return tracked;
}

/** SIGTERM to the process group, then SIGKILL after `graceMs` if any member is still alive. */
export async function stopTracked(tracked: TrackedProcess, graceMs = 15_000): Promise<void> {
  signalGroup(tracked.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (isGroupAlive(tracked.pid) && Date.now() < deadline) await sleep(200);
  if (isGroupAlive(tracked.pid)) {
    signalGroup(tracked.pid, "SIGKILL");
    while (isGroupAlive(tracked.pid)) await sleep(100);
  }
  forget(tracked.pid);
}

/** Stops every process this worker started (used by exit handlers; synchronous on purpose). */
export function killAllTrackedSync(): void {
  for (const pid of [...live.keys()]) {
    signalGroup(pid, "SIGKILL");
    forget(pid);
  }
}

/**
 * Stops processes recorded by earlier or crashed workers. A PID is signalled only while its command line is still
 * the recorded command (or names OpenClaw), so a recycled PID of an unrelated process is never touched.
 */
export function sweepLeftoverProcesses(): string[] {
  const swept: string[] = [];
  let files: string[];
  try {
    files = readdirSync(PIDS_DIR);
  } catch {
    return swept; // no PID folder: nothing was left behind
  }
  for (const file of files) {
    const path = join(PIDS_DIR, file);
    try {
      const record = JSON.parse(readFileSync(path, "utf8")) as { pid: number; label: string; command: string };
      const cmdline = readCmdline(record.pid);
      // OpenClaw may retitle itself (process.title), so its name is accepted as well as the exact command.
      if (cmdline !== undefined && (cmdline === record.command || /openclaw/i.test(cmdline))) {
        signalGroup(record.pid, "SIGKILL");
        swept.push(`${record.label} (pid ${record.pid})`);
      }
    } catch (error) {
      console.warn(`Ignoring unreadable PID file ${path}: ${(error as Error).message}`);
    }
    rmSync(path, { force: true });
  }
  return swept;
}

function readCmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    return undefined; // the process is gone
  }
}

function forget(pid: number): void {
  live.delete(pid);
  rmSync(join(PIDS_DIR, String(pid)), { force: true });
}

function isGroupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error; // ESRCH: already gone, nothing to stop
  }
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.once("exit", killAllTrackedSync);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
