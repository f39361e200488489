/**
 * Installs the pinned OpenClaw release on demand (paths.ts HOST_DIR), builds and stages the plugin, so
 * `npm run test:host` works on a fresh checkout with nothing but the npm registry. OpenClaw needs Node >= 24.16;
 * every child runs on the Node that runs the suite (the repository pins Node 24 in node_modules/.bin).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { HOST_DIR, OPENCLAW_PACKAGE_DIR, OPENCLAW_VERSION, PLUGIN_STAGE_DIR, REPO_ROOT } from "./paths.js";

const INSTALL_TIMEOUT_MS = 8 * 60_000;
const LOCK_DIR = join(HOST_DIR, ".install-lock");
const STALE_LOCK_MS = 10 * 60_000;

export function installedOpenClawVersion(): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(OPENCLAW_PACKAGE_DIR, "package.json"), "utf8")) as { version?: string };
    return manifest.version;
  } catch {
    return undefined; // not installed (or half-installed): the caller installs
  }
}

/** Installs OpenClaw unless the pinned version is already there. Returns what it did, for the run summary. */
export function ensureOpenClawInstalled(): { installed: boolean; durationMs: number } {
  const started = Date.now();
  if (installedOpenClawVersion() === OPENCLAW_VERSION) return { installed: false, durationMs: 0 };
  withInstallLock(() => {
    if (installedOpenClawVersion() === OPENCLAW_VERSION) return; // another run installed it meanwhile
    mkdirSync(HOST_DIR, { recursive: true });
    const manifest = { name: "lcm-openclaw-host", private: true, dependencies: { openclaw: OPENCLAW_VERSION } };
    writeFileSync(join(HOST_DIR, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    runNpm(["install", "--no-audit", "--no-fund", "--loglevel=error"], HOST_DIR, INSTALL_TIMEOUT_MS);
    const version = installedOpenClawVersion();
    if (version !== OPENCLAW_VERSION) {
      throw new Error(`npm install left openclaw ${version ?? "missing"} in ${HOST_DIR}; expected ${OPENCLAW_VERSION}.`);
    }
  });
  return { installed: true, durationMs: Date.now() - started };
}

/** `npm run build`: OpenClaw loads the plugin from dist/ (package.json openclaw.extensions). */
export function buildPlugin(): number {
  const started = Date.now();
  runNpm(["run", "build", "--silent"], REPO_ROOT, 5 * 60_000);
  return Date.now() - started;
}

/** Files of the plugin package OpenClaw reads (see PLUGIN_STAGE_DIR for why the suite loads a copy). */
const STAGED_ENTRIES = ["package.json", "openclaw.plugin.json", "dist", "README.md"];

export function stagePlugin(): string {
  rmSync(PLUGIN_STAGE_DIR, { recursive: true, force: true });
  mkdirSync(PLUGIN_STAGE_DIR, { recursive: true });
  for (const entry of STAGED_ENTRIES) {
    const source = join(REPO_ROOT, entry);
    if (existsSync(source)) cpSync(source, join(PLUGIN_STAGE_DIR, entry), { recursive: true });
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(PLUGIN_STAGE_DIR, "node_modules"), "dir");
  return PLUGIN_STAGE_DIR;
}

/**
 * Runs npm with the suite's Node first on PATH, so install scripts and OpenClaw's Node version check see Node 24.
 * Under `npm run`, npm_execpath names npm's own script; otherwise the npm on PATH is used.
 */
export function runNpm(args: string[], cwd: string, timeoutMs: number): string {
  const npmScript = process.env.npm_execpath;
  const [command, commandArgs] = npmScript && npmScript.endsWith(".js")
    ? [process.execPath, [npmScript, ...args]]
    : ["npm", args];
  const result = spawnSync(command, commandArgs, {
    cwd,
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` },
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ""}\n${result.stderr ?? ""}`.trim().slice(-4000);
    const why = result.error ? result.error.message : `exit code ${result.status}, signal ${result.signal}`;
    throw new Error(`npm ${args.join(" ")} failed in ${cwd} (${why}).\n${output}`);
  }
  return result.stdout;
}

/** Two runs at once (two engineers, or CI plus a local run) must not install into the same folder together. */
function withInstallLock(body: () => void): void {
  mkdirSync(HOST_DIR, { recursive: true });
  const deadline = Date.now() + INSTALL_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (existsSync(LOCK_DIR) && Date.now() - statSync(LOCK_DIR).mtimeMs > STALE_LOCK_MS) {
        rmSync(LOCK_DIR, { recursive: true, force: true }); // left by a run that was killed mid-install
        continue;
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${LOCK_DIR}; remove it if no install is running.`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1_000);
    }
  }
  try {
    body();
  } finally {
    rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}
