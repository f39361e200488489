/**
 * Global setup of `npm run test:host`: stops processes a killed earlier run left behind, installs the pinned
 * OpenClaw when it is missing, builds the plugin and stages a copy for OpenClaw to load,
 * and clears the previous run's artifacts. Teardown stops any process a test worker failed to stop.
 */
import { rmSync } from "node:fs";
import { ensureChromium } from "../browser/browser.js";
import { buildPlugin, ensureOpenClawInstalled, stagePlugin } from "./harness/openclaw-install.js";
import { OPENCLAW_VERSION, RUNS_DIR } from "./harness/paths.js";
import { sweepLeftoverProcesses } from "./harness/process-tracker.js";

export function setup(): void {
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
}

export function teardown(): void {
  reportSwept(sweepLeftoverProcesses());
}

function reportSwept(swept: string[]): void {
  if (swept.length > 0) console.warn(`[test:host] stopped processes left running: ${swept.join(", ")}`);
}
