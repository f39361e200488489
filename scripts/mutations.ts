/**
 * Mutation check: applies each mutation of scripts/mutation-catalog.ts to a scratch copy of the checkout (never
 * the checkout itself), runs the tests it names, and reports whether some test failed (killed) or none did
 * (survived). The named tests first run on the unmutated copy: a kill means nothing if they fail anyway.
 * Not in CI (minutes of work); docs/mutations.md lists the mutations and the test that kills each.
 *
 *   npx tsx scripts/mutations.ts                  every mutation
 *   npx tsx scripts/mutations.ts --only M3,M6     some of them
 *   npx tsx scripts/mutations.ts --list           the catalog, without running anything
 *   npx tsx scripts/mutations.ts --keep           leave the scratch copy (its path is printed) for a closer look
 */
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Edit, MUTATIONS, type Mutation, type TestRun } from "./mutation-catalog.js";

const CHECKOUT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

interface RunOutcome {
  passed: boolean;
  failedTests: string[];
  logPath: string;
  seconds: number;
}

function parseArguments(argv: string[]): { only: Set<string> | null; list: boolean; keep: boolean } {
  const known = new Set(["--only", "--list", "--keep"]);
  for (const [index, argument] of argv.entries()) {
    if (argument.startsWith("--") && !known.has(argument)) fail(`Unknown option ${argument}: expected --only <ids>, --list or --keep.`);
    if (!argument.startsWith("--") && argv[index - 1] !== "--only") fail(`Unexpected argument "${argument}": ids go after --only, comma-separated.`);
  }
  const onlyAt = argv.indexOf("--only");
  let only: Set<string> | null = null;
  if (onlyAt >= 0) {
    const ids = (argv[onlyAt + 1] ?? "").split(",").filter((id) => id !== "");
    const unknown = ids.filter((id) => !MUTATIONS.some((mutation) => mutation.id === id));
    if (ids.length === 0 || unknown.length > 0) {
      fail(`--only needs mutation ids from the catalog (${MUTATIONS.map((mutation) => mutation.id).join(", ")}); got "${argv[onlyAt + 1] ?? ""}".`);
    }
    only = new Set(ids);
  }
  return { only, list: argv.includes("--list"), keep: argv.includes("--keep") };
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

/** Copies every file git tracks or would track (uncommitted work included) and links node_modules. */
function makeScratchCopy(): string {
  const scratch = mkdtempSync(join(tmpdir(), "lcm-mutations-"));
  const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: CHECKOUT, encoding: "utf8" })
    .split("\0").filter((file) => file !== "");
  for (const file of files) {
    mkdirSync(dirname(join(scratch, file)), { recursive: true });
    try {
      copyFileSync(join(CHECKOUT, file), join(scratch, file));
    } catch (error) {
      // A tracked file deleted in the working tree is not part of the code under test.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  symlinkSync(join(CHECKOUT, "node_modules"), join(scratch, "node_modules"), "dir");
  return scratch;
}

/** Applies the edits to the scratch copy; returns a function that restores the original files. */
function applyEdits(scratch: string, edits: Edit[]): () => void {
  const originals = new Map<string, string>();
  for (const edit of edits) {
    const path = join(scratch, edit.file);
    if (!originals.has(path)) originals.set(path, readFileSync(path, "utf8"));
  }
  const restore = () => { for (const [path, text] of originals) writeFileSync(path, text); };
  try {
    for (const edit of edits) {
      const path = join(scratch, edit.file);
      const text = readFileSync(path, "utf8");
      const occurrences = text.split(edit.find).length - 1;
      if (occurrences !== 1) {
        throw new Error(`${edit.file}: the text to mutate occurs ${occurrences} times (expected once); update scripts/mutation-catalog.ts:\n${edit.find}`);
      }
      writeFileSync(path, text.replace(edit.find, () => edit.replace));
    }
  } catch (error) {
    restore();
    throw error;
  }
  return restore;
}

/** Runs one vitest invocation in the scratch copy with the JSON reporter; never throws for failing tests. */
function runTests(scratch: string, run: TestRun, label: string): Promise<RunOutcome> {
  const report = join(scratch, `.mutation-${label}.json`);
  const logPath = join(scratch, `.mutation-${label}.log`);
  const vitest = join(scratch, "node_modules", "vitest", "vitest.mjs");
  const argv = [vitest, "run", ...run.files, "--reporter=json", `--outputFile=${report}`, ...(run.config ? ["--config", run.config] : [])];
  const started = performance.now();
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, argv, { cwd: scratch, env: { ...process.env, ...run.env }, stdio: ["ignore", "pipe", "pipe"] });
    const output: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      writeFileSync(logPath, Buffer.concat(output));
      let failedTests: string[] = [];
      try {
        const results = JSON.parse(readFileSync(report, "utf8")) as {
          testResults: { name: string; status: string; assertionResults: { fullName: string; status: string }[] }[];
        };
        failedTests = results.testResults.flatMap((file) => {
          const name = file.name.replace(`${scratch}/`, "");
          const failed = file.assertionResults.filter((test) => test.status === "failed").map((test) => `${name} > ${test.fullName}`);
          return failed.length === 0 && file.status === "failed" ? [`${name} (did not run)`] : failed;
        });
      } catch {
        // No report: vitest itself failed (a syntax error the mutation caused, say); the log says why.
        failedTests = ["(vitest wrote no report; see the log)"];
      }
      done({ passed: code === 0, failedTests, logPath, seconds: (performance.now() - started) / 1_000 });
    });
  });
}

function describeRun(run: TestRun): string {
  const env = Object.entries(run.env ?? {}).map(([name, value]) => `${name}=${value} `).join("");
  return `${env}${run.files.join(" ")}${run.config ? ` (--config ${run.config})` : ""}`;
}

async function main(): Promise<void> {
  const options = parseArguments(process.argv.slice(2));
  const chosen = MUTATIONS.filter((mutation) => options.only === null || options.only.has(mutation.id));
  if (options.list) {
    for (const mutation of chosen) console.log(`${mutation.id}: ${mutation.breaks}\n  ${mutation.runs.map(describeRun).join("\n  ")}`);
    return;
  }
  const scratch = makeScratchCopy();
  console.log(`scratch copy: ${scratch}`);
  try {
    // Every distinct run once on the unmutated copy.
    const baselines = new Map<string, TestRun>();
    for (const mutation of chosen) for (const run of mutation.runs) baselines.set(describeRun(run), run);
    let index = 0;
    for (const [description, run] of baselines) {
      const outcome = await runTests(scratch, run, `baseline-${++index}`);
      console.log(`baseline ${outcome.passed ? "passes" : "FAILS"} (${outcome.seconds.toFixed(0)} s): ${description}`);
      if (!outcome.passed) {
        console.error(`The unmutated tests fail (${outcome.failedTests.slice(0, 5).join("; ")}); fix them first. Log: ${outcome.logPath}`);
        process.exitCode = 1;
        return;
      }
    }
    const verdicts: { mutation: Mutation; verdict: "killed" | "survived" | "not applied"; detail: string }[] = [];
    for (const mutation of chosen) {
      let restore: () => void;
      try {
        restore = applyEdits(scratch, mutation.edits);
      } catch (error) {
        verdicts.push({ mutation, verdict: "not applied", detail: (error as Error).message });
        console.log(`${mutation.id}: NOT APPLIED: ${(error as Error).message}`);
        continue;
      }
      try {
        const failed: string[] = [];
        let seconds = 0;
        for (const [position, run] of mutation.runs.entries()) {
          const outcome = await runTests(scratch, run, `${mutation.id}-${position + 1}`);
          seconds += outcome.seconds;
          if (!outcome.passed) failed.push(...outcome.failedTests);
        }
        const verdict = failed.length > 0 ? "killed" : "survived";
        const detail = failed.length > 0 ? `${failed.length} failing:\n    ${failed.join("\n    ")}` : `every named test passed: ${mutation.runs.map(describeRun).join("; ")}`;
        verdicts.push({ mutation, verdict, detail });
        console.log(`${mutation.id}: ${verdict.toUpperCase()} in ${seconds.toFixed(0)} s (${mutation.breaks}). ${detail}`);
      } finally {
        restore();
      }
    }
    const survivors = verdicts.filter((entry) => entry.verdict !== "killed");
    console.log(`\n${verdicts.length - survivors.length} of ${verdicts.length} mutations killed.`);
    for (const entry of survivors) console.log(`  ${entry.mutation.id} ${entry.verdict}: ${entry.detail}`);
    if (survivors.length > 0) process.exitCode = 1;
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
