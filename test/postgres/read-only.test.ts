/**
 * The CLI's reading commands on PostgreSQL, `lcm mcp` without --writable first, open the database read-only at the
 * server (issue 28), as they open a SQLite file read-only: a stray write is refused by the server with a clear error,
 * a search over rows and stored files the full-text index has not taken yet still finds them and writes nothing (no
 * catch-up indexing, no correction of a file's recorded message), a database without LCM's schema is not given one,
 * and `lcm mcp --writable` keeps indexing what waits.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CliEnvironment, CliRuntime } from "../../src/cli/cli-runtime.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { isLcmError } from "../../src/errors.js";
import type { PostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { createTestPostgresDatabase, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { insertMessages, runFixtureSql } from "../helpers/sql-fixtures.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runLcm } from "../cli/cli-harness.js";
import { startStdioServer, type StdioServer } from "../mcp/mcp-harness.js";

const FILE_ID = "file_00000000000000b1";

/** What a search could write: the queues, the indexes, the dictionary, the files' index state and recorded message. */
const WRITES_SQL = `SELECT (SELECT count(*)::int FROM message_search_pending) AS pending_messages,
  (SELECT count(*)::int FROM message_search) AS indexed_messages, (SELECT count(*)::int FROM search_terms) AS terms,
  (SELECT count(*)::int FROM file_chunks) AS chunks,
  (SELECT string_agg(file_id || ' ' || state || ' message ' || coalesce(message_id::text, '-'), ', ') FROM file_index) AS files`;

class Capture extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

function cliEnvironment(stderr: Capture): CliEnvironment {
  return {
    stdout: new Capture() as unknown as NodeJS.WriteStream, stderr: stderr as unknown as NodeJS.WriteStream,
    env: { HOME: "/nonexistent-home" }, setExitCode: () => undefined,
  };
}

describe("reading commands on PostgreSQL open it read-only", () => {
  let opened: TestBackend;
  let server: StdioServer | null = null;
  const writes = async () => (opened.backend as PostgresBackend).database.row(WRITES_SQL);

  beforeEach(async () => {
    opened = await openTestBackend("postgres");
    // Messages 1-3 are indexed; 4 and 5 wait for the index, and so does the stored file, which 3 names but whose row
    // records message 5 (the newest when it was stored): a writable search would index both and correct the record.
    await insertMessages(opened, ["an indexed note about walrus-100", "filler one", `here is the log [LCM File: ${FILE_ID} | c.log]`]);
    await opened.backend.searchIndex.indexPending();
    await insertMessages(opened, ["the tail mentions narwhal-200", "a tail note"], { firstSeq: 4 });
    const path = join(tempDir(), "c.log");
    const content = "header\nthe otterlog-300 entry\nfooter\n";
    writeFileSync(path, content);
    await runFixtureSql(opened, [{
      sql: `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
              exploration_summary, explorer, origin, created_at) VALUES (?, 1, 'hash', 'c.log', 'text/plain', ?, 10, ?, 'a log', 'text', 'tool_output', 6)`,
      params: [FILE_ID, Buffer.byteLength(content), path],
    }]);
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    await opened.close();
  });

  it("refuses a stray write at the server, with a clear error, through the connection `lcm mcp` opens", async () => {
    const stderr = new Capture();
    const runtime = new CliRuntime(cliEnvironment(stderr), { databaseUrl: opened.location });
    try {
      const stores = runtime.open("read-live");
      expect({ readOnly: stores.readOnly, writable: stores.backend.writable }).toEqual({ readOnly: true, writable: false });
      // A reading command could not have written: nothing to warn about, as on SQLite.
      expect(stderr.text).toBe("");
      const database = (stores.backend as PostgresBackend).database;
      expect(await database.row("SHOW default_transaction_read_only")).toEqual({ default_transaction_read_only: "on" });
      const before = await writes();

      const refused = await database.run("DELETE FROM messages").then(() => null, (error: unknown) => error);
      expect(isLcmError(refused, "unavailable")).toBe(true);
      expect((refused as Error).message).toMatch(
        /opened read-only: the server refused the write \(cannot execute DELETE in a read-only transaction\)\. Nothing was changed\. Run `lcm mcp` with --writable/,
      );
      // A store's own write (indexing, in one transaction) is refused the same way.
      await expect(stores.backend.searchIndex.indexPending()).rejects.toMatchObject({ code: "unavailable" });
      expect(await writes()).toEqual(before);
    } finally {
      await runtime.close();
    }
  });

  it("keeps the server's read-only setting when the URL carries session options of its own", async () => {
    // The driver lets an `options` parameter in the URL replace the pool's session options.
    const url = new URL(opened.location);
    url.searchParams.set("options", "-c search_path=public");
    const runtime = new CliRuntime(cliEnvironment(new Capture()), { databaseUrl: url.toString() });
    try {
      const database = (runtime.open("read").backend as PostgresBackend).database;
      expect(await database.row("SELECT current_setting('default_transaction_read_only') AS read_only, current_setting('search_path') AS path"))
        .toEqual({ read_only: "on", path: "public" });
    } finally {
      await runtime.close();
    }
  });

  it("finds what waits for the index over MCP, and writes nothing", async () => {
    const before = await writes();
    // 2 messages and 1 file wait; the file's row records message 5, not message 3 that names it.
    expect(before).toMatchObject({ pending_messages: 2, chunks: 0, files: `${FILE_ID} pending message 5` });
    server = await startStdioServer(["--database-url", opened.location, "--agent", "a"]);
    const grep = async (pattern: string, mode: "regex" | "full_text") => {
      const result = await server!.client.callTool({ name: "lcm_grep", arguments: { pattern, mode, allConversations: true } });
      expect(result.isError, JSON.stringify(result.content)).toBeUndefined();
      return (result.structuredContent as { matches: { seq?: number; inFile?: { fileId: string } }[] }).matches;
    };

    for (const mode of ["regex", "full_text"] as const) {
      expect((await grep("narwhal-200", mode)).map((match) => match.seq), mode).toEqual([4]);
      expect((await grep("walrus-100", mode)).map((match) => match.seq), mode).toEqual([1]);
      expect((await grep("otterlog-300", mode)).map((match) => [match.seq, match.inFile?.fileId]), mode).toEqual([[3, FILE_ID]]);
    }
    const status = await server.client.callTool({ name: "lcm_status", arguments: {} });
    expect(status.structuredContent).toMatchObject({ readOnly: true });
    expect(server.stderr()).toMatch(/\(read-only\) over stdio/);
    expect(await writes()).toEqual(before);
  });

  it("indexes what waits and corrects the file's record with --writable", async () => {
    server = await startStdioServer(["--database-url", opened.location, "--agent", "a", "--writable"]);
    const result = await server.client.callTool({ name: "lcm_grep", arguments: { pattern: "otterlog-300", allConversations: true } });
    expect((result.structuredContent as { matches: { seq?: number }[] }).matches.map((match) => match.seq)).toEqual([3]);
    const status = await server.client.callTool({ name: "lcm_status", arguments: {} });
    expect(status.structuredContent).toMatchObject({ readOnly: false });
    // The search indexed the two waiting messages and the file itself (small backlogs), and recorded message 3.
    expect(await writes()).toMatchObject({ pending_messages: 0, indexed_messages: 5, chunks: 1, files: `${FILE_ID} indexed message 3` });
  });
});

describe("a reading command on a PostgreSQL database without LCM's schema", () => {
  it("says there is no LCM database there and creates nothing", async () => {
    const url = await createTestPostgresDatabase();
    const run = await runLcm(["status", "--database-url", url]);
    expect(run.code).toBe(EXIT.noDatabase);
    expect(run.stderr).toMatch(/No LCM database at .*: it holds no LCM schema yet, and this command opened it read-only, so it cannot create one/);
    const database = new PgDatabase(url);
    try {
      expect(await database.rowUnmigrated("SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'")).toEqual({ tables: 0 });
    } finally {
      await database.close();
    }
  });
});
