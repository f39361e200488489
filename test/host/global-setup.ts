/**
 * Global setup of `npm run test:host`: stops processes a killed earlier run left behind, installs the pinned
 * OpenClaw when it is missing, builds the plugin and stages a copy for OpenClaw to load,
 * and clears the previous run's artifacts. With LCM_HOST_BACKEND=postgres it starts the run's PostgreSQL server
 * (host-backend.ts). Teardown stops that server and any process a test worker failed to stop.
 */
import { rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startPostgres, type PostgresServer } from "../postgres/postgres-server.js";
import { ensureChromium } from "../browser/browser.js";
import { buildPlugin, ensureOpenClawInstalled, stagePlugin } from "./harness/openclaw-install.js";
import { ON_POSTGRES } from "./harness/host-backend.js";
import { OPENCLAW_VERSION, RUNS_DIR } from "./harness/paths.js";
import { sweepLeftoverProcesses } from "./harness/process-tracker.js";

let postgres: PostgresServer | null = null;

export async function setup(project: TestProject): Promise<void> {
  reportSwept(sweepLeftoverProcesses());
  const install = ensureOpenClawInstalled();
  console.log(install.installed
    ? `[test:host] installed openclaw@${OPENCLAW_VERSION} in ${Math.round(install.durationMs / 1000)} s`
    : `[test:host] openclaw@${OPENCLAW_VERSION} already installed`);
  // operator-tools.test.ts opens the inspector's tab in the Control UI in a real Chromium.
  ensureChromium((line) => console.log(`[test:host] ${line}`));
  const buildMs = buildPlugin();
  console.log(`[test:host] built the plugin in ${Math.round(buildMs / 1000)} s; OpenClaw loads ${stagePlugin()}`);
  rmSync(RUNS_DIR, { recursive: true, force: true });
  console.log(`[test:host] logs, HOMEs and recorded model requests of this run: ${RUNS_DIR}`);
  if (ON_POSTGRES) {
    postgres = await startPostgres({ log: (line) => console.log(`[test:host] ${line}`) });
    console.log(`[test:host] the plugin stores in PostgreSQL: a database per suite on ${postgres.url} (PID ${postgres.pid})`);
  }
  project.provide("hostPostgresUrl", postgres?.url ?? null);
}

export async function teardown(): Promise<void> {
  await postgres?.stop();
  reportSwept(sweepLeftoverProcesses());
}

function reportSwept(swept: string[]): void {
  if (swept.length > 0) console.warn(`[test:host] stopped processes left running: ${swept.join(", ")}`);
}
