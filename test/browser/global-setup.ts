/**
 * Setup of `npm run test:browser`: Debian's Chromium must be there (installed with apt-get when missing: the tests
 * drive a system browser, never one a test tool downloads), and the inspector's page is bundled from its sources.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { CHROMIUM } from "./browser.js";

export function setup(): void {
  if (!existsSync(CHROMIUM)) {
    console.log(`[test:browser] ${CHROMIUM} is missing: installing Debian's chromium`);
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  }
  // Always bundled again (under a second): a page older than its sources would be tested otherwise.
  execFileSync("npx", ["tsx", "scripts/build-inspector.ts"], { stdio: "inherit" });
}
