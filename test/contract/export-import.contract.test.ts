/**
 * Export and import on either backend (ExportStore, ImportStore): a compacted conversation with hostile text (NUL,
 * U+2028, an astral character, a lone surrogate as SQLite stores it, a 1 MB message) and a stored file exported,
 * imported into an empty database of the same backend and exported again gives the same records; `lcm import jsonl`'s
 * whole path (importExportFile) restores it; publishing refuses a session that has another live conversation and
 * writes nothing; an import removed takes every row it wrote. Rows are put in by the engine on SQLite, then the table
 * copy onto the backend under test.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "../../src/store/backend.js";
import { type ConversationExportRecord, type ExportRecord, exportLine, IMPORTING_REASON } from "../../src/store/export-format.js";
import { exportConversationRecords } from "../../src/transfer/jsonl-export.js";
import { importExportFile } from "../../src/transfer/jsonl-import.js";
import { copyAllTables } from "../../src/transfer/table-migration.js";
import { buildDatabase, exchanges } from "../cli/cli-harness.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";

const HOSTILE = "nul\u0000in the middle, line\u2028separator, astral \u{1F9EA}, lone \uD800 surrogate, U+FDD0 \uFDD0";
const LONG = `long ${"0123456789abcdef".repeat(65_536)} end`;
const OUTPUT = Array.from({ length: 300 }, (_, line) => `migration step ${line}: ${line === 42 ? "index rebuilt" : "ok"}`).join("\n");
let sourcePath: string;

beforeAll(async () => {
  sourcePath = join(tempDir(), "source.db");
  const turns = [...exchanges(30, 30), userMessage(HOSTILE), assistantMessage(LONG),
    toolCallMessage([{ id: "call_m", name: "exec", arguments: { command: "migrate", note: HOSTILE } }]), toolResultMessage("call_m", "exec", OUTPUT),
    assistantMessage("done"), ...exchanges(10, 30, "z")];
  await buildDatabase({ databasePath: sourcePath, compact: true, config: { leafChunkTokens: 400, largeFileTokenThreshold: 200, condensedMinFanout: 2 },
    sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: turns }] });
}, 120_000);

async function exported(backend: LcmBackend, conversationId: number): Promise<ExportRecord[]> {
  return backend.exports.readSnapshot(async () => {
    const records: ExportRecord[] = [];
    for await (const record of exportConversationRecords(backend.exports, conversationId)) records.push(record);
    return records;
  });
}

describe.each(backendKinds())("export and import on %s", (kind) => {
  let source: TestBackend;
  const others: TestBackend[] = [];
  beforeEach(async () => {
    source = await openTestBackend(kind);
    const original = openSqliteBackend(sourcePath, "private");
    try {
      await copyAllTables(original.tableCopy, source.backend.tableCopy);
    } finally {
      await original.close();
    }
  });
  afterEach(async () => {
    for (const backend of others.splice(0)) await backend.close();
    await source.close();
  });
  async function emptyBackend(): Promise<LcmBackend> {
    const opened = await openTestBackend(kind);
    others.push(opened);
    return opened.backend;
  }

  it("exports a conversation that, imported through the store into an empty database, exports the same records", async () => {
    const first = await exported(source.backend, 1);
    // The same records as SQLite's export of the original database.
    const original = openSqliteBackend(sourcePath, "private");
    try {
      expect(first).toEqual(await exported(original, 1));
    } finally {
      await original.close();
    }
    expect(first.some((record) => record.type === "summary" && record.sourceSummaries.length > 0)).toBe(true);
    const messages = first.filter((record) => record.type === "message");
    expect(messages.map((record) => record.content)).toEqual(expect.arrayContaining([HOSTILE.replace("\uD800", "\uFFFD"), LONG]));
    expect(first.filter((record) => record.type === "summary").length).toBeGreaterThan(1);
    const file = first.find((record) => record.type === "largeFile");
    expect(file && Buffer.from(file.contentBase64!, "base64").toString("utf8")).toBe(OUTPUT);

    const target = await emptyBackend();
    const conversationId = await target.imports.openConversation(first[0] as ConversationExportRecord);
    const end = first.at(-1)!;
    for (const record of first.slice(1, -1)) {
      if (record.type === "largeFile") {
        const path = join(tempDir(), record.storedName);
        writeFileSync(path, Buffer.from(record.contentBase64!, "base64"));
        await target.imports.writeLargeFile(conversationId, record, path);
      }
    }
    const rows = first.slice(1, -1).filter((record) => record.type !== "largeFile");
    await target.imports.writeRecords(conversationId, rows.slice(0, 7));
    await target.imports.writeRecords(conversationId, rows); // a resumed import: the first rows are left as they are
    expect(end.type).toBe("end");
    const refusal = await target.imports.publish([{
      conversationId, archivedAt: null, archiveReason: null,
      expected: { messages: messages.length, summaries: first.filter((record) => record.type === "summary").length, contextItems: rows.filter((record) => record.type === "contextItem").length },
    }], 5_000);
    expect(refusal).toBeNull();
    const second = await exported(target, conversationId);
    expect(second.slice(1)).toEqual(first.slice(1));
    expect(second[0]).toEqual(first[0]);
  });

  it("restores a JSONL export through lcm import jsonl's path (checked, written, published) on the backend", async (context) => {
    const target = await emptyBackend();
    if (await target.integrity.conversationIds(0, 1).then(() => false, () => true)) context.skip(); // the integrity store is not on this backend yet
    const file = join(tempDir(), "export.jsonl");
    const records = await exported(source.backend, 1);
    writeFileSync(file, records.map(exportLine).join(""));
    const result = await importExportFile(target, file, { filesDirectory: tempDir(), clock: { now: () => 7_000 } });
    expect(result.conversations).toMatchObject([{ outcome: "imported", messages: records.filter((record) => record.type === "message").length }]);
    expect(await exported(target, result.conversations[0]!.conversationId!)).toEqual(records.map((record) =>
      record.type === "largeFile" ? { ...record } : record));
  });

  it("refuses to publish into a session that has another live conversation, and removes an import whole", async () => {
    const first = await exported(source.backend, 1);
    const conversation = first[0] as ConversationExportRecord;
    // The source database itself holds the live conversation of this session: the import stays unpublished.
    const conversationId = await source.backend.imports.openConversation(conversation);
    await source.backend.imports.writeRecords(conversationId, first.filter((record) => record.type === "message").slice(0, 3));
    const refusal = await source.backend.imports.publish([{ conversationId, archivedAt: null, archiveReason: null, expected: { messages: 3, summaries: 0, contextItems: 0 } }], 9_000);
    expect(refusal).toMatchObject({ kind: "session-taken", index: 0 });
    const counted = await source.backend.exports.conversationCounts(conversationId);
    expect(counted).toMatchObject({ messages: conversation.messageCount }); // the conversation's counters as the file says
    expect((await exported(source.backend, conversationId)).filter((record) => record.type === "message")).toHaveLength(3);
    expect(await source.backend.exports.findConversation(conversation)).toEqual({ conversationId: 1, archiveReason: null });

    const wrongCounts = await source.backend.imports.publish([{ conversationId, archivedAt: 1, archiveReason: "kept", expected: { messages: 4, summaries: 0, contextItems: 0 } }], 9_000);
    expect(wrongCounts).toEqual({ kind: "counts", index: 0, stored: { messages: 3, summaries: 0, contextItems: 0 } });
    expect((await exported(source.backend, conversationId))[0]).toMatchObject({ archiveReason: IMPORTING_REASON });

    expect(await source.backend.imports.removeConversation(conversationId)).toEqual([]);
    expect(await source.backend.exports.conversationCounts(conversationId)).toBeNull();
    expect(await source.backend.exports.conversationIdsOfAgent("main")).toEqual([1]);
  });
});
