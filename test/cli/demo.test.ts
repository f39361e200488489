/**
 * `npm run demo` (scripts/demo.ts) in a process of its own, as a newcomer runs it: the table is not drowned in log
 * lines (one row per 25 turns; each compaction only with --verbose), the spend guard is stated up front and counted
 * at the end (raised for the free fake model; a lower cap that trips is reported), and the database is kept, with
 * the `lcm` commands to look at it, which work on it.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/temp-dir.js";
import { runLcm } from "./cli-harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function runDemo(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "scripts/demo.ts"), ...args], {
    cwd: ROOT, encoding: "utf8", env: { ...process.env, ANTHROPIC_API_KEY: "", ...env }, timeout: 240_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("npm run demo", () => {
  it("prints a table without log lines, keeps its database and says how to look at it", async () => {
    const db = join(tempDir(), "demo.db");
    const run = runDemo(["--turns", "50", "--db", db]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\nSpend guard: at most 100,000 summarizer model calls per 60 min, raised for the free fake model \(keep the default 100 with a real one\)/);
    const rows = run.stdout.split("\n").filter((line) => /^\s*\d+ \|\s+\d+ \|/.test(line));
    expect(rows.map((row) => Number(row.trim().split(" ")[0]))).toEqual([1, 25, 50, 50]);
    expect(run.stdout).not.toMatch(/"conversation_id"|^\s+turn \d+\s+maintain:/m);
    expect(run.stdout).toMatch(/\nCompactions: \d+ \(.*maintain:incremental.*\); passes: .*leaf normal.*\nSpend guard: never reached\.\n/);
    expect(run.stdout).toContain(`\nThe database is kept at ${db}. Look at it with the lcm CLI (from this folder):\n  npx lcm status 1 --db ${db}`);
    expect(existsSync(db)).toBe(true);
    const status = await runLcm(["status", "1", "--db", db]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^LCM status · conversation 1 \(agent main\)\nStored: \d{3} messages/);
  }, 300_000);

  it("shows every compaction with --verbose and reports a spend guard that trips", () => {
    const run = runDemo(["--turns", "30", "--db", join(tempDir(), "demo.db"), "--verbose"], { LCM_MAX_SUMMARY_CALLS_PER_WINDOW: "2" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\nSpend guard: at most 2 summarizer model calls per 60 min; past it/);
    expect(run.stdout).toMatch(/^\s+turn \d+\s+maintain:incremental .* tokens/m);
    expect(run.stdout).toMatch(/\nSpend guard: \d+ summaries written without a model \(the cap was reached\)\.\n/);
  }, 300_000);

  it("refuses to write over an existing file", () => {
    const db = join(tempDir(), "demo.db");
    expect(runDemo(["--turns", "2", "--db", db]).code).toBe(0);
    const again = runDemo(["--turns", "2", "--db", db]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/--db .*demo\.db exists; the demo writes a new database/);
  }, 300_000);
});
