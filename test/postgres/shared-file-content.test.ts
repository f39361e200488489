/**
 * Stored files on gateways that share one PostgreSQL database but no disk (spec 028, migration 8): two "machines" are
 * two backends on one database, each with its own files directory. A file machine A stores is read, searched and
 * indexed by machine B from the database's copy of its content; B never records it unreadable; a file recorded before
 * the migration (a row without content) is uploaded by A's maintain and then read on B.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { access, rename, rm } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import { LargeFileStorage } from "../../src/large-files/large-file-storage.js";
import { openPostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { createRecallServices } from "../../src/retrieval/recall-services.js";
import { exportLine, type ExportRecord } from "../../src/store/export-format.js";
import { exportConversationRecords } from "../../src/transfer/jsonl-export.js";
import { importExportFile } from "../../src/transfer/jsonl-import.js";
import type { LcmBackend } from "../../src/store/backend.js";
import { createLcmDescribeTool } from "../../src/tools/lcm-describe-tool.js";
import { createLcmGrepTool } from "../../src/tools/lcm-grep-tool.js";
import { createTestPostgresDatabase } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { SteppingClock } from "../fakes/clocks.js";
import { tempDir } from "../helpers/temp-dir.js";

const SESSION = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s-main" };
/** A paste past the large-file threshold (set low below): stored aside, the message keeps a reference. */
const PASTE = `${"the nightly report lists every service and its state\n".repeat(200)}the pangolin-4471 rotation key expires friday\n`;

interface Machine {
  filesDirectory: string;
  backend: LcmBackend;
  kit: ReturnType<typeof createTestEngine>;
}

function machine(url: string): Machine {
  const filesDirectory = tempDir();
  const backend = openPostgresBackend(url, "private", { files: new LargeFileStorage(filesDirectory) });
  const kit = createTestEngine({ backend, config: { filesDirectory, largeFileTokenThreshold: 500 } });
  return { filesDirectory, backend, kit };
}

/**
 * Runs `body` as `on` with no sight of the other machine's disk: in one process every path is visible, so the other
 * machine's files directory is moved aside meanwhile (and back after).
 */
async function onlyOn<T>(on: Machine, other: Machine, body: () => Promise<T>): Promise<T> {
  const aside = `${other.filesDirectory}.elsewhere`;
  await rename(other.filesDirectory, aside).catch(() => undefined); // not created yet: nothing of it to hide
  try {
    return await body();
  } finally {
    await rename(aside, other.filesDirectory).catch(() => undefined);
  }
}

async function commit(on: Machine, key: string, messages: AgentMessage[]): Promise<void> {
  const engine = on.kit.newEngine();
  await engine.commitTurn({ sessionId: SESSION.sessionId, sessionKey: SESSION.sessionKey, advancementKey: key, messages });
  await engine.dispose();
}

/** The turn's maintain as the plugin wires it: the search index brought up to date, stored files included. */
async function maintain(on: Machine): Promise<void> {
  const engine = on.kit.newEngine({ searchIndex: on.backend.searchIndex });
  await engine.maintain({ sessionId: SESSION.sessionId, sessionKey: SESSION.sessionKey });
  await engine.dispose();
}

function tools(on: Machine) {
  const { config, tokens, clock, logger } = on.kit;
  const services = () => createRecallServices({
    store: on.backend.store, retrievalStore: on.backend.retrieval, grants: on.backend.grants, config, tokens, clock, logger,
  });
  return { describe: createLcmDescribeTool({ services, config, logger, clock }, SESSION), grep: createLcmGrepTool({ services, config, logger, clock }, SESSION) };
}

async function run(tool: ReturnType<typeof tools>["grep"], params: Record<string, unknown>): Promise<{ text: string; details: Record<string, unknown> }> {
  const result = await tool.execute("call-1", params) as { content: { text: string }[]; details: Record<string, unknown> };
  return { text: result.content.map((part) => part.text).join("\n"), details: result.details };
}

async function storedFileId(on: Machine): Promise<string> {
  const conversation = await on.backend.store.findConversation({ agentId: SESSION.agentId, sessionId: SESSION.sessionId });
  const [file] = await on.backend.store.listLargeFiles(conversation!.conversationId);
  return file!.fileId;
}

async function sql<Row>(on: Machine, text: string, params: unknown[] = []): Promise<Row[]> {
  const database = (on.backend as LcmBackend & { database: { rows(sql: string, params: unknown[]): Promise<Row[]> } }).database;
  return database.rows(text, params);
}

describe("stored files on gateways with no shared disk (PostgreSQL)", () => {
  let a: Machine;
  let b: Machine;

  beforeEach(async () => {
    const url = await createTestPostgresDatabase();
    a = machine(url);
    b = machine(url);
  });
  afterEach(async () => {
    await a.backend.close();
    await b.backend.close();
  });

  it("keeps a pasted file's content in the database with its row, and machine B's lcm_describe reads it", async () => {
    await commit(a, "turn-1", [userMessage(`please keep this:\n${PASTE}`), assistantMessage("Kept.")]);
    const fileId = await storedFileId(a);
    const [kept] = await sql<{ bytes: number }>(a, "SELECT length(content) AS bytes FROM large_file_content WHERE file_id = $1", [fileId]);
    expect(kept?.bytes).toBe((await a.backend.store.getLargeFile(fileId))!.byteSize);

    const described = await onlyOn(b, a, () => run(tools(b).describe, { id: fileId, startLine: 200, maxLines: 3 }));
    expect(described.text).not.toContain('"contentPage": null');
    expect(described.text).toContain("the pangolin-4471 rotation key expires friday");
    // B wrote its own copy, in its own files directory, at the same layout.
    expect(readdirSync(b.filesDirectory, { recursive: true })).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`${fileId}\\.\\w+$`))]));
  });

  it("finds a word inside machine A's file with lcm_grep on machine B, after B's maintain indexed it, and never marks it unreadable", async () => {
    await commit(a, "turn-1", [userMessage(`please keep this:\n${PASTE}`), assistantMessage("Kept.")]);
    const fileId = await storedFileId(a);
    await onlyOn(b, a, () => maintain(b));
    const [state] = await sql<{ state: string; reason: string | null }>(b, "SELECT state, reason FROM file_index");
    expect(state).toEqual({ state: "indexed", reason: null });
    await rm(b.filesDirectory, { recursive: true, force: true }); // B's copy gone too: the search copies it again
    for (const mode of ["full_text", "regex"]) {
      const found = await onlyOn(b, a, () => run(tools(b).grep, { pattern: "pangolin-4471", mode }));
      expect(found.details.matches, mode).toEqual(expect.arrayContaining([
        expect.objectContaining({ type: "message", inFile: expect.objectContaining({ fileId, line: 202 }) }),
      ]));
    }
  });

  it("leaves a file that is neither on machine B nor in the database for later instead of recording it unreadable", async () => {
    await commit(a, "turn-1", [userMessage(`please keep this:\n${PASTE}`), assistantMessage("Kept.")]);
    await sql(a, "DELETE FROM large_file_content");
    await onlyOn(b, a, () => maintain(b));
    expect(await sql(b, "SELECT state, reason FROM file_index")).toEqual([{ state: "pending", reason: null }]);
    // A's own maintain uploads it (it holds the file), and B then indexes it.
    await onlyOn(a, b, () => maintain(a));
    expect(await sql(a, "SELECT count(*)::int AS kept FROM large_file_content")).toEqual([{ kept: 1 }]);
    await onlyOn(b, a, () => maintain(b));
    expect(await sql(b, "SELECT state FROM file_index")).toEqual([{ state: "indexed" }]);
  });

  it("reads no content for files held nowhere when a search on machine B lists them, however often it searches", async () => {
    // Five pastes stored on A, none of them in the database: on B each is a file not indexed yet that no one can read.
    for (let turn = 1; turn <= 5; turn++) {
      await commit(a, `turn-${turn}`, [userMessage(`paste ${turn}:\n${PASTE}report ${turn} ends\n`), assistantMessage(`Kept ${turn}.`)]);
    }
    await sql(a, "DELETE FROM large_file_content");
    const statements: string[] = [];
    const database = (b.backend as LcmBackend & { database: PgDatabase }).database;
    const spies = (["row", "rows"] as const).map((method) => {
      const original = PgDatabase.prototype[method];
      return vi.spyOn(PgDatabase.prototype, method).mockImplementation(function (this: PgDatabase, ...args: Parameters<PgDatabase["rows"]>) {
        if (this === database) statements.push(String(typeof args[0] === "string" ? args[0] : args[0].text));
        return (original as (...call: unknown[]) => Promise<never>).apply(this, args);
      });
    });
    try {
      for (let search = 0; search < 3; search++) {
        const found = await onlyOn(b, a, () => run(tools(b).grep, { pattern: "Kept", mode: "full_text" }));
        expect(found.details.matches).toHaveLength(5);
      }
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    // The old per-file look read each file's content from the database on every search: 15 reads here.
    expect(statements.filter((text) => text.includes("SELECT content FROM large_file_content"))).toEqual([]);
    expect(statements.filter((text) => text.includes("FROM large_file_content WHERE file_id = ANY")).length).toBeGreaterThan(0);
  });

  it("uploads a file recorded before migration 8 (a row without content) from the machine that holds it; B then reads it", async () => {
    await commit(a, "turn-1", [userMessage(`please keep this:\n${PASTE}`), assistantMessage("Kept.")]);
    const fileId = await storedFileId(a);
    await sql(a, "DELETE FROM large_file_content");
    const describeOnB = () => onlyOn(b, a, () => run(tools(b).describe, { id: fileId, startLine: 200, maxLines: 3 }));
    expect((await describeOnB()).text).toContain('"contentPage": null');
    await onlyOn(b, a, () => maintain(b)); // B does not hold the file: nothing to upload
    expect(await sql(b, "SELECT count(*)::int AS kept FROM large_file_content")).toEqual([{ kept: 0 }]);
    await onlyOn(a, b, () => maintain(a));
    const described = (await describeOnB()).text;
    expect(described).not.toContain('"contentPage": null');
    expect(described).toContain("the pangolin-4471 rotation key expires friday");
  });

  it("reports, on the integrity check, a file that is neither on this machine nor in the database, and only that", async () => {
    await commit(a, "turn-1", [userMessage(`please keep this:\n${PASTE}`), assistantMessage("Kept.")]);
    const fileId = await storedFileId(a);
    const check = () => onlyOn(b, a, () => new IntegrityChecker({
      store: b.backend.integrity, clock: new SteppingClock(), fileExists: (path) => access(path).then(() => true, () => false),
    }).check({ includeIndexes: false }));
    expect((await check()).findings).toEqual([]); // not on B's disk, but kept in the database
    await sql(a, "DELETE FROM large_file_content");
    expect((await check()).findings).toEqual([expect.objectContaining({ kind: "large_file_missing", subject: fileId })]);
  });

  it("exports machine A's file with its content from machine B, and an import of that export keeps the content in the database", async () => {
    await commit(a, "turn-1", [userMessage(`please keep this:\n${PASTE}`), assistantMessage("Kept.")]);
    const fileId = await storedFileId(a);
    const records: ExportRecord[] = [];
    await onlyOn(b, a, async () => {
      for await (const record of exportConversationRecords(b.backend.exports, 1)) records.push(record);
    });
    const file = records.find((record) => record.type === "largeFile");
    expect(file && Buffer.from(file.contentBase64 ?? "", "base64").toString()).toContain("the pangolin-4471 rotation key expires friday");

    const path = join(tempDir(), "export.jsonl");
    writeFileSync(path, records.map(exportLine).join(""));
    const target = machine(await createTestPostgresDatabase());
    try {
      await importExportFile(target.backend, path, { filesDirectory: target.filesDirectory, clock: { now: () => 7_000 } });
      expect(await sql(target, "SELECT file_id, length(content) AS bytes FROM large_file_content"))
        .toEqual([{ file_id: fileId, bytes: (await a.backend.store.getLargeFile(fileId))!.byteSize }]);
    } finally {
      await target.backend.close();
    }
  });
});
