import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { closeAllDatabases, openDatabase } from "../../src/sqlite/connection-registry.js";
import { Database } from "../../src/sqlite/database.js";
import { inspectDatabaseFile, LCM_APPLICATION_ID } from "../../src/sqlite/database-file.js";
import { chooseDefaultDatabasePath } from "../../src/sqlite/default-database-path.js";
import { migrate, MIGRATIONS } from "../../src/sqlite/migrations.js";
import { isLcmError } from "../../src/errors.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { createPeerDatabase } from "../fixtures/peer-database.js";
import { tempDir } from "../helpers/temp-dir.js";
import { hostLogger } from "../../src/runtime/host-logger.js";

const LATEST = MIGRATIONS.at(-1)!.version;

/** Every file of a folder with its mode and content hash: what "left untouched" is checked against. */
function folderSnapshot(folder: string): Record<string, string> {
  return Object.fromEntries(readdirSync(folder).sort().map((name) => {
    const path = join(folder, name);
    const info = statSync(path);
    const content = info.isFile() ? createHash("sha256").update(readFileSync(path)).digest("hex") : "folder";
    return [name, `${(info.mode & 0o777).toString(8)} ${content}`];
  }));
}

function applicationIdOf(path: string): number {
  const raw = new DatabaseSync(path, { readOnly: true });
  try {
    return Number((raw.prepare("PRAGMA application_id").get() as { application_id: number }).application_id);
  } finally {
    raw.close();
  }
}

describe("inspectDatabaseFile", () => {
  it("tells a missing path, an empty file and a fresh LCM database apart", () => {
    const folder = tempDir();
    expect(inspectDatabaseFile(join(folder, "none.db"))).toEqual({ kind: "missing" });
    writeFileSync(join(folder, "empty.db"), "");
    expect(inspectDatabaseFile(join(folder, "empty.db"))).toEqual({ kind: "new" });
    openDatabase(join(folder, "ours.db")).close();
    expect(inspectDatabaseFile(join(folder, "ours.db"))).toEqual({ kind: "ours", schemaVersion: LATEST });
  });

  it("recognises an LCM file from before the application id by its schema (version 4: committed_turns, search_index_state)", () => {
    const path = join(tempDir(), "old.db");
    const old = new Database(path);
    migrate(old, MIGRATIONS.filter((migration) => migration.version <= 4));
    old.close();
    expect(applicationIdOf(path)).toBe(0);
    expect(inspectDatabaseFile(path)).toEqual({ kind: "ours", schemaVersion: 4 });
  });

  it("names a lossless-claw database by what it holds, and leaves it and its folder exactly as they were (WAL, no -wal or -shm created)", () => {
    const folder = tempDir();
    const path = join(folder, "lcm.db");
    createPeerDatabase(path);
    const before = folderSnapshot(folder);
    expect(inspectDatabaseFile(path)).toEqual({
      kind: "foreign", peer: true, found: "a lossless-claw database (tables conversations, messages, summaries, message_parts, …)",
    });
    expect(folderSnapshot(folder)).toEqual(before);
  });

  it("says what a file that is not SQLite starts with", () => {
    const path = join(tempDir(), "notes.db");
    writeFileSync(path, "meeting notes, definitely not a database\n");
    expect(inspectDatabaseFile(path)).toEqual({ kind: "not-sqlite", found: 'not a SQLite database (it starts with "meeting notes, d…")' });
    const folder = join(tempDir(), "a-folder.db");
    mkdirSync(folder);
    expect(inspectDatabaseFile(folder)).toMatchObject({ kind: "not-sqlite", found: "not a regular file (a directory)" });
  });

  it("calls a SQLite file with another application id or unknown tables another application's", () => {
    const folder = tempDir();
    const marked = new DatabaseSync(join(folder, "marked.db"));
    marked.exec("PRAGMA application_id = 1234; CREATE TABLE notes (text)");
    marked.close();
    expect(inspectDatabaseFile(join(folder, "marked.db"))).toEqual({
      kind: "foreign", peer: false, found: "a SQLite database of another application (application_id 0x000004d2, tables notes)",
    });
    const plain = new DatabaseSync(join(folder, "plain.db"));
    plain.exec("CREATE TABLE conversations (id); CREATE TABLE photos (id)");
    plain.close();
    expect(inspectDatabaseFile(join(folder, "plain.db"))).toEqual({
      kind: "foreign", peer: false, found: "a SQLite database of another application (tables conversations, photos)",
    });
  });
});

describe("opening a file for writing", () => {
  it("marks new and older LCM files with LCM's application id (migration 6)", () => {
    const folder = tempDir();
    openDatabase(join(folder, "new.db")).close();
    expect(applicationIdOf(join(folder, "new.db"))).toBe(LCM_APPLICATION_ID);
    const old = new Database(join(folder, "old.db"));
    migrate(old, MIGRATIONS.filter((migration) => migration.version <= 4));
    old.close();
    openDatabase(join(folder, "old.db")).close();
    expect(applicationIdOf(join(folder, "old.db"))).toBe(LCM_APPLICATION_ID);
  });

  it.each(["wal", "delete"] as const)("refuses a lossless-claw database (journal %s) and changes nothing: bytes, mode, journal mode, companion files", (journal) => {
    const folder = tempDir();
    const path = join(folder, "lcm.db");
    createPeerDatabase(path, { journal });
    chmodSync(path, 0o644);
    const before = folderSnapshot(folder);
    let thrown: unknown;
    try {
      openDatabase(path);
    } catch (error) {
      thrown = error;
    }
    expect(isLcmError(thrown, "unavailable")).toBe(true);
    expect((thrown as Error).message).toContain(`${path} holds a lossless-claw database (tables conversations, messages, summaries, message_parts, …)`);
    expect(folderSnapshot(folder)).toEqual(before);
    closeAllDatabases();
  });
});

describe("the default database path", () => {
  const logs = () => {
    const api = new FakePluginApi();
    return { api, logger: hostLogger(api.logger) };
  };

  it("is lcm-context.db in the state folder when nothing is at the old lcm.db", () => {
    const stateDir = tempDir();
    const { api, logger } = logs();
    expect(chooseDefaultDatabasePath({ OPENCLAW_STATE_DIR: stateDir }, logger)).toBe(join(stateDir, "lcm-context.db"));
    expect(api.logs).toEqual([]);
  });

  it("stays lcm.db when an LCM database is there", () => {
    const stateDir = tempDir();
    openDatabase(join(stateDir, "lcm.db")).close();
    const { logger } = logs();
    expect(chooseDefaultDatabasePath({ OPENCLAW_STATE_DIR: stateDir }, logger)).toBe(join(stateDir, "lcm.db"));
  });

  it("moves to lcm-context.db past a lossless-claw database at lcm.db, saying so once", () => {
    const stateDir = tempDir();
    createPeerDatabase(join(stateDir, "lcm.db"));
    const { api, logger } = logs();
    for (let call = 0; call < 3; call++) {
      expect(chooseDefaultDatabasePath({ OPENCLAW_STATE_DIR: stateDir }, logger)).toBe(join(stateDir, "lcm-context.db"));
    }
    expect(api.logs).toEqual([{
      level: "info",
      message: expect.stringMatching(new RegExp(`Found a lossless-claw database .* at ${join(stateDir, "lcm.db")}.*left it untouched.*${join(stateDir, "lcm-context.db")}`)),
    }]);
    expect(existsSync(join(stateDir, "lcm-context.db"))).toBe(false); // choosing creates nothing
  });
});
