/**
 * `lcm import lossless-claw`: both schema lines of the peer's database are read and mapped (conversations keyed so
 * the next turn finds them, messages with their blocks, the summary DAG, the context the model last saw, stored
 * files); the result passes the integrity checker and a turn through the engine sees the imported summaries; the
 * import is a dry run by default, idempotent, resumable, and never changes the source.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DescribeOutputSchema, DoctorOutputSchema, ExportOutputSchema, GrepOutputSchema, ImportLosslessClawOutputSchema } from "../../../src/cli/output-schemas.js";
import { EXIT } from "../../../src/cli/exit-codes.js";
import { openDatabase } from "../../../src/sqlite/connection-registry.js";
import type { ImportLosslessClawOutput } from "../../../src/cli/commands/import-lossless-claw-command.js";
import { SqlitePeerImportStore } from "../../../src/sqlite/sqlite-peer-import-store.js";
import { importLosslessClaw, MESSAGE_PAGE } from "../../../src/transfer/lossless-claw/lossless-claw-import.js";
import { LargeFileStorage } from "../../../src/large-files/large-file-storage.js";
import { DefaultTokenEstimator } from "../../../src/tokens/default-token-estimator.js";
import { runJson, runLcm } from "../../cli/cli-harness.js";
import { createTestEngine } from "../../helpers/engine.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { SteppingClock } from "../../fakes/clocks.js";
import {
  buildPeerScenario, CONDENSED_ID, FILE_CONTENT, FILE_ID, IMAGE_BYTES, IMAGE_FILE_ID, LEAF_IDS, MISSING_FILE_ID, SESSION_ID,
} from "./peer-scenario.js";
import { resolveRecordedPath } from "../../../src/sqlite/stored-file-path.js";

function hashOf(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function target(): string {
  return join(tempDir("lcm-import-"), "lcm-context.db");
}

async function importCli(source: string, db: string, apply: boolean): Promise<ImportLosslessClawOutput> {
  return runJson<ImportLosslessClawOutput>(["import", "lossless-claw", source, "--db", db, ...(apply ? ["--apply"] : [])], ImportLosslessClawOutputSchema);
}

function rows(db: string, sql: string): number {
  const database = openDatabase(db);
  try {
    return Number((database.raw.prepare(sql).get() as { n: number }).n);
  } finally {
    database.close();
  }
}

describe.each(["0.1", "1.x"] as const)("lossless-claw %s database", (line) => {
  it("a dry run reports what would come over and writes nothing", async () => {
    const scenario = buildPeerScenario(line);
    const db = target();
    const report = await importCli(scenario.path, db, false);
    // Said as `import jsonl` and `import openclaw` say it (applied is its opposite, kept for older scripts).
    expect(report).toMatchObject({ dryRun: true, applied: false, databasePath: db, databaseCreated: false });
    expect(report.source.schemaLine).toBe(line === "1.x" ? "1.x" : "0.x");
    expect(report.written.messages).toBe(report.sourceCounts.messages);
    // 2 leaves + 1 condensed; 12 messages under the leaves, 2 summaries under the condensed one.
    expect(report.written).toMatchObject({ summaries: 3, summaryMessages: 12, summaryParents: 2, largeFiles: 1 });
    expect(existsSync(db)).toBe(false);
  });

  it("imports the conversation, its DAG, its context and its file, and passes the integrity check", async () => {
    const scenario = buildPeerScenario(line);
    const before = hashOf(scenario.path);
    const db = target();
    const report = await importCli(scenario.path, db, true);
    expect(hashOf(scenario.path)).toBe(before);
    expect(readdirSync(join(scenario.path, "..")).filter((name) => name.startsWith("lcm.db-"))).toEqual([]);
    const conversations = line === "1.x" ? 2 : 1;
    expect(report.written.conversations).toBe(conversations);
    expect(report.written.messages).toBe(scenario.messages + (line === "1.x" ? 1 : 0));
    expect(report.written).toMatchObject({ summaries: 3, summaryMessages: 12, summaryParents: 2, largeFiles: 1 });
    // The condensed summary, then the fresh tail; the archived conversation's one message.
    expect(report.written.contextItems).toBe(1 + scenario.freshMessageIds.length + (line === "1.x" ? 1 : 0));
    expect(report.conversations.archived).toBe(line === "1.x" ? 1 : 0);
    if (line === "1.x") expect(report.notImportedTables).toMatchObject({ focus_briefs: 1 });
    // 0.1 kept no tool name for a tool result; nothing else is lost on either line.
    expect(report.unmapped.map((entry) => entry.kind)).toEqual(line === "0.1" ? ["message: tool result without its tool name (lossless-claw 0.1 did not keep it)"] : []);

    const database = openDatabase(db);
    try {
      const live = database.get<{ conversation_id: number; agent_id: string; session_key: string | null }>(
        "SELECT conversation_id, agent_id, session_key FROM conversations WHERE archived_at IS NULL",
      )!;
      expect(live.agent_id).toBe(scenario.agentId);
      expect(live.session_key).toBe(scenario.sessionKey ?? null);
      const condensed = database.get<{ depth: number; descendant_count: number; source_message_count: number; seq_start: number; seq_end: number }>(
        "SELECT depth, descendant_count, source_message_count, seq_start, seq_end FROM summaries WHERE summary_id = ?", CONDENSED_ID,
      )!;
      expect(condensed).toEqual({ depth: 1, descendant_count: 2, source_message_count: 12, seq_start: 1, seq_end: 12 });
      const parents = database.all<{ parent: string }>(
        `SELECT p.summary_id AS parent FROM summary_parents sp JOIN summaries s ON s.id = sp.summary_id JOIN summaries p ON p.id = sp.parent_summary_id
         WHERE s.summary_id = ? ORDER BY sp.ordinal`, CONDENSED_ID,
      ).map((row) => row.parent);
      expect(parents).toEqual([...LEAF_IDS]);
      const file = database.get<{ storage_path: string }>("SELECT storage_path FROM large_files WHERE file_id = ?", FILE_ID)!;
      expect(readFileSync(resolveRecordedPath(db, file.storage_path), "utf8")).toBe(FILE_CONTENT);
      const toolResult = database.get<{ meta: string }>("SELECT meta FROM messages WHERE role = 'toolResult'")!;
      expect(JSON.parse(toolResult.meta)).toMatchObject(line === "1.x" ? { toolCallId: "call_1", toolName: "read", isError: false } : { toolCallId: "call_1" });
      const calls = database.get<{ n: number }>("SELECT count(*) AS n FROM message_parts WHERE kind = 'toolCall'")!.n;
      expect(calls).toBe(1);
    } finally {
      database.close();
    }
    const doctor = await runJson<{ healthy: boolean; findings: unknown[] }>(["doctor", "--db", db], DoctorOutputSchema);
    expect(doctor.findings).toEqual([]);
    expect(doctor.healthy).toBe(true);
  });

  it("the next turn of the session continues the imported conversation and sees its summaries", async () => {
    const scenario = buildPeerScenario(line);
    const db = target();
    await importCli(scenario.path, db, true);
    const env = createTestEngine({ databasePath: db });
    const session = { sessionId: SESSION_ID, ...(scenario.sessionKey ? { sessionKey: scenario.sessionKey } : {}) };
    const engine = env.newEngine();
    const assembled = await engine.assemble({ ...session, messages: [], tokenBudget: 50_000 });
    const texts = assembled.messages.map((message) => JSON.stringify(message.content));
    expect(texts[0]).toContain(`id=\\"${CONDENSED_ID}\\"`);
    expect(texts.some((text) => text.includes("fresh answer 6 detail6"))).toBe(true);
    await engine.commitTurn({ ...session, advancementKey: "after-import", messages: [
      { role: "user", content: "a new question after the import", timestamp: Date.UTC(2026, 10, 1) },
      { role: "assistant", content: [{ type: "text", text: "a new answer" }], timestamp: Date.UTC(2026, 10, 1, 0, 0, 1) },
    ] });
    const conversation = (await env.store.findConversation({ agentId: scenario.agentId, sessionId: SESSION_ID }))!;
    expect(conversation.messageCount).toBe(scenario.messages + 2);
  });

  it("a second run adds nothing", async () => {
    const scenario = buildPeerScenario(line);
    const db = target();
    expect(await importCli(scenario.path, db, true)).toMatchObject({ dryRun: false, applied: true, databasePath: db, databaseCreated: true });
    const messages = rows(db, "SELECT count(*) AS n FROM messages");
    const again = await importCli(scenario.path, db, true);
    expect(again).toMatchObject({ dryRun: false, databaseCreated: false });
    expect(again.conversations.alreadyImported).toBe(again.conversations.total);
    expect(Object.values(again.written).every((value) => value === 0)).toBe(true);
    expect(rows(db, "SELECT count(*) AS n FROM messages")).toBe(messages);
    const dry = await importCli(scenario.path, db, false);
    expect(dry.written.messages).toBe(0);
  });
});

describe("stored files", () => {
  it("copies text and binary files byte for byte, and keeps the record of a file missing from disk", async () => {
    const scenario = buildPeerScenario("1.x", { files: true });
    const db = target();
    const dry = await importCli(scenario.path, db, false);
    expect(dry.written.largeFiles).toBe(3);
    const report = await importCli(scenario.path, db, true);
    expect(report.written.largeFiles).toBe(3);
    // The missing file is reported, its record kept; nothing else is inexact.
    expect(report.unmapped).toEqual([{ kind: "file: stored file not found (record kept, content missing)", count: 1, examples: [MISSING_FILE_ID] }]);

    const database = openDatabase(db);
    const files = new Map(database.all<{ file_id: string; storage_path: string; byte_size: number; mime_type: string; explorer: string }>(
      "SELECT file_id, storage_path, byte_size, mime_type, explorer FROM large_files",
    ).map((row) => [row.file_id, { ...row, storage_path: resolveRecordedPath(db, row.storage_path) }]));
    database.close();
    expect(readFileSync(files.get(FILE_ID)!.storage_path, "utf8")).toBe(FILE_CONTENT);
    const image = files.get(IMAGE_FILE_ID)!;
    expect(readFileSync(image.storage_path).equals(IMAGE_BYTES)).toBe(true);
    expect(image).toMatchObject({ byte_size: IMAGE_BYTES.length, mime_type: "image/png", explorer: "binary" });
    expect(image.storage_path).toMatch(/\.png$/);
    expect(existsSync(files.get(MISSING_FILE_ID)!.storage_path)).toBe(false);

    // describe names the image as binary (no text pages); the missing file keeps its summary and says it is missing.
    const described = await runJson<{ content: unknown; contentNote: string; explorationSummary: string }>(["describe", IMAGE_FILE_ID, "--db", db], DescribeOutputSchema);
    expect(described.content).toBeNull();
    expect(described.contentNote).toContain(`binary content (image/png, ${IMAGE_BYTES.length} bytes)`);
    const missing = await runJson<{ content: unknown; contentNote: string }>(["describe", MISSING_FILE_ID, "--db", db], DescribeOutputSchema);
    expect(missing.contentNote).toMatch(/missing from disk/);
    // A search of the stored files reads the text file and names the image as not searched as text.
    const found = await runJson<{ matches: { snippet: string }[]; note: string | null } & Record<string, unknown>>(
      ["grep", "deploy key", "--scope", "files", "--db", db], GrepOutputSchema,
    );
    expect(found.matches.map((match) => match.snippet).join(" ")).toContain("is rotated monthly");
    expect(JSON.stringify(found)).toContain(`${IMAGE_FILE_ID} (screenshot.png) is binary content`);
    // An export carries the image's bytes (lcm import jsonl writes them back as they were); the conversation also holds
    // the file missing from disk, which the export refuses to drop silently: --allow-missing-files says so.
    const out = join(tempDir(), "export.jsonl");
    const conversationId = rows(db, "SELECT conversation_id AS n FROM large_files WHERE file_id = '" + IMAGE_FILE_ID + "'");
    await runJson(["export", String(conversationId), "--format", "jsonl", "--out", out, "--allow-missing-files", "--db", db], ExportOutputSchema);
    const exported = readFileSync(out, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as { type: string; fileId?: string; contentBase64?: string });
    expect(exported.find((record) => record.fileId === IMAGE_FILE_ID)?.contentBase64).toBe(IMAGE_BYTES.toString("base64"));
    // lcm doctor sees the one file that is missing, and nothing else.
    const doctor = await runJson<{ findings: { kind: string; subject: string }[] }>(["doctor", "--db", db], DoctorOutputSchema, { code: EXIT.problemsFound });
    expect(doctor.findings.map((finding) => [finding.kind, finding.subject])).toEqual([["large_file_missing", MISSING_FILE_ID]]);
  });
});

describe("an interrupted import", () => {
  it("resumes where it stopped and ends with every row once", async () => {
    // 1,212 messages, read in pages of MESSAGE_PAGE and written a time slice per transaction; stopped after the first.
    const scenario = buildPeerScenario("1.x", { extraMessages: 1_196 });
    const db = target();
    const database = openDatabase(db);
    const deps = {
      sourcePath: scenario.path, store: new SqlitePeerImportStore(database), files: new LargeFileStorage(join(tempDir(), "files")),
      tokens: new DefaultTokenEstimator(), clock: new SteppingClock(),
    };
    try {
      const controller = new AbortController();
      await expect(importLosslessClaw({ ...deps, signal: controller.signal, onProgress: (done) => done > 0 && controller.abort() })).rejects.toThrow();
      const partial = database.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n;
      expect(partial).toBeGreaterThan(0);
      expect(partial).toBeLessThanOrEqual(MESSAGE_PAGE);
      expect(database.get<{ archive_reason: string }>("SELECT archive_reason FROM conversations")!.archive_reason).toMatch(/importing/);
      const report = await importLosslessClaw(deps);
      expect(report.conversations.resumed).toBe(1);
      expect(database.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(scenario.messages + 1);
      expect(database.get<{ n: number }>("SELECT count(DISTINCT identity_key) AS n FROM messages")!.n).toBe(scenario.messages + 1);
    } finally {
      database.close();
    }
    const doctor = await runJson<{ healthy: boolean }>(["doctor", "--db", db], DoctorOutputSchema);
    expect(doctor.healthy).toBe(true);
  });
});

describe("transactions cut by time", () => {
  it("with every time slice spent at once, writes one message per transaction and ends with the same import", async () => {
    const scenario = buildPeerScenario("1.x");
    const db = target();
    const database = openDatabase(db);
    const progress: number[] = [];
    try {
      const report = await importLosslessClaw({
        sourcePath: scenario.path, store: new SqlitePeerImportStore(database), files: new LargeFileStorage(join(tempDir(), "files")),
        tokens: new DefaultTokenEstimator(), clock: new SteppingClock(), sliceMs: 0, onProgress: (done) => progress.push(done),
      });
      // 16 + 1 messages in two conversations: one transaction each (a progress call each, one step up), plus one
      // call per finished conversation (no step).
      const steps = progress.slice(1).map((done, index) => done - progress[index]!);
      expect(scenario.messages).toBe(16);
      expect(progress[0]).toBe(1);
      expect(Math.max(...steps)).toBe(1);
      expect(steps.filter((step) => step === 1)).toHaveLength(scenario.messages);  // the first message is progress[0]
      expect(report.written).toMatchObject({ messages: scenario.messages + 1, summaries: 3, summaryMessages: 12, summaryParents: 2 });
      expect(report.written.contextItems).toBe(1 + scenario.freshMessageIds.length + 1);
    } finally {
      database.close();
    }
    const doctor = await runJson<{ healthy: boolean }>(["doctor", "--db", db], DoctorOutputSchema);
    expect(doctor.healthy).toBe(true);
  });
});

describe("what is not lossless-claw's database", () => {
  it("a missing source exits 3 and an LCM database exits 5", async () => {
    const db = target();
    expect((await runLcm(["import", "lossless-claw", join(tempDir(), "nothing.db"), "--db", db])).code).toBe(EXIT.notFound);
    openDatabase(db).close();
    const other = target();
    expect((await runLcm(["import", "lossless-claw", db, "--db", other])).code).toBe(EXIT.refused);
  });
});
