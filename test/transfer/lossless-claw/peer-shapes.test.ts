/**
 * Peer data the import maps instead of copying blindly, each shape planted in a copy of a database lossless-claw
 * 1.0.0-beta.4 wrote (or, for a damaged file, one built in its shape): text the peer holds as a BLOB, a message LCM's
 * codec refuses, a stored file that is a named pipe or a device, a context item naming another conversation's
 * summary, and a conversation whose rows cannot be read to the end. Each time the rest comes over, the report names
 * what was not mapped exactly, and a second run changes nothing.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import type { ImportLosslessClawOutput } from "../../../src/cli/commands/import-lossless-claw-command.js";
import { EXIT } from "../../../src/cli/exit-codes.js";
import { DescribeOutputSchema, DoctorOutputSchema, ImportLosslessClawOutputSchema } from "../../../src/cli/output-schemas.js";
import { runJson } from "../../cli/cli-harness.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { PeerWriter } from "./peer-fixtures.js";
import { unpackPeer } from "./real-peer.js";

function importCli(source: string, db: string): Promise<ImportLosslessClawOutput> {
  return runJson<ImportLosslessClawOutput>(["import", "lossless-claw", source, "--db", db, "--apply"], ImportLosslessClawOutputSchema);
}

/** The peer's database with `sql` run on it (foreign keys off, as a hand edit or another writer would leave it). */
function planted(sql: string): string {
  const source = unpackPeer("1.0.0-beta.4");
  const peer = new DatabaseSync(source, { enableForeignKeyConstraints: false });
  peer.exec(sql);
  peer.close();
  return source;
}

function rows<T>(db: string, sql: string, ...params: (string | number)[]): T[] {
  const database = new DatabaseSync(db, { readOnly: true });
  try {
    return database.prepare(sql).all(...params).map((row) => ({ ...row })) as T[];
  } finally {
    database.close();
  }
}

function kinds(report: ImportLosslessClawOutput): Record<string, number> {
  return Object.fromEntries(report.unmapped.map((entry) => [entry.kind, entry.count]));
}

async function expectSecondRunChangesNothing(source: string, db: string): Promise<void> {
  const again = await importCli(source, db);
  expect(Object.values(again.written).every((count) => count === 0)).toBe(true);
  expect(again.conversations.alreadyImported).toBe(again.conversations.total - again.conversations.notImported);
}

describe("text the peer holds as a BLOB", () => {
  it("is read as UTF-8 text, not as a list of byte values, and the report counts it", async () => {
    const source = planted(`
      UPDATE messages SET content = CAST(content AS BLOB) WHERE message_id = 1;
      UPDATE message_parts SET text_content = CAST(text_content AS BLOB), metadata = CAST(metadata AS BLOB) WHERE message_id = 1;
      UPDATE messages SET content = X'62726F6B656EFF7465787420' WHERE message_id = 62;
      UPDATE message_parts SET text_content = X'62726F6B656EFF7465787420' WHERE message_id = 62;
      UPDATE summaries SET content = CAST(content AS BLOB);
    `);
    const db = join(tempDir(), "lcm-context.db");
    const report = await importCli(source, db);
    expect(report.conversations).toMatchObject({ imported: 3, notImported: 0 });
    const [first] = rows<{ content: string }>(db, "SELECT m.content FROM messages m JOIN import_map i ON i.target_id = m.message_id WHERE i.entity = 'message' AND i.source_key = '1/1'");
    expect(first!.content).toBe("alpha turn 1: please check marker1 in the deploy script");
    // Bytes that are not UTF-8 keep their readable part, with U+FFFD where a byte was not.
    const [broken] = rows<{ content: string }>(db, "SELECT m.content FROM messages m JOIN import_map i ON i.target_id = m.message_id WHERE i.entity = 'message' AND i.source_key = '3/62'");
    expect(broken!.content).toBe("broken\uFFFDtext ");
    expect(rows(db, "SELECT count(*) AS n FROM summaries WHERE content LIKE 'Summary %'")).toEqual([{ n: report.sourceCounts.summaries }]);
    expect(rows(db, "SELECT count(*) AS n FROM messages WHERE content GLOB '[0-9]*,[0-9]*,[0-9]*'")).toEqual([{ n: 0 }]);
    const blob = report.unmapped.find((entry) => entry.kind.startsWith("text: stored by the peer as a BLOB"));
    // Rows: message 1 and its part, message 62 and its part (both not UTF-8), every summary.
    expect(blob?.kind).toContain("(2 not valid UTF-8");
    expect(blob?.count).toBe(4 + report.sourceCounts.summaries);
    expect((await runJson<{ healthy: boolean }>(["doctor", "--db", db], DoctorOutputSchema)).healthy).toBe(true);
  });
});

describe("a message LCM's codec refuses", () => {
  it("is left out and named; every other message comes over, and a second run neither fails nor adds anything", async () => {
    // Message 65 (conversation 3's last, in its fresh tail) becomes a message with an empty role.
    const source = planted(`UPDATE message_parts SET metadata = '{"source":"unknown-message-shape","raw":{"role":"","content":"x"}}' WHERE message_id = 65;`);
    const db = join(tempDir(), "lcm-context.db");
    const report = await importCli(source, db);
    expect(report.conversations).toMatchObject({ imported: 3, notImported: 0 });
    expect(report.written.messages).toBe(report.sourceCounts.messages - 1);
    const refused = report.unmapped.find((entry) => entry.kind.startsWith("message: refused by LCM's codec"));
    expect(refused?.count).toBe(1);
    expect(refused?.examples[0]).toMatch(/^3\/65: .*non-empty string `role`/);
    expect(kinds(report)["context item: message not stored in this conversation (another's, or refused)"]).toBe(1);
    expect(rows(db, "SELECT state FROM import_map WHERE entity = 'message' AND source_key = '3/65'")).toEqual([{ state: expect.stringMatching(/^refused: /) }]);
    expect((await runJson<{ healthy: boolean }>(["doctor", "--db", db], DoctorOutputSchema)).healthy).toBe(true);
    await expectSecondRunChangesNothing(source, db);
  });
});

describe("a stored file that is not a regular file", () => {
  it("is never read (a named pipe would block, a device never end): its record is kept, its content reported missing", async () => {
    const source = unpackPeer("1.0.0-beta.4");
    const folder = join(dirname(source), "lcm-files", "2");
    const [image, output] = [readdirSync(folder).find((name) => name.endsWith(".png"))!, readdirSync(folder).find((name) => name.endsWith(".txt"))!];
    // The image's copy beside the database becomes a named pipe; the output's row names /dev/zero and its copy is gone.
    rmSync(join(folder, image));
    execFileSync("mkfifo", [join(folder, image)]);
    rmSync(join(folder, output));
    const outputId = output.replace(".txt", "");
    const peer = new DatabaseSync(source);
    peer.prepare("UPDATE large_files SET storage_uri = '/dev/zero' WHERE file_id = ?").run(outputId);
    peer.close();
    const db = join(tempDir(), "lcm-context.db");
    const report = await importCli(source, db);
    expect(report.conversations).toMatchObject({ imported: 3, notImported: 0 });
    const notRegular = report.unmapped.find((entry) => entry.kind === "file: stored file not a regular file, not read (record kept, content missing)");
    expect(notRegular?.count).toBe(2);
    expect(notRegular?.examples.sort()).toEqual([image.replace(".png", ""), outputId].sort());
    expect(rows(db, "SELECT state FROM import_map WHERE entity = 'file' AND source_key = ?", outputId))
      .toEqual([{ state: "stored file not a regular file, not read (record kept, content missing): /dev/zero is a device" }]);
    const described = await runJson<{ contentNote: string }>(["describe", outputId, "--db", db], DescribeOutputSchema);
    expect(described.contentNote).toMatch(/missing from disk/);
    const doctor = await runJson<{ findings: { kind: string; subject: string }[] }>(["doctor", "--db", db], DoctorOutputSchema, { code: EXIT.problemsFound });
    expect(doctor.findings.map((finding) => finding.kind)).toEqual(["large_file_missing", "large_file_missing"]);
  });
});

describe("a context item naming another conversation's summary", () => {
  it("is left out of that conversation's context and reported; the summary stays with its own conversation", async () => {
    const source = planted(`INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id)
      SELECT 3, -1, 'summary', summary_id FROM context_items WHERE conversation_id = 1 AND item_type = 'summary' ORDER BY ordinal LIMIT 1;`);
    const db = join(tempDir(), "lcm-context.db");
    const report = await importCli(source, db);
    expect(kinds(report)["context item: summary of another conversation (it stays with its own conversation)"]).toBe(1);
    expect(rows(db, `SELECT count(*) AS n FROM context_items c JOIN summaries s ON s.id = c.summary_id WHERE c.conversation_id <> s.conversation_id`)).toEqual([{ n: 0 }]);
    const doctor = await runJson<{ healthy: boolean; findings: unknown[] }>(["doctor", "--db", db], DoctorOutputSchema);
    expect(doctor.findings).toEqual([]);
  });
});

describe("a conversation whose rows cannot be read to the end", () => {
  it("is not started (nothing of it written) and named; the conversations before and after it come over", async () => {
    const source = join(tempDir("peer-damaged-"), "lcm.db");
    const peer = new PeerWriter(source, "1.x");
    peer.batch(() => {
      for (const [index, count] of [[1, 10], [2, 600], [3, 10]] as const) {
        const conversation = peer.conversation(`session-${index}`, { sessionKey: `agent:main:chat-${index}` });
        for (let turn = 0; turn < count; turn++) {
          peer.message(conversation, { role: "user", content: `DAMAGED-ZONE-${index}-${String(turn).padStart(4, "0")} ${"x".repeat(400)}`, timestamp: 0 });
        }
      }
    });
    peer.close();
    // A page of conversation 2's rows, in the middle of them, is overwritten (a damaged disk or a torn copy).
    const bytes = readFileSync(source);
    const pageSize = bytes.readUInt16BE(16);
    const page = Math.floor(bytes.indexOf("DAMAGED-ZONE-2-0300") / pageSize);
    bytes.fill(0xff, page * pageSize, page * pageSize + 16);
    writeFileSync(source, bytes);
    const db = join(tempDir(), "lcm-context.db");
    const report = await importCli(source, db);
    expect(report.conversations).toMatchObject({ total: 3, imported: 2, notImported: 1 });
    const damaged = report.unmapped.find((entry) => entry.kind === "conversation: its rows could not be read to the end (nothing of it written)");
    expect(damaged?.examples[0]).toMatch(/^2: .*malformed/);
    expect(rows(db, "SELECT session_id, archived_at IS NULL AS live, message_count FROM conversations ORDER BY conversation_id"))
      .toEqual([{ session_id: "session-1", live: 1, message_count: 10 }, { session_id: "session-3", live: 1, message_count: 10 }]);
    expect(rows(db, "SELECT count(*) AS n FROM import_map WHERE source_key LIKE '2/%' OR (entity = 'conversation' AND source_key = '2')")).toEqual([{ n: 0 }]);
  });
});

describe("a source that changed since it was imported", () => {
  it("reports the messages the peer stored in an imported conversation afterwards, and appends none", async () => {
    const source = unpackPeer("1.0.0-beta.4");
    const db = join(tempDir(), "lcm-context.db");
    const first = await importCli(source, db);
    const peer = new DatabaseSync(source);
    peer.exec(`INSERT INTO messages (conversation_id, seq, role, content, token_count) VALUES (3, 1000, 'user', 'a later question', 4)`);
    peer.close();
    const again = await importCli(source, db);
    expect(again.conversations).toMatchObject({ alreadyImported: 3, imported: 0 });
    expect(again.written.messages).toBe(0);
    expect(again.unmapped).toEqual([{ kind: "conversation: messages the peer stored after it was imported (not imported: LCM's conversation went on)", count: 1, examples: ["3: 1"] }]);
    expect(rows(db, "SELECT count(*) AS n FROM messages")).toEqual([{ n: first.written.messages }]);
  });

  it("never mixes a conversation into another one imported under the same peer id", async () => {
    const build = (secondSession: string) => {
      const path = join(tempDir("peer-reused-"), "lcm.db");
      const peer = new PeerWriter(path, "1.x");
      for (const sessionId of ["session-kept", secondSession]) {
        const conversation = peer.conversation(sessionId, { sessionKey: `agent:main:${sessionId}` });
        peer.message(conversation, { role: "user", content: `hello from ${sessionId}`, timestamp: 0 });
      }
      peer.close();
      return path;
    };
    const db = join(tempDir(), "lcm-context.db");
    await importCli(build("session-first"), db);
    // Rebuilt from scratch: the same first conversation (so the same source), another one under id 2.
    const report = await importCli(build("session-other"), db);
    expect(report.conversations).toMatchObject({ total: 2, alreadyImported: 1, notImported: 1, imported: 0 });
    expect(report.unmapped.map((entry) => entry.kind)).toEqual(["conversation: its id is another conversation's already imported from this source (not imported)"]);
    expect(rows(db, "SELECT session_id FROM conversations ORDER BY conversation_id")).toEqual([{ session_id: "session-kept" }, { session_id: "session-first" }]);
  });
});
