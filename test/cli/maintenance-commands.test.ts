/**
 * `lcm doctor`, `compact` and `backup`, and what the CLI never does: modify a file that is not LCM's, or write to the
 * database for a read-only command.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { BackupOutputSchema, CompactOutputSchema, DoctorOutputSchema } from "../../src/cli/output-schemas.js";
import type { BackupOutput } from "../../src/cli/commands/backup-command.js";
import type { CompactOutput } from "../../src/cli/commands/compact-command.js";
import type { DoctorOutput } from "../../src/cli/commands/doctor-command.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { closeSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { Database } from "../../src/sqlite/database.js";
import { backupDatabase } from "../../src/sqlite/database-backup.js";
import { tempDatabasePath, tempDir } from "../helpers/temp-dir.js";
import { buildDatabase, exchanges, runJson, runLcm } from "./cli-harness.js";

function digest(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

describe("lcm doctor", () => {
  it("finds nothing wrong in a database the engine made", async () => {
    const db = tempDatabasePath();
    await buildDatabase({ databasePath: db, compact: true, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(40, 30) }] });
    const data = await runJson<DoctorOutput>(["doctor", "--db", db], DoctorOutputSchema);
    expect(data).toMatchObject({ healthy: true, indexesChecked: true, conversationsChecked: 1, findings: [] });
    expect((await runLcm(["doctor", "--db", db])).stdout).toMatch(/No problems found/);
  });

  it("exits 7 while a problem remains, and --repair applies the safe repair", async () => {
    const db = tempDatabasePath();
    const harness = await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(5, 5) }] });
    harness.db.raw.exec("UPDATE conversations SET message_count = message_count + 3");
    const found = await runJson<DoctorOutput>(["doctor", "--db", db], DoctorOutputSchema, { code: EXIT.problemsFound });
    expect(found.findings.map((finding) => finding.kind)).toContain("counter_mismatch");
    expect(found.repairsAvailable).toEqual([{ kind: "recount_conversation", conversationId: 1 }]);
    const repaired = await runJson<DoctorOutput>(["doctor", "--repair", "--db", db], DoctorOutputSchema);
    expect(repaired).toMatchObject({ healthy: true, remaining: [], applied: [{ kind: "recount_conversation", conversationId: 1 }] });
  });
});

describe("lcm compact", () => {
  it("compacts with the deterministic summarizer when no model is configured, and records it", async () => {
    const db = tempDatabasePath();
    const harness = await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(80, 40) }] });
    const before = (await harness.store.getConversation(1))!.contextTokens;
    const data = await runJson<CompactOutput>(["compact", "1", "--db", db], CompactOutputSchema);
    expect(data).toMatchObject({ conversationId: 1, ok: true, compacted: true, tokensBefore: before, details: { summarizer: "extractive", divertedBySpendGuard: 0 } });
    expect(data.tokensAfter).toBeLessThan(before);
    expect((await harness.store.getConversation(1))!.lastCompaction).toMatchObject({ trigger: "cli", compacted: true });
    const again = await runLcm(["compact", "1", "--db", db]);
    expect(again.code).toBe(EXIT.ok);
  });

  it("exits 3 for a conversation that is not stored", async () => {
    const db = tempDatabasePath();
    await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(2) }] });
    expect((await runLcm(["compact", "7", "--db", db])).code).toBe(EXIT.notFound);
  });
});

describe("lcm backup", () => {
  it("writes a checked, self-contained copy and refuses to overwrite without --force", async () => {
    const db = tempDatabasePath();
    await buildDatabase({ databasePath: db, compact: true, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(30, 20) }] });
    const target = join(tempDir(), "copy.db");
    const data = await runJson<BackupOutput>(["backup", target, "--db", db], BackupOutputSchema);
    expect(data).toMatchObject({ path: target, method: "backup-api", check: "ok" });
    expect(existsSync(`${target}-wal`)).toBe(false);
    const copy = new DatabaseSync(target, { readOnly: true });
    expect(copy.prepare("SELECT count(*) AS n FROM messages").get()).toEqual({ n: 60 });
    copy.close();
    expect((await runLcm(["doctor", "--db", target])).code).toBe(EXIT.ok);
    expect((await runLcm(["backup", target, "--db", db])).code).toBe(EXIT.usage);
    expect((await runLcm(["backup", target, "--force", "--db", db])).code).toBe(EXIT.ok);
  });

  it("copies one committed state while another connection keeps writing (never a torn copy)", async () => {
    const db = tempDatabasePath();
    const harness = await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(400, 60) }] });
    const reader = new Database(db);
    const target = join(tempDir(), "live.db");
    let writing = true;
    const writer = (async () => {
      for (let turn = 0; writing && turn < 200; turn++) {
        await harness.newEngine().ingestBatch({ sessionId: "s1", sessionKey: "agent:main:main", messages: exchanges(1, 60, `live${turn}-`) });
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await backupDatabase(reader.raw, db, target, { pagesPerStep: 1 });
    writing = false;
    await writer;
    reader.close();
    const copy = new DatabaseSync(target, { readOnly: true });
    // One committed state: the counters agree with the rows they count.
    const counted = copy.prepare("SELECT message_count AS n FROM conversations").get() as { n: number };
    expect(copy.prepare("SELECT count(*) AS n FROM messages").get()).toEqual({ n: counted.n });
    expect(copy.prepare("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    copy.close();
  });
});

describe("files that are not LCM's, and read-only commands", () => {
  it("refuses another application's database (exit 5) and leaves it byte for byte as it was", async () => {
    const dir = tempDir();
    const foreign = join(dir, "lcm.db");
    const other = new DatabaseSync(foreign);
    other.exec("CREATE TABLE conversations (id INTEGER); CREATE TABLE messages (id INTEGER); CREATE TABLE summaries (id INTEGER); CREATE TABLE context_items (id INTEGER);");
    other.close();
    const before = digest(foreign);
    for (const args of [["status"], ["conversations"], ["compact", "1"], ["doctor", "--repair"], ["backup", join(dir, "b.db")]]) {
      const run = await runLcm([...args, "--db", foreign]);
      expect(run.code, args.join(" ")).toBe(EXIT.refused);
      expect(run.stderr).toMatch(/lossless-claw database .* not an LCM database; lcm left it untouched/);
    }
    expect(digest(foreign)).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(["lcm.db"]);
  });

  it("refuses a file that is not SQLite (exit 5)", async () => {
    const path = join(tempDir(), "notes.db");
    writeFileSync(path, "just some text, not a database at all");
    expect((await runLcm(["status", "--db", path])).code).toBe(EXIT.refused);
    expect(readFileSync(path, "utf8")).toBe("just some text, not a database at all");
  });

  it("reads without writing: status, conversations, context, dag, describe and expand leave the file unchanged", async () => {
    const db = tempDatabasePath();
    const harness = await buildDatabase({ databasePath: db, compact: true, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(40, 30) }] });
    const summaryId = harness.db.get<{ summary_id: string }>("SELECT summary_id FROM summaries LIMIT 1")!.summary_id;
    closeSharedDatabase(db); // checkpoints and removes the -wal: the file alone holds everything
    const files = () => readdirSync(dirname(db)).sort();
    const before = { digest: digest(db), files: files() };
    for (const args of [["status"], ["status", "1"], ["conversations"], ["context", "1"], ["dag", "1"], ["describe", summaryId], ["expand", summaryId]]) {
      expect((await runLcm([...args, "--db", db])).code, args.join(" ")).toBe(EXIT.ok);
    }
    expect({ digest: digest(db), files: files() }).toEqual(before);
  });

  it("runs read commands on a read-only file and says why a write command cannot", async () => {
    const db = tempDatabasePath();
    await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(5) }] });
    closeSharedDatabase(db);
    const { chmodSync } = await import("node:fs");
    chmodSync(db, 0o444);
    expect((await runLcm(["conversations", "--db", db])).code).toBe(EXIT.ok);
    const compact = await runLcm(["compact", "1", "--db", db]);
    expect(compact.code).toBe(EXIT.unavailable);
    expect(compact.stderr).toMatch(/read-only/);
    const doctor = await runJson<DoctorOutput>(["doctor", "--db", db], DoctorOutputSchema);
    expect(doctor.indexesChecked).toBe(false);
  });
});
