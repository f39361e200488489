/**
 * Where the end-to-end suite finds things: the repository, and outside it (WORK_DIR) the OpenClaw install it
 * manages, the staged copy of the plugin, and the per-run artifact folders (HOMEs, logs, recorded model
 * requests), kept for inspection after a run.
 */
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The OpenClaw release this suite proves the plugin against. Bump it deliberately, then re-run the suite. */
export const OPENCLAW_VERSION = "2026.9.6";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/**
 * Everything the suite writes lives outside the checkout. `openclaw plugins install -l <checkout>` refuses a
 * directory that contains other plugins ("package owner has conflicting child rows"): OpenClaw's own bundled
 * plugins, if OpenClaw were installed inside it, or a copy of this one in a test HOME. One folder per
 * checkout, so two checkouts on one machine do not share it. `LCM_E2E_WORK_DIR` chooses another folder, so two runs
 * from one checkout do not clear each other's artifacts (link its `openclaw/` to an existing install to skip installing).
 */
export const WORK_DIR = process.env.LCM_E2E_WORK_DIR?.trim() ||
  join(tmpdir(), `openclaw-lcm-e2e-${createHash("sha256").update(REPO_ROOT).digest("hex").slice(0, 8)}`);
/** The npm project holding the pinned OpenClaw (installed on demand, kept between runs). */
export const HOST_DIR = join(WORK_DIR, "openclaw");
export const OPENCLAW_PACKAGE_DIR = join(HOST_DIR, "node_modules", "openclaw");
export const OPENCLAW_ENTRY = join(OPENCLAW_PACKAGE_DIR, "openclaw.mjs");
/**
 * The plugin as OpenClaw loads it in the suite: package.json, openclaw.plugin.json and dist/ copied from the
 * repository after the build (node_modules linked back). OpenClaw refuses to start when a loaded plugin's
 * package.json or manifest changes while it starts, and dist/ may be rebuilt by someone else mid-run in a
 * shared checkout; the copy stays fixed for the whole run.
 */
export const PLUGIN_STAGE_DIR = join(WORK_DIR, "plugin");
/** One folder per suite of the latest run; emptied by the global setup. */
export const RUNS_DIR = join(WORK_DIR, "runs");
/** One file per process the suite started and has not stopped yet (see process-tracker.ts). */
export const PIDS_DIR = join(WORK_DIR, "pids");
