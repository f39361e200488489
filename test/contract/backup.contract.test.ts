/**
 * `lcm backup` on either backend, and its restore: the backup (SQLite's page copy, or on PostgreSQL a portable SQLite
 * file written by the table copy) holds every row of the model as it was, its stored files copied beside it and
 * found there; restored (on PostgreSQL: `lcm migrate sqlite-to-postgres` into an empty database) it holds the same
 * rows again. Rows are put in by the engine on SQLite and the table copy on the backend under test.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgresForCli } from "../../src/cli/postgres-target.js";
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import type { BackupStore } from "../../src/store/backup-store.js";
import { COPIED_TABLES, type CopiedRow, STORED_PATH_COLUMN, type TableCopyStore } from "../../src/store/table-copy.js";
import { copyAllTables } from "../../src/transfer/table-migration.js";
import { buildDatabase, exchanges } from "../cli/cli-harness.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";

const OUTPUT = Array.from({ length: 300 }, (_, line) => `restore drill ${line}: ${line === 77 ? "the replica lagged" : "ok"}`).join("\n");
let sourcePath: string;

beforeAll(async () => {
  sourcePath = join(tempDir(), "source.db");
  const turns = [...exchanges(30, 30), userMessage("nul\u0000 and \u2028 and \u{1F600}"),
    toolCallMessage([{ id: "call_drill", name: "exec", arguments: { command: "drill" } }]), toolResultMessage("call_drill", "exec", OUTPUT),
    assistantMessage("the replica lagged")];
  await buildDatabase({ databasePath: sourcePath, compact: true, config: { leafChunkTokens: 400, largeFileTokenThreshold: 200 },
    sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: turns }] });
}, 120_000);

async function allRows(store: TableCopyStore): Promise<Record<string, CopiedRow[]>> {
  const tables: Record<string, CopiedRow[]> = {};
  for (const table of COPIED_TABLES) tables[table.name] = await store.readRows(table, null, 1_000_000);
  return tables;
}

/** The rows with each stored file's path left out (a backup records its own copy of the file). */
function withoutPaths(rows: Record<string, CopiedRow[]>): Record<string, CopiedRow[]> {
  const table = COPIED_TABLES.find((candidate) => candidate.name === STORED_PATH_COLUMN.table)!;
  const index = table.columns.indexOf(STORED_PATH_COLUMN.column);
  return { ...rows, [table.name]: rows[table.name]!.map((row) => row.map((value, column) => (column === index ? "(path)" : value))) };
}

describe.each(backendKinds())("backup and restore on %s", (kind) => {
  let opened: TestBackend;
  const closers: (() => unknown)[] = [];
  beforeEach(async () => {
    opened = await openTestBackend(kind);
    const source = openSqliteBackend(sourcePath, "private");
    closers.push(() => source.close());
    await copyAllTables(source.tableCopy, opened.backend.tableCopy);
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await opened.close();
  });

  function backupStore(): BackupStore {
    if (kind === "sqlite") return opened.backend.backup;
    const backend = openPostgresForCli(opened.location, "the test URL");
    closers.push(() => backend.close());
    return backend.backup;
  }

  it("writes every row and the stored file beside the backup; the backup restores to the same rows", async () => {
    const original = await allRows(opened.backend.tableCopy);
    expect(original.large_files).toHaveLength(1);
    const target = join(tempDir(), "nightly.db");
    const result = await backupStore().backupTo(target);
    expect(result).toMatchObject({ path: target, check: "ok", mode: "0600", files: { directory: join(dirname(target), "nightly-files"), copied: 1, missing: [] } });
    expect(statSync(target).mode & 0o777).toBe(0o600);

    const backup = openSqliteBackend(target, "private");
    closers.push(() => backup.close());
    const backedUp = await allRows(backup.tableCopy);
    expect(withoutPaths(backedUp)).toEqual(withoutPaths(original));
    const path = String(backedUp.large_files![0]![7]);
    expect(path.startsWith(join(dirname(target), "nightly-files"))).toBe(true);
    expect(readFileSync(path, "utf8")).toBe(OUTPUT);

    // Restored into an empty database of the same backend: the same rows again.
    const restored = await openTestBackend(kind);
    closers.push(() => restored.close());
    await copyAllTables(backup.tableCopy, restored.backend.tableCopy);
    expect(withoutPaths(await allRows(restored.backend.tableCopy))).toEqual(withoutPaths(original));
  }, 60_000);

  it("refuses an existing target without overwrite, and leaves it as it was", async () => {
    const target = join(tempDir(), "kept.db");
    await backupStore().backupTo(target);
    const before = readFileSync(target);
    await expect(backupStore().backupTo(target)).rejects.toThrow(/exists already; choose another path, or pass --force/);
    expect(readFileSync(target).equals(before)).toBe(true);
    const again = await backupStore().backupTo(target, { overwrite: true });
    expect(again.files.copied).toBe(1);
  }, 60_000);
});
