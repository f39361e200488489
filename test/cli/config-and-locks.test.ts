/**
 * What stands between an operator and the database: an invalid LCM_* variable is a warning and ignored (as the README
 * says); a broken openclaw.json does not block `--db`; a bad `--db` gets advice for the person at the shell (never
 * "restart the gateway"); and another process's write lock does not stop `grep` or `doctor`, which read instead.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatusOutput } from "../../src/cli/commands/status-command.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { StatusOutputSchema } from "../../src/cli/output-schemas.js";
import { closeSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { createPeerDatabase } from "../fixtures/peer-database.js";
import { tempDatabasePath, tempDir } from "../helpers/temp-dir.js";
import { buildDatabase, exchanges, runJson, runLcm } from "./cli-harness.js";

let db: string;

beforeAll(async () => {
  db = tempDatabasePath();
  await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(12, 10, "k") }] });
  closeSharedDatabase(db);
});

/** A state folder whose openclaw.json holds `text`. */
function stateWith(text: string): string {
  const state = tempDir("lcm-state-");
  writeFileSync(join(state, "openclaw.json"), text);
  return state;
}

describe("settings", () => {
  it("ignores an invalid LCM_* variable with a warning naming it", async () => {
    const data = await runJson<StatusOutput>(["status", "--db", db], StatusOutputSchema, { env: { LCM_FRESH_TAIL_COUNT: "many" } });
    expect(data.status.totals.messages).toBe(24);
    const run = await runLcm(["status", "--db", db], { LCM_FRESH_TAIL_COUNT: "many" });
    expect(run.code).toBe(EXIT.ok);
    expect(run.stderr).toMatch(/^lcm: warning: Invalid environment variable LCM_FRESH_TAIL_COUNT: "many"\. Expected an integer .* The variable is ignored/);
  });

  it("reads the database --db names when openclaw.json cannot be read, and says so", async () => {
    const state = stateWith("{ plugins: { entries: { lcm: ");
    const run = await runLcm(["status", "--db", db], { OPENCLAW_STATE_DIR: state });
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/^LCM status · database/);
    expect(run.stderr).toMatch(new RegExp(`^lcm: warning: The OpenClaw config ${join(state, "openclaw.json")} could not be read: .*; its LCM settings are not used`));
    // Without --db the file is where the database path comes from: a clear configuration error.
    const blocked = await runLcm(["status"], { OPENCLAW_STATE_DIR: state });
    expect(blocked.code).toBe(EXIT.config);
    expect(blocked.stderr).toMatch(/could not be read: .*\. Fix the file, or pass --db <path>/);
  });

  it("uses the defaults when openclaw.json holds an invalid LCM setting and --db names the database", async () => {
    const state = stateWith(JSON.stringify({ plugins: { entries: { lcm: { config: { freshTailCount: -1 } } } } }));
    const run = await runLcm(["status", "--db", db], { OPENCLAW_STATE_DIR: state });
    expect(run.code).toBe(EXIT.ok);
    expect(run.stderr).toMatch(/^lcm: warning: The LCM settings in .*openclaw\.json are ignored \(Invalid setting "freshTailCount": -1\./);
    expect((await runLcm(["status"], { OPENCLAW_STATE_DIR: state })).code).toBe(EXIT.config);
  });
});

describe("a --db that is not an LCM database", () => {
  const gatewayWords = /restart the gateway|next turn|gateway's user/;

  it("says what to pass for a file that is not SQLite", async () => {
    const path = join(tempDir(), "notes.txt");
    writeFileSync(path, "these are notes, not a database\n".repeat(10));
    const run = await runLcm(["status", "--db", path]);
    expect(run.code).toBe(EXIT.refused);
    expect(run.stderr).toMatch(/is not a SQLite database .*; lcm left it untouched\. Pass --db with the path of an LCM database/);
    expect(run.stderr).not.toMatch(gatewayWords);
  });

  it("points at the import for a lossless-claw database", async () => {
    const path = join(tempDir(), "lcm.db");
    createPeerDatabase(path);
    const run = await runLcm(["status", "--db", path]);
    expect(run.code).toBe(EXIT.refused);
    expect(run.stderr).toMatch(new RegExp(`holds a lossless-claw database .*To bring this lossless-claw history into LCM: lcm import lossless-claw ${path}\\.`));
    expect(run.stderr).not.toMatch(gatewayWords);
  });

  it("says to check the path when there is no file", async () => {
    const run = await runLcm(["status", "--db", join(tempDir(), "typo.db")]);
    expect(run.code).toBe(EXIT.noDatabase);
    expect(run.stderr).toMatch(/no such file; path from --db\)\. Check the path given to --db/);
  });

  it("says which commands still work when a writing command meets a read-only file", async () => {
    const folder = tempDir();
    const path = join(folder, "lcm.db");
    await buildDatabase({ databasePath: path, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(2) }] });
    closeSharedDatabase(path);
    const { chmodSync } = await import("node:fs");
    chmodSync(path, 0o444);
    const run = await runLcm(["compact", "1", "--db", path]);
    expect(run.code).toBe(EXIT.unavailable);
    expect(run.stderr).toMatch(/cannot be written \(the file is read-only \(mode 0?444\)\), and this command writes\. Make it writable for your user/);
    expect(run.stderr).not.toMatch(gatewayWords);
  });
});

describe("another process holding the write lock", () => {
  let holder: ChildProcess | null = null;

  /** A process that takes the database's write lock and keeps it until killed. */
  async function holdWriteLock(path: string): Promise<void> {
    const code = `const { DatabaseSync } = require("node:sqlite"); const db = new DatabaseSync(${JSON.stringify(path)});
      db.exec("BEGIN IMMEDIATE"); db.exec("UPDATE conversations SET updated_at = updated_at"); process.stdout.write("locked\\n");
      setInterval(() => {}, 1000);`;
    holder = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      holder!.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("locked") && resolve());
      holder!.on("exit", (exitCode) => reject(new Error(`the lock holder exited (${exitCode})`)));
    });
  }

  afterAll(() => {
    if (holder?.pid !== undefined && holder.exitCode === null) process.kill(holder.pid, "SIGTERM");
  });

  it("lets grep and doctor read, with a note, and tells a writing command to come back", async () => {
    const folder = tempDir();
    mkdirSync(folder, { recursive: true });
    const path = join(folder, "locked.db");
    await buildDatabase({ databasePath: path, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(6, 10, "q") }] });
    closeSharedDatabase(path);
    await holdWriteLock(path);

    const grep = await runLcm(["grep", "questionmarker|markerq3\\b", "--db", path]);
    expect(grep.code, grep.stderr).toBe(EXIT.ok);
    expect(grep.stdout).toMatch(/^1 match for .* in 1 conversation/);
    expect(grep.stderr).toMatch(/^lcm: another process holds the database's write lock .*: reading without writing; messages not in the full-text index yet are read directly\n$/);

    const doctor = await runLcm(["doctor", "--db", path]);
    expect(doctor.code, doctor.stderr).toBe(EXIT.ok);
    expect(doctor.stdout).toMatch(/^LCM doctor: \d+ checks over 1 conversation \(full-text indexes not checked: another process holds the database's write lock \(a gateway writing, an import, a vacuum\)\) in \d+ ms\.\nNo problems found\./);

    const compact = await runLcm(["compact", "1", "--db", path]);
    expect(compact.code).toBe(EXIT.unavailable);
    expect(compact.stderr).toMatch(/stayed locked by another process for more than 10 s .*this command writes\. Run it again when the other writer .* is done; commands that only read work meanwhile\./);
  }, 120_000);
});
