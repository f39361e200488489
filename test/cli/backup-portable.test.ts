/**
 * `lcm backup` writes the database and its stored files together, and the backup works wherever it is opened: the
 * original moved away, the backup's describe, grep over stored files and doctor find every file. Stored-file paths
 * are recorded relative to the database's folder (migration 13 made older rows so); the backup takes the database's
 * permissions. The documented restore (docs/operations.md) is run as written.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import type { BackupOutput } from "../../src/cli/commands/backup-command.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { BackupOutputSchema, DescribeOutputSchema, DoctorOutputSchema, GrepOutputSchema } from "../../src/cli/output-schemas.js";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import { Database } from "../../src/sqlite/database.js";
import { MIGRATIONS, migrate } from "../../src/sqlite/migrations.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";
import { buildDatabase, runJson, runLcm } from "./cli-harness.js";

/** A tool output large enough to be stored aside (the threshold is set to 200 tokens), with a line to grep for. */
const OUTPUT = Array.from({ length: 400 }, (_, line) => `build step ${line}: ${line === 321 ? "the signing key expired" : "ok"}`).join("\n");

async function databaseWithStoredFile(databasePath: string): Promise<string> {
  await buildDatabase({
    databasePath,
    config: { largeFileTokenThreshold: 200 },
    sessions: [{
      sessionKey: "agent:main:main", sessionId: "s1",
      messages: [
        userMessage("run the build"),
        toolCallMessage([{ id: "call_build", name: "exec", arguments: { command: "make" } }]),
        toolResultMessage("call_build", "exec", OUTPUT),
        assistantMessage("the signing key expired"),
      ],
    }],
  });
  const database = new DatabaseSync(databasePath, { readOnly: true });
  const row = database.prepare("SELECT file_id, storage_path FROM large_files").get() as { file_id: string; storage_path: string };
  database.close();
  // Recorded relative to the database's folder: `<name>-files/<conversation>/<file>`.
  expect(row.storage_path).toBe(`lcm-files/1/${row.file_id}.txt`);
  return row.file_id;
}

describe("lcm backup with stored files", () => {
  it("writes the database and its files; opened after the original moved away, describe, grep and doctor find every file", async () => {
    const home = tempDir();
    const db = join(home, "lcm.db");
    const fileId = await databaseWithStoredFile(db);
    expect(statSync(db).mode & 0o777).toBe(0o600);
    const target = join(tempDir(), "nightly.db");
    const backup = await runJson<BackupOutput>(["backup", target, "--db", db], BackupOutputSchema);
    const filesDirectory = join(dirname(target), "nightly-files");
    expect(backup).toMatchObject({ path: target, mode: "0600", filesDirectory, files: { directory: filesDirectory, copied: 1, missing: [] } });
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(statSync(filesDirectory).mode & 0o777).toBe(0o700);
    expect(statSync(join(filesDirectory, "1")).mode & 0o777).toBe(0o700);
    const copied = join(filesDirectory, "1", `${fileId}.txt`);
    expect(statSync(copied).mode & 0o777).toBe(0o600);
    expect(readFileSync(copied, "utf8")).toBe(OUTPUT);

    // The original goes away; the backup is opened from another folder again.
    rmSync(home, { recursive: true, force: true });
    const elsewhere = join(tempDir(), "restored-here");
    mkdirSync(elsewhere);
    renameSync(target, join(elsewhere, "nightly.db"));
    renameSync(filesDirectory, join(elsewhere, "nightly-files"));
    const opened = join(elsewhere, "nightly.db");
    const described = await runJson<{ content: unknown; contentNote: string | null }>(["describe", fileId, "--db", opened], DescribeOutputSchema);
    expect(JSON.stringify(described.content)).toContain("build step 0: ok");
    const found = await runJson<{ matches: { snippet: string }[] }>(["grep", "signing key expired", "--scope", "files", "--db", opened], GrepOutputSchema);
    expect(found.matches.map((match) => match.snippet).join(" ")).toContain("build step 321");
    const doctor = await runJson<{ healthy: boolean; findings: unknown[] }>(["doctor", "--db", opened], DoctorOutputSchema);
    expect(doctor.findings).toEqual([]);
    expect(doctor.healthy).toBe(true);
  });

  it("restores as docs/operations.md says: the backup backed up to the database's path brings the files to <name>-files", async () => {
    const home = tempDir();
    const db = join(home, "lcm.db");
    const fileId = await databaseWithStoredFile(db);
    const target = join(tempDir(), "nightly.db");
    await runJson<BackupOutput>(["backup", target, "--db", db], BackupOutputSchema);
    // The live database is lost, with its files.
    rmSync(home, { recursive: true, force: true });
    mkdirSync(home);
    const restored = await runJson<BackupOutput>(["backup", db, "--db", target], BackupOutputSchema);
    expect(restored.files).toMatchObject({ directory: join(home, "lcm-files"), copied: 1, missing: [] });
    expect(readFileSync(join(home, "lcm-files", "1", `${fileId}.txt`), "utf8")).toBe(OUTPUT);
    expect(statSync(db).mode & 0o777).toBe(0o600);
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
    const found = await runJson<{ matches: unknown[] }>(["grep", "signing key expired", "--scope", "files", "--db", db], GrepOutputSchema);
    expect(found.matches).toHaveLength(1);
  });

  it("names a stored file that could not be copied and exits 7, writing everything else", async () => {
    const home = tempDir();
    const db = join(home, "lcm.db");
    const fileId = await databaseWithStoredFile(db);
    rmSync(join(home, "lcm-files", "1", `${fileId}.txt`));
    const target = join(tempDir(), "nightly.db");
    const backup = await runJson<BackupOutput>(["backup", target, "--db", db], BackupOutputSchema, { code: EXIT.problemsFound });
    expect(backup.files.copied).toBe(0);
    expect(backup.files.missing).toEqual([{ fileId, path: join(home, "lcm-files", "1", `${fileId}.txt`), reason: "missing (moved or deleted)" }]);
    const text = await runLcm(["backup", join(tempDir(), "other.db"), "--db", db]);
    expect(text.stdout).toContain(`${fileId}: missing (moved or deleted)`);
    // The row points where the file belongs in the backup: putting it there makes the backup whole.
    const copy = new DatabaseSync(target, { readOnly: true });
    expect(copy.prepare("SELECT storage_path FROM large_files").get()).toEqual({ storage_path: `nightly-files/1/${fileId}.txt` });
    copy.close();
  });

  it("refuses a target whose files folder exists without --force, and replaces both with it", async () => {
    const db = join(tempDir(), "lcm.db");
    await databaseWithStoredFile(db);
    const target = join(tempDir(), "nightly.db");
    mkdirSync(join(dirname(target), "nightly-files"));
    writeFileSync(join(dirname(target), "nightly-files", "stale.txt"), "from an older backup");
    const refused = await runLcm(["backup", target, "--db", db]);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain("nightly-files exists already");
    expect(existsSync(target)).toBe(false);
    expect((await runLcm(["backup", target, "--force", "--db", db])).code).toBe(EXIT.ok);
    expect(existsSync(join(dirname(target), "nightly-files", "stale.txt"))).toBe(false);
    expect(existsSync(join(dirname(target), "nightly-files", "1"))).toBe(true);
  });
});

describe("migration 13", () => {
  it("records existing stored-file paths under the database's folder relative to it, and leaves paths elsewhere absolute", () => {
    const dir = tempDir();
    const path = join(dir, "old.db");
    const old = new Database(path);
    migrate(old, MIGRATIONS.filter((migration) => migration.version <= 10));
    old.raw.exec(`INSERT INTO conversations (conversation_id, agent_id, session_id, created_at, updated_at) VALUES (1, 'main', 's1', 0, 0)`);
    const insert = old.raw.prepare(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, byte_size, token_count, storage_path, exploration_summary, explorer, origin, created_at)
       VALUES (?, 1, ?, 1, 1, ?, '', 'text', 'file-block', 0)`,
    );
    insert.run("file_aaaaaaaaaaaaaaaa", "a", join(dir, "old-files", "1", "file_aaaaaaaaaaaaaaaa.txt"));
    insert.run("file_bbbbbbbbbbbbbbbb", "b", "/srv/elsewhere/1/file_bbbbbbbbbbbbbbbb.txt");
    insert.run("file_cccccccccccccccc", "c", `${dir}-sibling/1/file_cccccccccccccccc.txt`);
    migrate(old);
    const rows = old.raw.prepare("SELECT file_id, storage_path FROM large_files ORDER BY file_id").all().map((row) => ({ ...row }));
    old.close();
    expect(rows).toEqual([
      { file_id: "file_aaaaaaaaaaaaaaaa", storage_path: "old-files/1/file_aaaaaaaaaaaaaaaa.txt" },
      { file_id: "file_bbbbbbbbbbbbbbbb", storage_path: "/srv/elsewhere/1/file_bbbbbbbbbbbbbbbb.txt" },
      { file_id: "file_cccccccccccccccc", storage_path: `${dir}-sibling/1/file_cccccccccccccccc.txt` },
    ]);
  });

  it("keeps reading a file recorded by an absolute path outside the database's folder", async () => {
    const db = join(tempDir(), "lcm.db");
    const fileId = await databaseWithStoredFile(db);
    const outside = join(tempDir(), "elsewhere", `${fileId}.txt`);
    mkdirSync(dirname(outside));
    renameSync(join(dirname(db), "lcm-files", "1", `${fileId}.txt`), outside);
    const database = openDatabase(db);
    database.raw.prepare("UPDATE large_files SET storage_path = ?").run(outside);
    database.close();
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
    const described = await runJson<{ content: unknown }>(["describe", fileId, "--db", db], DescribeOutputSchema);
    expect(JSON.stringify(described.content)).toContain("build step 0: ok");
    // A backup brings it into its own files folder all the same, recorded relative to the backup.
    const target = join(tempDir(), "nightly.db");
    const backup = await runJson<BackupOutput>(["backup", target, "--db", db], BackupOutputSchema);
    expect(backup.files).toMatchObject({ copied: 1, missing: [] });
    expect(readFileSync(join(dirname(target), "nightly-files", "1", `${fileId}.txt`), "utf8")).toBe(OUTPUT);
    expect((await runLcm(["doctor", "--db", target])).code).toBe(EXIT.ok);
  });
});

describe("lcm backup --force over a database with a write-ahead log beside it", () => {
  it("removes the old -wal and -shm, so the old database's pages are never replayed into the new one", async () => {
    const db = join(tempDir(), "lcm.db");
    await databaseWithStoredFile(db);
    // A target that still has a write-ahead log (its gateway was killed): 300 rows of another database's pages.
    const target = join(tempDir(), "lcm-context.db");
    const old = new DatabaseSync(target);
    old.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE stale (text TEXT);");
    for (let row = 0; row < 300; row++) old.prepare("INSERT INTO stale VALUES (?)").run(`stale row ${row} ${"x".repeat(200)}`);
    const wal = readFileSync(`${target}-wal`);
    old.close();
    writeFileSync(`${target}-wal`, wal);
    expect((await runLcm(["backup", target, "--force", "--db", db])).code).toBe(EXIT.ok);
    expect(existsSync(`${target}-wal`)).toBe(false);
    const doctor = await runJson<{ healthy: boolean; findings: unknown[] }>(["doctor", "--db", target], DoctorOutputSchema);
    expect(doctor.findings).toEqual([]);
    const restored = new DatabaseSync(target, { readOnly: true });
    expect(restored.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'stale'").get()).toEqual({ n: 0 });
    expect(restored.prepare("SELECT count(*) AS n FROM messages").get()).toEqual({ n: 4 });
    restored.close();
  });
});
