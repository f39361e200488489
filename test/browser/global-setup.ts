/**
 * Setup of `npm run test:browser`: Debian's Chromium must be there (installed with apt-get when missing: the tests
 * drive a system browser, never one a test tool downloads), and the inspector's page is bundled from its sources.
 */
import { execFileSync } from "node:child_process";
import { ensureChromium } from "./browser.js";

export function setup(): void {
  ensureChromium((line) => console.log(`[test:browser] ${line}`));
  // Always bundled again (under a second): a page older than its sources would be tested otherwise.
  execFileSync("npx", ["tsx", "scripts/build-inspector.ts"], { stdio: "inherit" });
}
