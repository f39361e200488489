/**
 * The real `lcm` executable (src/cli/bin.ts under tsx, in a process of its own): what a shell sees. `--version`
 * prints the package's version; on a Node without node:sqlite (simulated with Node 24's --no-experimental-sqlite)
 * `--help` and every command say what Node is needed and how to run it, with no stack trace; and a reader that
 * closes the pipe early (`lcm dag --json | head`) ends the command quietly instead of an EPIPE crash.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/exit-codes.js";
import { closeSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { compactedDatabase, exchanges } from "./cli-harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "src/cli/bin.ts");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin; with `closeStdout` the parent closes its end of stdout at once, as `head` does when it has enough. */
function runBin(args: string[], options: { nodeFlags?: string[]; closeStdout?: boolean } = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), "--import", "tsx", BIN, ...args], {
      cwd: ROOT, env: { ...process.env, HOME: "/nonexistent-home", LCM_PROGRESS: "0" }, stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    if (options.closeStdout) child.stdout.destroy();
    else child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

let db: string;

beforeAll(async () => {
  // 40 conversations of a dozen exchanges each, compacted: `dag` and `conversations --json` print far more than a pipe holds.
  db = await compactedDatabase(
    Array.from({ length: 40 }, (_, index) => ({ sessionKey: `agent:main:s${index}`, sessionId: `s${index}`, messages: exchanges(60, 40, `c${index}x`) })),
  );
  closeSharedDatabase(db);
}, 300_000);

describe("the lcm executable", () => {
  it("prints the package's version with --version", async () => {
    const run = await runBin(["--version"]);
    expect(run).toMatchObject({ code: EXIT.ok, stdout: `${VERSION}\n`, stderr: "" });
  }, 60_000);

  it.each([[["--help"]], [["status", "--db", "/tmp/none.db"]], [["grep", "x"]], [["conversations", "--json"]]])(
    "on a Node without node:sqlite, %j says which Node to use and how, without a stack trace",
    async (args) => {
      const run = await runBin(args, { nodeFlags: ["--no-experimental-sqlite"] });
      expect(run.code).toBe(EXIT.unavailable);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/^lcm: cannot run on Node \d+\.\d+\.\d+: it has no node:sqlite module \(LCM needs Node 22\.16 or newer\)\./);
      expect(run.stderr).toMatch(/`npx lcm …`/);
      expect(run.stderr).toMatch(/`openclaw lcm …`/);
      expect(run.stderr).not.toMatch(/\n\s+at |ERR_UNKNOWN_BUILTIN_MODULE/);
    },
    60_000,
  );

  it("still answers --version on a Node without node:sqlite", async () => {
    const run = await runBin(["--version"], { nodeFlags: ["--no-experimental-sqlite"] });
    expect(run).toMatchObject({ code: EXIT.ok, stdout: `${VERSION}\n` });
  }, 60_000);

  it("loads a command's own modules only: lcm status loads neither the imports nor typebox", async () => {
    // A loader hook (Node's registerHooks) writes every module the process loads to stderr.
    const hook = "data:text/javascript," + encodeURIComponent(
      'import { registerHooks } from "node:module"; registerHooks({ load(url, context, next) { process.stderr.write("loaded " + url + "\\n"); return next(url, context); } });',
    );
    const run = await runBin(["status", "--db", db], { nodeFlags: ["--import", hook] });
    expect(run.code).toBe(EXIT.ok);
    const loaded = run.stderr.split("\n").filter((line) => line.startsWith("loaded ") && !line.includes("/node_modules/tsx/"));
    expect(loaded.some((line) => line.includes("/src/cli/commands/status-command.ts"))).toBe(true);
    expect(loaded.filter((line) => /\/src\/(transfer|import)\/|\/src\/cli\/commands\/(import-(jsonl|openclaw|lossless-claw)|export|doctor|describe)|@sinclair\/typebox/.test(line))).toEqual([]);
  }, 60_000);

  it.each([[["dag", "1", "--json"]], [["conversations", "--json"]], [["grep", "question", "--limit", "500"]]])(
    "ends %j quietly when the reader closes the pipe",
    async (args) => {
      const run = await runBin([...args, "--db", db], { closeStdout: true });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(EXIT.ok);
    },
    60_000,
  );
});
