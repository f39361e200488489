/**
 * Acknowledged means stored, in the real gateway (issue 13). Two faults an operator meets: another process holds the
 * plugin database's write lock for the whole of a turn, and the filesystem holding the database fills up and is
 * freed later. Whatever the turns in between did, afterwards every turn OpenClaw answered is stored exactly once,
 * in order, and OpenClaw's durable outbox for the engine is empty: a turn whose commit could not be stored went back
 * to the host (commitTurn threw), was committed again before a later turn, and turns OpenClaw served on its own
 * engine meanwhile were imported from its transcript.
 *
 * The full filesystem is a small tmpfs mounted for the test (the suite runs as root on this machine; without the
 * permission to mount, the test fails and says so).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { ON_POSTGRES } from "./harness/host-backend.js";
import { HostSuite } from "./harness/host-suite.js";
import { WORK_DIR } from "./harness/paths.js";

/**
 * A process that opens the database, takes its write lock, says so on stdout, and rolls back when told to on
 * stdin (or after `maxHoldMs`, should the test die). Released by the test, not by a clock: on a loaded machine a
 * turn can take longer than any fixed hold, and its commit would then find the lock gone.
 */
function holdWriteLock(databasePath: string, maxHoldMs: number): Promise<{ child: ChildProcess; release: () => Promise<void> }> {
  const script = `
    const { DatabaseSync } = require("node:sqlite");
    const db = new DatabaseSync(${JSON.stringify(databasePath)}, { timeout: 60000 });
    db.exec("BEGIN IMMEDIATE");
    db.exec("CREATE TABLE IF NOT EXISTS lock_probe (x)"); // a write, so the lock is the writer's
    process.stdout.write("locked\\n");
    const release = () => { db.exec("ROLLBACK"); db.close(); process.exit(0); };
    process.stdin.on("data", release);
    setTimeout(release, ${maxHoldMs});
  `;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  const release = async () => {
    if (child.exitCode === null) child.stdin!.write("release\n");
    await waitForExit(child);
  };
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("locked")) resolve({ child, release });
    });
    child.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before taking the lock`)));
  });
}

function waitForExit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())));
}

/**
 * PostgreSQL's meaning of the same fault: another session holds an EXCLUSIVE lock on `messages` (reads go on, no
 * write does) until the test releases it, so the turn's commit waits out its statement deadline.
 */
async function holdPostgresWriteLock(url: string): Promise<{ release: () => Promise<void> }> {
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("BEGIN");
  await client.query("LOCK TABLE messages IN EXCLUSIVE MODE");
  return {
    release: async () => {
      await client.query("ROLLBACK");
      await client.end();
    },
  };
}

describe("another process holds the plugin database's write lock for the whole of a turn", () => {
  let suite: HostSuite;
  let session: HostConversation;

  beforeAll(async () => {
    suite = await HostSuite.create({ name: "fault-lock", contextWindow: 32_000 });
    session = new HostConversation(suite, "agent:main:fault-lock");
    await suite.gateway.start();
  });

  afterAll(async () => {
    await suite?.dispose();
  });

  it("answers every turn and stores each exactly once once the lock is gone, with OpenClaw's outbox drained", async () => {
    await session.say("turn 1: before the lock");
    await session.say("turn 2: before the lock");
    const holder = suite.database.url === null ? await holdWriteLock(suite.database.path, 180_000) : await holdPostgresWriteLock(suite.database.url);
    try {
      // commitTurn waits its 15 s write deadline, then hands the turn back to OpenClaw (it throws).
      await session.say("turn 3: while another process holds the lock");
      expect(suite.pendingCommits()).toBe(1);
    } finally {
      await holder.release();
    }
    await session.say("turn 4: after the lock");
    await session.say("turn 5: after the lock");
    expect(suite.pendingCommits()).toBe(0);
    await session.expectStoredExactlyOnce();
    expect(suite.healthProblems().filter((line) => /quarantin/i.test(line))).toEqual([]);
  }, 240_000);
});

// On PostgreSQL the plugin holds no file whose filesystem could fill: the server's disk is the server's fault.
describe.skipIf(ON_POSTGRES)("the filesystem holding the plugin database fills up, then is freed (SQLite only: a database file)", () => {
  let suite: HostSuite;
  let session: HostConversation;
  let mountPoint: string;
  let filler: string;

  beforeAll(async () => {
    // Outside the runs folder (which the next run's setup deletes): a mount left by a killed run is unmounted first.
    mountPoint = join(WORK_DIR, "fault-fs");
    mkdirSync(mountPoint, { recursive: true });
    try {
      execFileSync("umount", [mountPoint], { stdio: "ignore" });
    } catch {
      // Nothing was mounted there: the usual case.
    }
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", mountPoint]);
    } catch (error) {
      throw new Error(`This test mounts a small tmpfs and needs root with the permission to mount: ${String(error)}`);
    }
    filler = join(mountPoint, "filler");
    suite = await HostSuite.create({ name: "fault-full", contextWindow: 32_000, pluginConfig: { databasePath: join(mountPoint, "lcm.db") } });
    session = new HostConversation(suite, "agent:main:fault-full");
    await suite.gateway.start();
  });

  afterAll(async () => {
    await suite?.dispose();
    if (mountPoint) {
      try {
        execFileSync("umount", [mountPoint]);
      } catch (error) {
        console.warn(`[test:host] could not unmount ${mountPoint}: ${String(error)}`);
      }
    }
  });

  it("hands the turns it cannot store back to OpenClaw and stores every one exactly once after space is freed", async () => {
    await session.say("turn 1: plenty of space");
    await session.say("turn 2: plenty of space");
    // Fill the filesystem: the next pages and WAL frames have nowhere to go.
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=1M", "count=64"], { stdio: "ignore" });
    } catch {
      // dd stops with ENOSPC once the tmpfs is full: that is the point.
    }
    const turnsWhileFull = 4;
    for (let turn = 3; turn < 3 + turnsWhileFull; turn++) {
      await session.say(`turn ${turn}: the disk is full ${fillerText(1_500, `full-${turn}`)}`);
    }
    expect(suite.pendingCommits()).toBe(1); // the first turn that could not be stored waits in OpenClaw's outbox
    rmSync(filler);
    await session.say("turn 7: space is back");
    await session.say("turn 8: space is back");
    expect(suite.pendingCommits()).toBe(0);
    await session.expectStoredExactlyOnce();
  }, 300_000);

  it("is served by OpenClaw's own engine, never quarantined, while its commit waits", () => {
    expect(suite.logLines().some((line) => /degraded to "legacy"/.test(line.text))).toBe(true);
    expect(suite.healthProblems().filter((line) => /quarantin/i.test(line))).toEqual([]);
  });
});
