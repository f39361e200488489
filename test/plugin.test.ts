import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { closeAllDatabases, openSharedDatabase } from "../src/sqlite/connection-registry.js";
import { MIGRATIONS } from "../src/sqlite/migrations.js";
import { LcmError } from "../src/errors.js";
import plugin from "../index.js";
import { FakePluginApi } from "./fakes/fake-plugin-api.js";
import { createPeerDatabase } from "./fixtures/peer-database.js";
import { userMessage, withIdempotencyKey } from "./helpers/messages.js";
import { tempDir } from "./helpers/temp-dir.js";

describe("plugin entry", () => {
  it("default-exports id, name, description and register", () => {
    expect(plugin.id).toBe("lcm");
    expect(plugin.name).toBeTruthy();
    expect(plugin.description).toBeTruthy();
    expect(typeof plugin.register).toBe("function");
  });

  it("registers the lcm engine with durable transcript semantics, owned compaction and maintenance after the answer", () => {
    const api = new FakePluginApi({ databasePath: join(tempDir(), "lcm.db") });
    plugin.register(api);
    const engine = api.engine("lcm");
    expect(engine.info).toMatchObject({
      id: "lcm",
      ownsCompaction: true,
      turnMaintenanceMode: "background",
      transcriptSemantics: {
        currentTurnFence: "before-current-turn-entry-v1",
        turnAdvancementIdempotency: "atomic-idempotent-v1",
      },
    });
    for (const hook of ["ingest", "assemble", "compact", "commitTurn", "bootstrap", "maintain", "afterTurn", "dispose"] as const) {
      expect(typeof engine[hook]).toBe("function");
    }
  });

  it("registers without side effects: no database until an engine is built, in every registration mode", () => {
    const databasePath = join(tempDir(), "nested", "lcm.db");
    for (const registrationMode of ["full", "discovery", "tool-discovery", "full"]) {
      const api = new FakePluginApi({ databasePath }, { registrationMode });
      plugin.register(api);
      expect([...api.engines.keys()]).toEqual(["lcm"]);
    }
    expect(existsSync(databasePath)).toBe(false);
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    api.engine();
    expect(existsSync(databasePath)).toBe(true);
  });

  it("creates the database owner-only", () => {
    const databasePath = join(tempDir(), "private", "lcm.db");
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    api.engine();
    expect(statSync(databasePath).mode & 0o777).toBe(0o600);
  });

  it("refuses an invalid configuration with a message naming the key", () => {
    const api = new FakePluginApi({ freshTailCount: -1 });
    expect(() => plugin.register(api)).toThrow(LcmError);
    expect(() => plugin.register(api)).toThrow(/"freshTailCount"/);
    expect(api.engines.size).toBe(0);
  });

  it("registers no engine when disabled", () => {
    const api = new FakePluginApi({ enabled: false });
    plugin.register(api);
    expect(api.engines.size).toBe(0);
    expect(api.logs.some((line) => /disabled/.test(line.message))).toBe(true);
  });

  it("shares one connection between engine instances and keeps it open across dispose", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    const first = api.engine();
    await first.commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [withIdempotencyKey(userMessage("hello"), "run1:user")] });
    await first.dispose();
    const second = api.engine();
    const assembled = await second.assemble({ sessionId: "s1", messages: [] });
    expect(assembled.messages).toHaveLength(1);
    expect(openSharedDatabase(databasePath)).toBe(openSharedDatabase(databasePath));
  });

  it("keeps everything across a process restart (connection closed and reopened)", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    await api.engine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [withIdempotencyKey(userMessage("kept"), "run1:user")] });
    closeAllDatabases();
    const again = new FakePluginApi({ databasePath });
    plugin.register(again);
    const engine = again.engine();
    expect(await engine.commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [] })).toEqual({ status: "duplicate" });
    expect((await engine.assemble({ sessionId: "s1", messages: [] })).messages).toMatchObject([{ role: "user", content: "kept" }]);
    expect(
      Number((openSharedDatabase(databasePath).raw.prepare("PRAGMA user_version").get() as { user_version: number }).user_version),
    ).toBe(MIGRATIONS.at(-1)!.version);
  });
});

/**
 * Starts a process that opens `databasePath` in SQLite's exclusive locking mode and writes to it, so that no
 * other connection can even read the file until it exits `holdMs` later. Resolves once the lock is held.
 */
function holdExclusiveLock(databasePath: string, holdMs: number): Promise<ChildProcess> {
  const script = `
    const { DatabaseSync } = require("node:sqlite");
    const db = new DatabaseSync(${JSON.stringify(databasePath)}, { timeout: 5000 });
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS lock_holder (x); INSERT INTO lock_holder VALUES (1); COMMIT");
    process.stdout.write("HELD\\n");
    setTimeout(() => { db.close(); process.exit(0); }, ${holdMs});
  `;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.stdout!.once("data", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`the lock holder exited early (${code})`)));
  });
}

describe("when another process holds the file's lock while an engine opens it", () => {
  it("waits for the lock instead of serving the turn without storing it", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    const first = new FakePluginApi({ databasePath });
    plugin.register(first);
    await first.engine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [withIdempotencyKey(userMessage("before"), "run1:user")] });
    closeAllDatabases(); // as in a gateway process that has not opened the file yet

    const holder = await holdExclusiveLock(databasePath, 400);
    const exited = new Promise((resolve) => holder.once("exit", resolve));
    // The holder really shuts other connections out: a read that does not wait fails.
    const probe = new DatabaseSync(databasePath, { timeout: 0 });
    expect(() => probe.prepare("SELECT count(*) FROM messages").get()).toThrow(/locked/);
    probe.close();

    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    const engine = api.engine(); // opens the file: waits in short sleeps until the holder lets go
    expect(await engine.commitTurn({ sessionId: "s1", advancementKey: "t2", messages: [withIdempotencyKey(userMessage("after"), "run2:user")] }))
      .toEqual({ status: "committed" });
    await exited;
    expect(api.errors()).toEqual([]);
    expect((await engine.assemble({ sessionId: "s1", messages: [] })).messages).toMatchObject([{ content: "before" }, { content: "after" }]);
  });
});

describe("when the database cannot be opened", () => {
  it("serves the turn on the host's messages and says why, without throwing", async () => {
    const blocker = join(tempDir(), "not-a-directory");
    writeFileSync(blocker, "a file where the database folder should be");
    const api = new FakePluginApi({ databasePath: join(blocker, "lcm.db") });
    plugin.register(api, { loadCompactionDelegate: async () => ({ delegate: null, reason: "no OpenClaw here" }) });
    const engine = api.engine();
    expect(engine.info.ownsCompaction).toBe(false);
    const history = [userMessage("keep going")];
    expect((await engine.assemble({ sessionId: "s1", messages: history })).messages).toEqual(history);
    expect(await engine.compact({ sessionId: "s1", sessionKey: "agent:main:main" })).toMatchObject({
      ok: false, compacted: false, reason: expect.stringMatching(/LCM is unavailable\. LCM could not open its database .*lcm\.db: .*Fix: /),
    });
    expect(api.errors()).toEqual([]);
    expect(api.logs.filter((line) => line.level === "warn")).toHaveLength(1);
  });
});

describe("the default database path (no databasePath configured)", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    closeAllDatabases();
  });

  function registerWithStateDir(stateDir: string): FakePluginApi {
    vi.stubEnv("OPENCLAW_STATE_DIR", stateDir);
    vi.stubEnv("LCM_DATABASE_PATH", "");
    const api = new FakePluginApi({});
    plugin.register(api);
    return api;
  }

  it("is lcm-context.db in OpenClaw's state folder", async () => {
    const stateDir = tempDir();
    const api = registerWithStateDir(stateDir);
    await api.engine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [withIdempotencyKey(userMessage("hello"), "run1:user")] });
    expect(readdirSync(stateDir).sort()).toEqual(["lcm-context.db", "lcm-context.db-shm", "lcm-context.db-wal"]);
  });

  it("keeps using an LCM database at the old default lcm.db", async () => {
    const stateDir = tempDir();
    const first = new FakePluginApi({ databasePath: join(stateDir, "lcm.db") });
    plugin.register(first);
    await first.engine().commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [withIdempotencyKey(userMessage("from before"), "run1:user")] });
    closeAllDatabases();
    const api = registerWithStateDir(stateDir);
    const engine = api.engine();
    expect(await engine.commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [] })).toEqual({ status: "duplicate" });
    expect((await engine.assemble({ sessionId: "s1", messages: [] })).messages).toMatchObject([{ content: "from before" }]);
    expect(existsSync(join(stateDir, "lcm-context.db"))).toBe(false);
  });

  it("moves to lcm-context.db past a lossless-claw database at lcm.db, which it leaves untouched", async () => {
    const stateDir = tempDir();
    const peerPath = join(stateDir, "lcm.db");
    createPeerDatabase(peerPath);
    const peerBytes = readFileSync(peerPath);
    const peerMode = statSync(peerPath).mode;
    const api = registerWithStateDir(stateDir);
    const engine = api.engine();
    expect(engine.info.ownsCompaction).toBe(true);
    expect(await engine.commitTurn({ sessionId: "s1", advancementKey: "t1", messages: [withIdempotencyKey(userMessage("hello"), "run1:user")] }))
      .toEqual({ status: "committed" });
    expect(existsSync(join(stateDir, "lcm-context.db"))).toBe(true);
    expect(readFileSync(peerPath).equals(peerBytes)).toBe(true);
    expect(statSync(peerPath).mode).toBe(peerMode);
    expect(api.logs.filter((line) => line.level === "info" && line.message.includes(peerPath))).toEqual([{
      level: "info", message: expect.stringMatching(/Found a lossless-claw database .* left it untouched\. LCM keeps its history in .*lcm-context\.db/),
    }]);
    expect(api.logs.filter((line) => line.level !== "info")).toEqual([]);
  });
});
