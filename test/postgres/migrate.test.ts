/**
 * `lcm migrate` through the CLI against the test server: a SQLite database made by the engine (turns, leaf and
 * condensed summaries, a stored file, a grant) copied to PostgreSQL row for row with its ids; run again, nothing new;
 * killed with SIGKILL halfway, run again, complete and equal; a target with other data refused with nothing changed;
 * and back to SQLite: a file that passes the integrity check, assembles the same context and finds the same details
 * (lcm grep: the same matches on the original, the PostgreSQL copy and the way back).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { rename } from "node:fs/promises";
import { basename, dirname as tempDirOf, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MigrateOutput } from "../../src/cli/commands/migrate-command.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import type { BackupOutput } from "../../src/cli/commands/backup-command.js";
import { BackupOutputSchema, GrepOutputSchema, MigrateOutputSchema } from "../../src/cli/output-schemas.js";
import { defaultFilesDirectory } from "../../src/config.js";
import { LargeFileStorage } from "../../src/large-files/large-file-storage.js";
import { openPostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import { createRecallServices } from "../../src/retrieval/recall-services.js";
import { createLcmDescribeTool } from "../../src/tools/lcm-describe-tool.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "../../src/store/backend.js";
import { COPIED_TABLES, type CopiedRow, type TableCopyStore } from "../../src/store/table-copy.js";
import { buildDatabase, exchanges, runJson, runLcm } from "../cli/cli-harness.js";
import { createTestPostgresDatabase } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";
import { playTurn } from "../helpers/turn-driver.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "src/cli/bin.ts");
const OUTPUT = Array.from({ length: 300 }, (_, line) => `deploy step ${line}: ${line === 123 ? "the vault token rotated" : "ok"}`).join("\n");
const HOSTILE = "nul\u0000here, line\u2028separator, astral \u{1F600}, and U+FDD0 \uFDD0 itself";

let sourcePath: string;
const opened: { close(): Promise<unknown> | void }[] = [];

/** A SQLite database from the engine: 2 sessions, compacted into leaves and condensed summaries, a stored file, a grant. */
beforeAll(async () => {
  sourcePath = join(tempDir(), "lcm.db");
  const turns = exchanges(60, 40);
  turns.splice(10, 0, userMessage(HOSTILE),
    toolCallMessage([{ id: "call_deploy", name: "exec", arguments: { command: "deploy" } }]), toolResultMessage("call_deploy", "exec", OUTPUT));
  const harness = await buildDatabase({
    databasePath: sourcePath, compact: true, config: { leafChunkTokens: 400, largeFileTokenThreshold: 200, condensedMinFanout: 2 },
    sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: turns }, { sessionKey: "agent:main:other", sessionId: "s2", messages: exchanges(8, 10, "o") }],
  });
  for (const turn of [1, 2]) {
    await playTurn(harness.newEngine, [userMessage(`late question ${turn}`), assistantMessage(`late answer ${turn}`)], { sessionId: "s1" });
  }
  const source = openSqliteBackend(sourcePath, "private");
  await source.grants.createGrant({
    grantId: "grant_one", agentId: "main", childSessionKey: "agent:main:subagent:lcm-expand-1", conversationIds: [1, 2], tokenCap: 4_000,
    createdAt: 1_000, expiresAt: 9_000_000_000_000,
  });
  source.close();
}, 120_000);

afterAll(async () => {
  for (const item of opened.splice(0)) await item.close();
});

function postgresCopy(url: string): TableCopyStore {
  const backend = openPostgresBackend(url, "private");
  opened.push(backend);
  return backend.tableCopy;
}

function sqliteCopy(path: string): TableCopyStore {
  const backend = openSqliteBackend(path, "private");
  opened.push(backend);
  return backend.tableCopy;
}

async function allRows(store: TableCopyStore): Promise<Record<string, CopiedRow[]>> {
  const tables: Record<string, CopiedRow[]> = {};
  for (const table of COPIED_TABLES) tables[table.name] = await store.readRows(table, null, 1_000_000);
  return tables;
}

/** Every table of both databases equal, row for row (numbers kept as numbers, text as text). */
async function expectSameRows(left: TableCopyStore, right: TableCopyStore): Promise<Record<string, CopiedRow[]>> {
  const [leftRows, rightRows] = [await allRows(left), await allRows(right)];
  for (const table of COPIED_TABLES) expect(rightRows[table.name], table.name).toEqual(leftRows[table.name]);
  return leftRows;
}

function migrate(args: string[], code: number = EXIT.ok): Promise<MigrateOutput> {
  return runJson<MigrateOutput>(["migrate", ...args], MigrateOutputSchema, { code });
}

describe("lcm migrate sqlite-to-postgres and back", () => {
  it("copies every row with its ids, copies nothing the second time, and comes back as a SQLite file that works the same", async () => {
    const url = await createTestPostgresDatabase();
    const first = await migrate(["sqlite-to-postgres", sourcePath, url]);
    const rows = await expectSameRows(sqliteCopy(sourcePath), postgresCopy(url));
    // What the database holds: turns, both kinds of summaries with their links, a stored file, the grant, hostile text.
    expect(rows.summaries!.map((row) => row[3])).toContain("condensed");
    expect(rows.summaries!.map((row) => row[3])).toContain("leaf");
    expect(rows.summary_parents!.length).toBeGreaterThan(0);
    expect(rows.context_items!.some((row) => row[3] !== null)).toBe(true);
    expect(rows.large_files).toHaveLength(1);
    expect(rows.expansion_grants).toHaveLength(1);
    expect(rows.committed_turns!.length).toBeGreaterThan(0);
    expect(rows.messages!.map((row) => row[4])).toContain(HOSTILE);
    const total = COPIED_TABLES.reduce((sum, table) => sum + rows[table.name]!.length, 0);
    expect(first.copied).toBe(total);
    expect(first.tables.find((table) => table.table === "messages")).toMatchObject({ copied: rows.messages!.length, alreadyThere: 0 });
    // The command leaves the copy searchable: every message, summary and stored file indexed, nothing left to a gateway.
    expect(first.indexed).toBe(rows.messages!.length + rows.summaries!.length);
    expect(first.indexedFileBytes).toBeGreaterThanOrEqual(OUTPUT.length);
    const queues = new PgDatabase(url, { poolSize: 1 });
    opened.push(queues);
    expect(await queues.row(`SELECT (SELECT count(*) FROM message_search_pending) AS messages, (SELECT count(*) FROM summary_search_pending) AS summaries,
      (SELECT count(*) FROM file_index WHERE state <> 'indexed') AS files`)).toEqual({ messages: 0, summaries: 0, files: 0 });

    const second = await migrate(["sqlite-to-postgres", sourcePath, url]);
    expect(second).toMatchObject({ copied: 0, indexed: 0, indexedFileBytes: 0 });
    expect(second.tables.find((table) => table.table === "messages")).toMatchObject({ copied: 0, alreadyThere: rows.messages!.length });

    // The engine on the PostgreSQL copy assembles the same context as on the SQLite original.
    const assembledOn = async (options: { databasePath?: string; backend?: LcmBackend }) => (await createTestEngine(options).newEngine()
      .assemble({ sessionId: "s1", sessionKey: "agent:main:main", messages: [], tokenBudget: 8_000 })).messages;
    const onPostgres = openPostgresBackend(url, "private");
    opened.push(onPostgres);
    const context = await assembledOn({ databasePath: sourcePath });
    expect(context.length).toBeGreaterThan(3);
    expect(await assembledOn({ backend: onPostgres })).toEqual(context);

    // Ids generated on PostgreSQL from now on come after the copied ones.
    const database = new PgDatabase(url, { poolSize: 1 });
    opened.push(database);
    const next = await database.row<{ id: number }>(
      "INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('main', 'fresh', 1, 1) RETURNING conversation_id AS id");
    expect(next!.id).toBe(Math.max(...rows.conversations!.map((row) => Number(row[0]))) + 1);
    await database.run("DELETE FROM conversations WHERE conversation_id = $1", [next!.id]);

    // lcm backup on the PostgreSQL database: a portable SQLite file with the stored file beside it, the same rows.
    const backupPath = join(tempDir(), "nightly.db");
    const backup = await runJson<BackupOutput>(["backup", backupPath, "--database-url", url], BackupOutputSchema);
    expect(backup).toMatchObject({ method: "table-copy", rows: total, check: "ok", files: { copied: 1, missing: [] } });
    const backedUp = await allRows(sqliteCopy(backupPath));
    expect({ ...backedUp, large_files: [] }).toEqual({ ...await allRows(postgresCopy(url)), large_files: [] }); // as the engine left it
    expect(String(backedUp.large_files![0]![7])).toBe(join(tempDirOf(backupPath), "nightly-files", "1", basename(String(rows.large_files![0]![7]))));

    const backPath = join(tempDir(), "back.db");
    const back = await migrate(["postgres-to-sqlite", url, backPath]);
    expect(back.copied).toBe(total);
    expect(back.indexed).toBe(rows.messages!.length + rows.summaries!.length);
    expect(back.indexedFileBytes).toBeGreaterThanOrEqual(OUTPUT.length);
    await expectSameRows(sqliteCopy(sourcePath), sqliteCopy(backPath));
    const check = new DatabaseSync(backPath, { readOnly: true });
    expect(check.prepare("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(check.prepare("PRAGMA foreign_key_check").all()).toEqual([]);
    check.close();

    // The copy assembles the same context as the original and finds the same details.
    expect(await assembledOn({ databasePath: backPath })).toEqual(context);
    // The copy records the stored file's reference in its conversation's newest message (the copy cannot know it); the
    // first search that finds the file's content corrects it, so later ones check one row.
    const recorded = async () => (await database.row<{ recorded: number; holder: number }>(
      `SELECT f.message_id AS recorded, (SELECT min(m.message_id) FROM messages m
         WHERE m.conversation_id = f.conversation_id AND strpos(m.content, f.file_id) > 0) AS holder FROM file_index f`))!;
    const before = await recorded();
    expect(before.recorded).not.toBe(before.holder);
    // lcm grep finds the same matches on the original, on the PostgreSQL copy (pg-search's own index) and back.
    for (const scope of ["both", "files"]) {
      const grep = async (database: string[]) => (await runJson<{ matches: unknown[] }>(
        ["grep", scope === "files" ? "vault token rotated" : "markert17", "--scope", scope, ...database], GrepOutputSchema)).matches;
      const found = await grep(["--db", sourcePath]);
      expect(found.length, scope).toBeGreaterThan(0);
      expect(await grep(["--database-url", url]), `${scope} on PostgreSQL`).toEqual(found);
      expect(await grep(["--db", backPath]), `${scope} back on SQLite`).toEqual(found);
    }
    const history = await runJson<{ matches: { type: string; seq?: number }[] }>(["grep", "vault token rotated", "--database-url", url], GrepOutputSchema);
    expect(history.matches.length).toBeGreaterThan(0);
    expect(await recorded()).toEqual({ recorded: before.holder, holder: before.holder });
  }, 180_000);

  it("killed with SIGKILL halfway, it finishes on the next run with every row once", async () => {
    const url = await createTestPostgresDatabase();
    const watcher = new PgDatabase(url, { poolSize: 1 });
    opened.push(watcher);
    const child = spawn(process.execPath, ["--import", "tsx", BIN, "migrate", "sqlite-to-postgres", sourcePath, url, "--batch-rows", "1"], {
      cwd: ROOT, env: { ...process.env, HOME: "/nonexistent-home", LCM_PROGRESS: "0" }, stdio: ["ignore", "pipe", "pipe"], detached: true,
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    let killedAt = -1;
    for (let polls = 0; polls < 20_000 && child.exitCode === null; polls++) {
      const copied = (await watcher.row<{ n: number }>("SELECT count(*) AS n FROM messages").catch(() => null))?.n ?? 0;
      if (copied > 0) {
        process.kill(-child.pid!, "SIGKILL");
        killedAt = copied;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await exited;
    expect(killedAt, "the child was killed while it copied messages").toBeGreaterThan(0);
    const sourceRows = await allRows(sqliteCopy(sourcePath));
    const partial = (await watcher.row<{ n: number }>("SELECT count(*) AS n FROM messages"))!.n;
    expect(partial).toBeLessThan(sourceRows.messages!.length);
    expect(await watcher.row<{ n: number }>("SELECT count(*) AS n FROM summaries")).toEqual({ n: 0 });

    const resumed = await migrate(["sqlite-to-postgres", sourcePath, url]);
    expect(resumed.tables.find((table) => table.table === "messages")).toMatchObject({
      alreadyThere: partial, copied: sourceRows.messages!.length - partial,
    });
    await expectSameRows(sqliteCopy(sourcePath), postgresCopy(url));
  }, 180_000);

  it("refuses a target holding other data, and changes nothing in it", async () => {
    const url = await createTestPostgresDatabase();
    const other = join(tempDir(), "other.db");
    await buildDatabase({ databasePath: other, sessions: [{ sessionKey: "agent:main:main", sessionId: "elsewhere", messages: exchanges(3) }] });
    await migrate(["sqlite-to-postgres", other, url]);
    const before = await allRows(postgresCopy(url));
    const run = await runLcm(["migrate", "sqlite-to-postgres", sourcePath, url]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain("already holds data that is not a copy of");
    expect(run.stderr).toContain("table conversations, key conversation_id=1");
    expect(run.stderr).toContain("nothing was copied");
    expect(await allRows(postgresCopy(url))).toEqual(before);

    const badUrl = await runLcm(["migrate", "sqlite-to-postgres", sourcePath, "mysql://somewhere/db"]);
    expect(badUrl.code).toBe(EXIT.usage);
    expect(badUrl.stderr).toContain("must be a PostgreSQL URL");
    const missing = join(tempDir(), "none.db");
    const noSource = await runLcm(["migrate", "sqlite-to-postgres", missing, url]);
    expect(noSource.code).toBe(EXIT.noDatabase);
    expect(existsSync(missing)).toBe(false);
  }, 180_000);

  it("copies stored files' content past one run's 32 MB bound: three files of 12 MB arrive whole, in two runs of rows", async () => {
    const url = await createTestPostgresDatabase();
    await migrate(["sqlite-to-postgres", sourcePath, url]);
    const target = postgresCopy(url);
    const table = COPIED_TABLES.find((candidate) => candidate.name === "large_files")!;
    const [model] = await sqliteCopy(sourcePath).readRows(table, null, 1);
    const directory = tempDir();
    // Three files of 12 MB (each byte from its file's own pattern): three runs of rows would hold 36 MB at once.
    const files = [1, 2, 3].map((index) => {
      const path = join(directory, `big-${index}.txt`);
      writeFileSync(path, Buffer.alloc(12 * 1024 * 1024, `file ${index} `));
      return { fileId: `file_big_${index}`, path };
    });
    const column = (name: string) => table.columns.indexOf(name);
    const rows = files.map(({ fileId, path }) => {
      const row = [...model!];
      row[column("file_id")] = fileId;
      row[column("storage_path")] = path;
      row[column("byte_size")] = 12 * 1024 * 1024;
      row[column("content_hash")] = `hash-${fileId}`;
      return row;
    });
    expect(await target.writeRows(table, rows)).toBe(3);
    for (const { fileId, path } of files) {
      const content = await target.storedFileContent!(fileId);
      expect(content?.equals(readFileSync(path)), fileId).toBe(true);
    }
  }, 120_000);

  it("carries stored files' content into PostgreSQL: read on a machine without the files, and back to SQLite and into a backup from there", async () => {
    const url = await createTestPostgresDatabase();
    await migrate(["sqlite-to-postgres", sourcePath, url]);
    // Another machine: the source's files folder is not there (moved aside), and its own files directory is empty.
    const sourceFiles = defaultFilesDirectory(sourcePath);
    await rename(sourceFiles, `${sourceFiles}.elsewhere`);
    try {
      const elsewhere = openPostgresBackend(url, "private", { files: new LargeFileStorage(tempDir()) });
      opened.push(elsewhere);
      const kit = createTestEngine({ backend: elsewhere });
      const { config, tokens, clock, logger } = kit;
      const services = () => createRecallServices({
        store: elsewhere.store, retrievalStore: elsewhere.retrieval, grants: elsewhere.grants, config, tokens, clock, logger,
      });
      const describeTool = createLcmDescribeTool({ services, config, logger, clock }, { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" });
      const [file] = await elsewhere.store.listLargeFiles(1);
      const described = await describeTool.execute("call-1", { id: file!.fileId, startLine: 124, maxLines: 1 }) as { content: { text: string }[] };
      expect(described.content[0]!.text).toContain("deploy step 123: the vault token rotated");

      const backPath = join(tempDir(), "back.db");
      await migrate(["postgres-to-sqlite", url, backPath]);
      const back = openSqliteBackend(backPath, "private");
      opened.push(back);
      const [backFile] = await back.store.listLargeFiles(1);
      expect(backFile!.storagePath.startsWith(defaultFilesDirectory(backPath))).toBe(true);
      expect(readFileSync(backFile!.storagePath, "utf8")).toContain("deploy step 123: the vault token rotated");
      const backup = await runJson<BackupOutput>(["backup", join(tempDir(), "nightly.db"), "--database-url", url], BackupOutputSchema);
      expect(backup.files).toMatchObject({ copied: 1, missing: [] });
    } finally {
      await rename(`${sourceFiles}.elsewhere`, sourceFiles);
    }
  }, 120_000);
});
