/**
 * `lcm export` when the easy path is the wrong one: a target that is the live database (--force or not, by any path),
 * a conversation retention pruned (the archive reference travels and the restored conversation still says where the
 * text is), a stored file that cannot be read (refused unless --allow-missing-files, which says the export is not
 * lossless), and a /new running during the export (one consistent snapshot, which restores clean).
 */
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DescribeOutputSchema, ExportOutputSchema, ImportJsonlOutputSchema } from "../../src/cli/output-schemas.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { resolveRecordedPath } from "../../src/sqlite/stored-file-path.js";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import type { SummaryDescription } from "../../src/retrieval/describe.js";
import plugin from "../../src/plugin.js";
import type { ExportRecord } from "../../src/store/export-format.js";
import { exportConversationRecords } from "../../src/transfer/jsonl-export.js";
import { SqliteExportStore } from "../../src/sqlite/sqlite-export-store.js";
import { buildDatabase, exchanges, runJson, runLcm } from "../cli/cli-harness.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { retentionSetup, storeExchanges, summarize } from "../retention/retention-helpers.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { tempDatabasePath, tempDir } from "../helpers/temp-dir.js";
import { fileBlock, generateCsv } from "../large-files/generated-inputs.js";

describe("lcm export never writes over the database", () => {
  it("refuses --out naming the live database, its -wal file, or a link to it, with --force too, and leaves it as it was", async () => {
    const dir = tempDir();
    const databasePath = join(dir, "lcm.db");
    await buildDatabase({ databasePath, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(5, 5) }] });
    const before = readFileSync(databasePath);
    const link = join(dir, "link.jsonl");
    symlinkSync(databasePath, link);
    for (const out of [databasePath, `${databasePath}-wal`, link, join(dir, ".", "lcm.db")]) {
      const run = await runLcm(["export", "1", "--format", "jsonl", "--out", out, "--force", "--db", databasePath]);
      expect([run.code, run.stderr]).toEqual([EXIT.usage, expect.stringMatching(/The export target .* is the database('s wal file| itself) .* with or without --force/)]);
    }
    expect(readFileSync(databasePath)).toEqual(before);
    const backup = await runLcm(["backup", link, "--force", "--db", databasePath]);
    expect([backup.code, backup.stderr]).toEqual([EXIT.usage, expect.stringMatching(/The backup target .* is the database itself/)]);
  });
});

describe("lcm export of a conversation retention pruned", () => {
  it("writes each pruned message's archive, and after import describe and Markdown say where the text is", async () => {
    const setup = retentionSetup({ retentionMaxAgeDays: 30 });
    const conversationId = await storeExchanges(setup, "s1", 10);
    const [summaryId] = summarize(setup, conversationId, 1, 10);
    const report = await setup.service.run({ apply: true });
    const archive = report.messages.archivePaths[0]!;
    const file = join(setup.directory, "pruned.jsonl");
    await runJson(["export", String(conversationId), "--format", "jsonl", "--out", file, "--db", setup.config.databasePath], ExportOutputSchema);
    const records = readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as ExportRecord);
    const pruned = records.filter((record) => record.type === "message" && record.archive);
    expect(pruned.map((record) => record.type === "message" && record.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(pruned[0]).toMatchObject({ content: "", archive: { path: archive, reason: "age" } });

    const restored = join(tempDir(), "restored.db");
    await runJson(["import", "jsonl", file, "--db", restored, "--apply"], ImportJsonlOutputSchema);
    const description = await runJson<SummaryDescription>(["describe", summaryId!, "--db", restored], DescribeOutputSchema);
    expect(description.archivedSources).toEqual([expect.objectContaining({ archivePath: archive, messageIds: description.sourceMessageIds })]);
    const again = join(tempDir(), "again.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", again, "--db", restored], ExportOutputSchema);
    expect(readFileSync(again)).toEqual(readFileSync(file));
    const markdown = join(tempDir(), "pruned.md");
    await runJson(["export", "1", "--format", "markdown", "--out", markdown, "--db", restored], ExportOutputSchema);
    expect(readFileSync(markdown, "utf8")).toContain(`_(archived by retention: the text is in ${archive})_`);
  });
});

describe("lcm export with a stored file it cannot read", () => {
  async function withLostFile(damage: (path: string) => void = (path) => rmSync(path)) {
    const dir = tempDir();
    const databasePath = join(dir, "lcm.db");
    await buildDatabase({
      databasePath, config: { largeFileTokenThreshold: 2_000 },
      sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: [userMessage(`table\n${fileBlock("people.csv", "text/csv", generateCsv(3_000))}`), assistantMessage("ok")] }],
    });
    const db = openDatabase(databasePath);
    const { file_id: fileId, storage_path: path } = db.get<{ file_id: string; storage_path: string }>("SELECT file_id, storage_path FROM large_files")!;
    db.close();
    damage(resolveRecordedPath(databasePath, path));
    return { dir, databasePath, fileId };
  }

  it("fails, names the file, writes nothing and does not call itself lossless", async () => {
    const { dir, databasePath, fileId } = await withLostFile();
    const out = join(dir, "export.jsonl");
    const run = await runLcm(["export", "1", "--format", "jsonl", "--out", out, "--db", databasePath]);
    expect([run.code, run.stderr]).toEqual([EXIT.unavailable, expect.stringMatching(new RegExp(`stored file ${fileId} of conversation 1 cannot be read .* not be lossless; nothing was written`))]);
    expect(run.stdout).not.toMatch(/lossless/);
    expect(existsSync(out)).toBe(false);
  });

  it("fails the same way for a stored file of another size than recorded (damaged), which no import would accept", async () => {
    const { dir, databasePath, fileId } = await withLostFile((path) => writeFileSync(path, "truncated"));
    // Several times: the export fails while its output file may still be opening; it must wait for it to close before
    // removing it (once, under load, a write pending on the destroyed stream failed unhandled).
    for (let attempt = 0; attempt < 5; attempt++) {
      const run = await runLcm(["export", "1", "--format", "jsonl", "--out", join(dir, "export.jsonl"), "--db", databasePath]);
      expect([run.code, run.stderr]).toEqual([EXIT.unavailable, expect.stringMatching(new RegExp(`stored file ${fileId} .* cannot be read`))]);
      expect(readdirSync(dir).filter((name) => name.startsWith("export.jsonl"))).toEqual([]);
    }
  });

  it("with --allow-missing-files, exports the record without content and says it is not lossless", async () => {
    const { dir, databasePath, fileId } = await withLostFile();
    const out = join(dir, "export.jsonl");
    const output = await runJson<{ lossless: boolean; missingFileIds: string[] }>(
      ["export", "1", "--format", "jsonl", "--out", out, "--allow-missing-files", "--db", databasePath], ExportOutputSchema,
    );
    expect(output).toMatchObject({ lossless: false, missingFileIds: [fileId] });
    const text = await runLcm(["export", "1", "--format", "jsonl", "--out", out, "--force", "--allow-missing-files", "--db", databasePath]);
    expect(text.stdout).toMatch(new RegExp(`NOT lossless: 1 stored file was unreadable and is recorded without content \\(--allow-missing-files\\): ${fileId}`));
    expect(text.stdout).not.toMatch(/; lossless/);
  });
});

describe("an export while /new runs", () => {
  it("is one snapshot: counters and context from the same moment, and it restores clean", async () => {
    const databasePath = tempDatabasePath();
    const api = new FakePluginApi(
      { databasePath, freshTailCount: 2, leafChunkTokens: 256, leafMinFanout: 2, leafTargetTokens: 40, condensedMinFanout: 2 },
      { llm: new RecordingLlm(() => "summary of an earlier stretch") },
    );
    const session = { sessionId: "s-new", sessionKey: "agent:main:new" };
    api.sessionEntries.set(session.sessionKey, { sessionId: session.sessionId, sessionStartedAt: Date.UTC(2026, 10, 1) });
    plugin.register(api);
    for (let turn = 1; turn <= 30; turn++) {
      await api.engine().commitTurn({ ...session, advancementKey: `t${turn}`, messages: [userMessage(`turn ${turn} ${"word ".repeat(40)}`), assistantMessage(`reply ${turn}`)] });
    }
    await api.engine().compact({ ...session, force: true, compactionTarget: "threshold", tokenBudget: 2_000 });

    // The export's own connection (as the CLI opens it); /new runs on the plugin's while the export reads.
    const reader = openDatabase(databasePath);
    const records: ExportRecord[] = [];
    const exports = new SqliteExportStore(reader);
    await exports.readSnapshot(async () => {
      for await (const record of exportConversationRecords(exports, 1)) {
        records.push(record);
        if (record.type === "conversation") {
          api.sessionEntries.set(session.sessionKey, { sessionId: session.sessionId, sessionStartedAt: Date.now() });
          await api.emit("session_end", { ...session, reason: "new", nextSessionId: session.sessionId }, { agentId: "main" });
        }
      }
    });
    reader.close();
    const live = openDatabase(databasePath);
    expect(live.get<{ reset: string | null }>("SELECT last_reset AS reset FROM conversations")!.reset).not.toBeNull(); // /new did run meanwhile
    live.close();
    const file = join(tempDir(), "snapshot.jsonl");
    writeFileSync(file, records.map((record) => `${JSON.stringify(record)}\n`).join(""));
    // Before /new: no reset recorded, and the context as it was; the restore passes the import's own doctor check.
    expect(records[0]).toMatchObject({ type: "conversation", lastReset: null });
    const restored = join(tempDir(), "restored.db");
    const imported = await runJson<{ imported: number }>(["import", "jsonl", file, "--db", restored, "--apply"], ImportJsonlOutputSchema);
    expect(imported.imported).toBe(1);
    expect((await runLcm(["doctor", "--db", restored])).code).toBe(EXIT.ok);
  });
});
