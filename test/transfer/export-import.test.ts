/**
 * `lcm export` and `lcm import jsonl` through the CLI, on database files made by the engine: the JSONL export restores
 * exactly (a second export of the restored conversation is the same bytes), imports are idempotent and resumable,
 * and a bad file is refused with nothing changed.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ExportOutputSchema, ImportJsonlOutputSchema } from "../../src/cli/output-schemas.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import type { Database } from "../../src/sqlite/database.js";
import { IMPORTING_REASON } from "../../src/store/export-format.js";
import { buildDatabase, exchanges, runJson, runLcm } from "../cli/cli-harness.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";
import { fileBlock, generateCsv } from "../large-files/generated-inputs.js";
import { resolveRecordedPath } from "../../src/sqlite/stored-file-path.js";

/** A compacted conversation (leaf and condensed summaries) holding a large file, and a second session of the agent. */
async function sourceDatabase() {
  const dir = tempDir();
  const databasePath = join(dir, "source.db");
  const withFile = [
    ...exchanges(150, 30, "a"),
    userMessage(`Here is the table.\n${fileBlock("people.csv", "text/csv", generateCsv(3_000))}`),
    assistantMessage("Read it."),
    ...exchanges(50, 30, "b"),
  ];
  await buildDatabase({
    databasePath, compact: true, config: { largeFileTokenThreshold: 2_000 },
    sessions: [
      { sessionKey: "agent:main:main", sessionId: "s1", messages: withFile },
      { sessionKey: "agent:main:second", sessionId: "s2", messages: exchanges(20, 10, "c") },
    ],
  });
  return { dir, databasePath };
}

/** Every row of a conversation in a form that does not depend on row ids. */
function snapshot(db: Database, conversationId: number) {
  return {
    messages: db.all(`SELECT seq, role, content, token_count, created_at, identity_key, flags, meta FROM messages WHERE conversation_id = ? ORDER BY seq`, conversationId),
    parts: db.all(`SELECT m.seq, p.ordinal, p.kind, p.text_start, p.text_end, p.data, p.meta FROM message_parts p JOIN messages m USING (message_id)
                   WHERE m.conversation_id = ? ORDER BY m.seq, p.ordinal`, conversationId),
    summaries: db.all(`SELECT summary_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at, descendant_count,
                         source_message_count, seq_start, seq_end, file_ids, level, created_at FROM summaries WHERE conversation_id = ? ORDER BY summary_id`, conversationId),
    messageEdges: db.all(`SELECT s.summary_id, m.seq, e.ordinal FROM summary_messages e JOIN summaries s ON s.id = e.summary_id
                          JOIN messages m ON m.message_id = e.message_id WHERE s.conversation_id = ? ORDER BY 1, 3`, conversationId),
    summaryEdges: db.all(`SELECT s.summary_id, p.summary_id AS source, e.ordinal FROM summary_parents e JOIN summaries s ON s.id = e.summary_id
                          JOIN summaries p ON p.id = e.parent_summary_id WHERE s.conversation_id = ? ORDER BY 1, 3`, conversationId),
    context: db.all(`SELECT c.ordinal, m.seq, s.summary_id, c.token_count, c.flags FROM context_items c LEFT JOIN messages m ON m.message_id = c.message_id
                     LEFT JOIN summaries s ON s.id = c.summary_id WHERE c.conversation_id = ? ORDER BY c.ordinal`, conversationId),
    files: db.all(`SELECT file_id, content_hash, file_name, mime_type, byte_size, token_count, exploration_summary, explorer, origin, tool_name, created_at
                   FROM large_files WHERE conversation_id = ? ORDER BY file_id`, conversationId),
    conversation: db.all(`SELECT agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq, next_ordinal, message_count,
                            message_tokens, context_tokens, context_raw_tokens, context_items, last_token_budget, bootstrap_state, last_compaction,
                            archived_at, archive_reason FROM conversations WHERE conversation_id = ?`, conversationId),
  };
}

/** The database file and its companions (-wal, -shm), byte for byte. */
function databaseBytes(databasePath: string) {
  const names = readdirSync(dirname(databasePath)).filter((name) => name.startsWith(basename(databasePath))).sort();
  return names.map((name) => [name, readFileSync(join(dirname(databasePath), name)).toString("base64")]);
}

function counts(databasePath: string) {
  const db = openDatabase(databasePath);
  try {
    return db.get<{ conversations: number; messages: number }>(
      "SELECT (SELECT count(*) FROM conversations) AS conversations, (SELECT count(*) FROM messages) AS messages",
    )!;
  } finally {
    db.close();
  }
}

describe("lcm export --format jsonl and lcm import jsonl", () => {
  it("restores a compacted conversation exactly: export → import into a fresh database → export gives the same bytes", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const first = join(dir, "first.jsonl");
    const exported = await runJson<{ conversations: { messages: number; summaries: number; largeFiles: number; missingFiles: number }[] }>(
      ["export", "1", "--format", "jsonl", "--out", first, "--db", databasePath], ExportOutputSchema,
    );
    // 150 + 1 + 50 exchanges = 402 messages; compaction made summaries; the CSV was stored aside.
    expect(exported.conversations[0]).toMatchObject({ messages: 402, largeFiles: 1, missingFiles: 0 });
    expect(exported.conversations[0]!.summaries).toBeGreaterThan(1);

    const restoredPath = join(dir, "restored.db");
    const imported = await runJson<{ imported: number; skipped: number; databaseCreated: boolean; conversations: { conversationId: number }[] }>(
      ["import", "jsonl", first, "--db", restoredPath, "--apply"], ImportJsonlOutputSchema,
    );
    expect(imported).toMatchObject({ imported: 1, skipped: 0, databaseCreated: true });
    const restoredId = imported.conversations[0]!.conversationId;

    const second = join(dir, "second.jsonl");
    await runJson(["export", String(restoredId), "--format", "jsonl", "--out", second, "--db", restoredPath], ExportOutputSchema);
    expect(readFileSync(second)).toEqual(readFileSync(first));

    const source = openDatabase(databasePath);
    const restored = openDatabase(restoredPath);
    try {
      const before = snapshot(source, 1);
      const after = snapshot(restored, restoredId);
      expect(before.summaryEdges.length).toBeGreaterThan(0);
      expect(after).toEqual(before);
      // The stored file's bytes came along, under the restored conversation's folder.
      const [original, copy] = [source, restored].map((db, index) =>
        resolveRecordedPath(db.path, db.get<{ storage_path: string }>("SELECT storage_path FROM large_files WHERE conversation_id = ?", index === 0 ? 1 : restoredId)!.storage_path));
      expect(copy).not.toBe(original);
      expect(readFileSync(copy!)).toEqual(readFileSync(original!));
    } finally {
      source.close();
      restored.close();
    }
  });

  it("makes restored history searchable right away", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "export.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    const restoredPath = join(dir, "restored.db");
    await runJson(["import", "jsonl", file, "--db", restoredPath, "--apply"], ImportJsonlOutputSchema);
    const found = await runLcm(["grep", "markera42", "--db", restoredPath, "--json"]);
    expect(found.code, found.stderr).toBe(EXIT.ok);
    expect((JSON.parse(found.stdout) as { matchCount: number }).matchCount).toBeGreaterThan(0);
  });

  it("exports every conversation of an agent with --agent, and imports them all", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "agent.jsonl");
    const exported = await runJson<{ conversations: { sessionId: string }[] }>(
      ["export", "--agent", "main", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema,
    );
    expect(exported.conversations.map((conversation) => conversation.sessionId)).toEqual(["s1", "s2"]);
    const restoredPath = join(dir, "restored.db");
    const imported = await runJson<{ imported: number }>(["import", "jsonl", file, "--db", restoredPath, "--apply"], ImportJsonlOutputSchema);
    expect(imported.imported).toBe(2);
    expect(counts(restoredPath)).toEqual(counts(databasePath));
  });

  it("skips a conversation that is already stored, says so, and changes nothing", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "export.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    const restoredPath = join(dir, "restored.db");
    await runJson(["import", "jsonl", file, "--db", restoredPath, "--apply"], ImportJsonlOutputSchema);
    const before = counts(restoredPath);
    const again = await runLcm(["import", "jsonl", file, "--db", restoredPath, "--apply"]);
    expect(again.code, again.stderr).toBe(EXIT.ok);
    expect(again.stdout).toMatch(/Imported 0 of 1 conversations .*1 already stored/);
    expect(again.stdout).toMatch(/skipped main\/agent:main:main: already stored as conversation 1/);
    expect(counts(restoredPath)).toEqual(before);
    // Into the database it came from: the same conversation is there.
    const home = await runJson<{ skipped: number }>(["import", "jsonl", file, "--db", databasePath, "--apply"], ImportJsonlOutputSchema);
    expect(home.skipped).toBe(1);
  });

  it("finishes an import that stopped part-way, leaving what was written", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "export.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    const restoredPath = join(dir, "restored.db");
    await runJson(["import", "jsonl", file, "--db", restoredPath, "--apply"], ImportJsonlOutputSchema);
    // As a crash after the messages would leave it: still importing, no context items, the newest 100 messages missing.
    const db = openDatabase(restoredPath);
    db.writeNow(() => {
      db.run("DELETE FROM context_items");
      const lost = "SELECT message_id FROM messages WHERE seq > 302 AND message_id NOT IN (SELECT message_id FROM summary_messages)";
      db.run(`DELETE FROM message_parts WHERE message_id IN (${lost})`);
      db.run(`DELETE FROM messages WHERE message_id IN (${lost})`);
      db.run("UPDATE conversations SET archived_at = created_at, archive_reason = ?", IMPORTING_REASON);
    });
    db.close();
    const resumed = await runJson<{ resumed: number }>(["import", "jsonl", file, "--db", restoredPath, "--apply"], ImportJsonlOutputSchema);
    expect(resumed.resumed).toBe(1);
    const second = join(dir, "second.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", second, "--db", restoredPath], ExportOutputSchema);
    expect(readFileSync(second, "utf8")).toBe(readFileSync(file, "utf8"));
  });

  it("refuses a truncated file, naming where it ends, and writes nothing", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "export.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    const lines = readFileSync(file, "utf8").split("\n");
    writeFileSync(file, lines.slice(0, 300).join("\n") + "\n");
    const restoredPath = join(dir, "restored.db");
    const run = await runLcm(["import", "jsonl", file, "--db", restoredPath, "--apply"]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/line 301: the file ends inside the block of conversation main\/s1 \(truncated\?\)\. Nothing was imported/);
    expect(counts(restoredPath)).toEqual({ conversations: 0, messages: 0 });
  });

  it("refuses a malformed record with its line and field, and writes nothing", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "export.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    const lines = readFileSync(file, "utf8").split("\n");
    const broken = JSON.parse(lines[5]!) as Record<string, unknown>;
    broken.seq = "five";
    lines[5] = JSON.stringify(broken);
    writeFileSync(file, lines.join("\n"));
    const plain = await runLcm(["import", "jsonl", file, "--db", databasePath, "--apply"]);
    expect(plain.code).toBe(EXIT.usage);
    expect(plain.stderr).toMatch(/line 6: the message record is malformed \(\/seq: /);
    expect(counts(databasePath)).toMatchObject({ conversations: 2 });
  });

  it("refuses a file that is not an export, and a missing file, with a clear message", async () => {
    const dir = tempDir();
    const notExport = join(dir, "notes.jsonl");
    writeFileSync(notExport, '{"role":"user","content":"hi"}\n');
    const databasePath = join(dir, "target.db");
    const run = await runLcm(["import", "jsonl", notExport, "--db", databasePath, "--apply"]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/line 1: unknown record type undefined\. Nothing was imported/);
    const missing = await runLcm(["import", "jsonl", join(dir, "nope.jsonl"), "--db", databasePath, "--apply"]);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toMatch(/Cannot read .*nope\.jsonl/);
  });

  it("refuses to import a live conversation over another live conversation of the same session", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "export.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    // Another database where session s1 of agent main is live, with other history (created later: another conversation).
    const otherPath = join(dir, "other.db");
    await buildDatabase({ databasePath: otherPath, sessions: [
      { sessionKey: "agent:main:other", sessionId: "s0", messages: exchanges(3) },
      { sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(3) },
    ] });
    const before = counts(otherPath);
    const run = await runLcm(["import", "jsonl", file, "--db", otherPath, "--apply"]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/conversation 2 is the live conversation of that session here/);
    expect(counts(otherPath)).toEqual(before);
  });
});

describe("lcm import jsonl without --apply (a dry run)", () => {
  interface DryRun {
    dryRun: boolean; imported: number; skipped: number; records: number; databaseCreated: boolean;
    conversations: { sessionId: string; outcome: string; conversationId: number | null; messages: number; summaries: number; largeFiles: number }[];
  }

  it("checks the whole file and reports what would come over, creating no database", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "agent.jsonl");
    const exported = await runJson<{ conversations: { sessionId: string; messages: number; summaries: number; largeFiles: number }[] }>(
      ["export", "--agent", "main", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema,
    );
    const restoredPath = join(dir, "restored.db");
    const plan = await runJson<DryRun>(["import", "jsonl", file, "--db", restoredPath], ImportJsonlOutputSchema);
    expect(plan).toMatchObject({ dryRun: true, imported: 2, skipped: 0, databaseCreated: false });
    expect(plan.records).toBe(readFileSync(file, "utf8").split("\n").filter((line) => line !== "").length);
    // s1: 150 + 1 + 50 exchanges = 402 messages, compacted, one CSV stored aside; s2: 20 exchanges = 40 messages.
    expect(plan.conversations).toMatchObject([
      { sessionId: "s1", outcome: "imported", conversationId: null, messages: 402, largeFiles: 1 },
      { sessionId: "s2", outcome: "imported", conversationId: null, messages: 40, largeFiles: 0 },
    ]);
    expect(plan.conversations.map(({ sessionId, messages, summaries, largeFiles }) => ({ sessionId, messages, summaries, largeFiles })))
      .toEqual(exported.conversations.map(({ sessionId, messages, summaries, largeFiles }) => ({ sessionId, messages, summaries, largeFiles })));
    expect(existsSync(restoredPath)).toBe(false);
    const text = await runLcm(["import", "jsonl", file, "--db", restoredPath]);
    expect(text.code, text.stderr).toBe(EXIT.ok);
    expect(text.stdout).toMatch(/^Dry run: would import 2 of 2 conversations from .* \(would be created\)/);
    expect(text.stdout).toMatch(/would be imported main\/agent:main:main: 402 messages, \d+ summaries, \d+ context items, 1 large files/);
    expect(text.stdout).toMatch(/Nothing was written\. Run again with --apply to import\.\n$/);
    expect(existsSync(restoredPath)).toBe(false);
  });

  it("names the conversations already stored as skipped, and leaves the database byte for byte as it was", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "agent.jsonl");
    await runJson(["export", "--agent", "main", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    const before = databaseBytes(databasePath);
    const plan = await runJson<DryRun>(["import", "jsonl", file, "--db", databasePath], ImportJsonlOutputSchema);
    expect(plan).toMatchObject({ dryRun: true, imported: 0, skipped: 2 });
    expect(plan.conversations.map((block) => [block.outcome, block.conversationId])).toEqual([["skipped", 1], ["skipped", 2]]);
    const text = await runLcm(["import", "jsonl", file, "--db", databasePath]);
    expect(text.stdout).toMatch(/would be skipped main\/agent:main:main: already stored as conversation 1/);
    expect(databaseBytes(databasePath)).toEqual(before);
  });

  it("refuses what --apply would refuse, and creates nothing", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "export.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    writeFileSync(file, readFileSync(file, "utf8").split("\n").slice(0, 300).join("\n") + "\n");
    const restoredPath = join(dir, "restored.db");
    const run = await runLcm(["import", "jsonl", file, "--db", restoredPath]);
    expect([run.code, run.stderr]).toEqual([EXIT.usage, expect.stringMatching(/line 301: the file ends inside the block .* Nothing was imported/)]);
    expect(existsSync(restoredPath)).toBe(false);
  });
});

describe("lcm export --format markdown", () => {
  it("writes the messages in order with each summary marked after the messages it covers", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const file = join(dir, "conversation.md");
    const run = await runLcm(["export", "1", "--format", "markdown", "--out", file, "--db", databasePath]);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const markdown = readFileSync(file, "utf8");
    expect(markdown).toMatch(/^# Conversation 1: agent `main`, session `agent:main:main`\n/);
    expect(markdown).toContain("### #1 · user · ");
    expect(markdown.indexOf("a1 question markera1")).toBeLessThan(markdown.indexOf("a2 question markera2"));
    expect(markdown.indexOf("a150 answer")).toBeLessThan(markdown.indexOf("b1 question"));
    const firstSummary = /> \*\*Summary (sum_[0-9a-f]{16})\*\* \(leaf, depth 0\) of messages #1–#(\d+)/.exec(markdown);
    expect(firstSummary).not.toBeNull();
    // The summary comes right after the last message it covers, before the next one.
    const coveredEnd = Number(firstSummary![2]);
    expect(markdown.indexOf(`### #${coveredEnd} `)).toBeLessThan(firstSummary!.index);
    expect(markdown.indexOf(`### #${coveredEnd + 1} `)).toBeGreaterThan(firstSummary!.index);
    expect(markdown).toMatch(/\(condensed, depth 1\)/);
  });
});

describe("lcm export: usage", () => {
  it("names what is wrong: no target, both targets, an unknown conversation, an existing file", async () => {
    const { dir, databasePath } = await sourceDatabase();
    const out = join(dir, "out.jsonl");
    const neither = await runLcm(["export", "--format", "jsonl", "--out", out, "--db", databasePath]);
    expect([neither.code, neither.stderr]).toEqual([EXIT.usage, expect.stringMatching(/Name one conversation .* or one agent/)]);
    const both = await runLcm(["export", "1", "--agent", "main", "--format", "jsonl", "--out", out, "--db", databasePath]);
    expect(both.code).toBe(EXIT.usage);
    const unknown = await runLcm(["export", "99", "--format", "jsonl", "--out", out, "--db", databasePath]);
    expect([unknown.code, unknown.stderr]).toEqual([EXIT.notFound, expect.stringMatching(/Conversation 99 is not stored/)]);
    expect(existsSync(out)).toBe(false);
    const format = await runLcm(["export", "1", "--format", "csv", "--out", out, "--db", databasePath]);
    expect(format.code).toBe(EXIT.usage);
    writeFileSync(out, "keep me");
    const exists = await runLcm(["export", "1", "--format", "jsonl", "--out", out, "--db", databasePath]);
    expect([exists.code, readFileSync(out, "utf8")]).toEqual([EXIT.usage, "keep me"]);
  });
});
