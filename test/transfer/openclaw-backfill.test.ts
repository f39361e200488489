/**
 * `lcm import openclaw` through the CLI, on a fake OpenClaw state folder laid out as the host keeps it
 * (`agents/<agent>/sessions/sessions.json` and `<sessionId>.jsonl` transcripts): every session is stored with
 * bootstrap's reader, becomes searchable, and a second run continues where the first stopped.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/exit-codes.js";
import { ImportOpenClawOutputSchema } from "../../src/cli/output-schemas.js";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { exchanges, runJson, runLcm } from "../cli/cli-harness.js";
import { hostileTranscript } from "../fixtures/hostile-transcript.js";
import { tempDir } from "../helpers/temp-dir.js";

interface Output {
  dryRun: boolean;
  sessions: number;
  importedMessages: number;
  byStatus: Record<string, number>;
  results: { sessionId: string; sessionKey: string | null; status: string; imported: number; conversationId: number | null }[];
}

const transcriptLines = (messages: AgentMessage[]) => messages.map((message, index) =>
  JSON.stringify({ type: "message", id: `e${index}`, message })).join("\n") + "\n";

/** agents/main: the main session (indexed), a cron session (ignored by default), an older session only on disk; agents/ops: one session. */
function stateFolder() {
  const stateDir = tempDir("openclaw-state-");
  const main = join(stateDir, "agents", "main", "sessions");
  const ops = join(stateDir, "agents", "ops", "sessions");
  mkdirSync(main, { recursive: true });
  mkdirSync(ops, { recursive: true });
  writeFileSync(join(main, "sessions.json"), JSON.stringify({
    "agent:main:main": { sessionId: "s-main", updatedAt: 1 },
    "agent:main:cron:nightly": { sessionId: "s-cron", updatedAt: 1 },
  }));
  writeFileSync(join(main, "s-main.jsonl"), JSON.stringify({ type: "session", version: 3, id: "s-main" }) + "\n" + transcriptLines(exchanges(40, 10, "main")));
  writeFileSync(join(main, "s-cron.jsonl"), transcriptLines(exchanges(2, 5, "cron")));
  writeFileSync(join(main, "s-old.jsonl"), transcriptLines(exchanges(5, 5, "old")));
  writeFileSync(join(ops, "sessions.json"), JSON.stringify({ "agent:ops:main": { sessionId: "s-ops", updatedAt: 1 } }));
  writeFileSync(join(ops, "s-ops.jsonl"), transcriptLines(exchanges(3, 5, "ops")));
  return { stateDir, main, databasePath: join(tempDir(), "lcm.db") };
}

const messageCount = (databasePath: string) => {
  const db = openDatabase(databasePath);
  try {
    return db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n;
  } finally {
    db.close();
  }
};

describe("lcm import openclaw", () => {
  it("stores every session's history (indexed and older ones) and leaves out the ignored ones", async () => {
    const { stateDir, databasePath } = stateFolder();
    const output = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    // main 80 + old 10 + ops 6 = 96 messages; the cron session matches ignoreSessionPatterns.
    expect(output).toMatchObject({ sessions: 4, importedMessages: 96, byStatus: { imported: 3, ignored: 1, failed: 0 } });
    expect(output.results.map((result) => [result.sessionKey ?? result.sessionId, result.status])).toEqual([
      ["agent:main:main", "imported"], ["agent:main:cron:nightly", "ignored"], ["s-old", "imported"], ["agent:ops:main", "imported"],
    ]);
    expect(messageCount(databasePath)).toBe(96);
  });

  it("makes the backfilled history searchable", async () => {
    const { stateDir, databasePath } = stateFolder();
    await runJson(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    const found = await runLcm(["grep", "markermain17", "--db", databasePath, "--json"]);
    expect(found.code, found.stderr).toBe(EXIT.ok);
    expect((JSON.parse(found.stdout) as { matchCount: number }).matchCount).toBe(1);
  });

  it("continues where it stopped: a second run stores only what was appended since, never twice", async () => {
    const { stateDir, main, databasePath } = stateFolder();
    await runJson(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    const unchanged = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(unchanged).toMatchObject({ importedMessages: 0, byStatus: { "up-to-date": 3, imported: 0 } });
    appendFileSync(join(main, "s-main.jsonl"), transcriptLines(exchanges(4, 5, "later")));
    const next = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(next).toMatchObject({ importedMessages: 8, byStatus: { imported: 1, "up-to-date": 2 } });
    expect(messageCount(databasePath)).toBe(104);
  });

  it("backfills one agent with --agent", async () => {
    const { stateDir, databasePath } = stateFolder();
    const output = await runJson<Output>(["import", "openclaw", "--agent", "ops", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(output).toMatchObject({ sessions: 1, importedMessages: 6 });
  });

  it("prints a summary for a person", async () => {
    const { stateDir, databasePath } = stateFolder();
    const run = await runLcm(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"]);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/^Backfilled 4 OpenClaw sessions from .* \(created\): 96 messages stored in 3 sessions, 0 already up to date, 1 ignored/);
  });

  it("without --apply, counts what would be stored and creates no database; --apply then stores exactly that", async () => {
    const { stateDir, databasePath } = stateFolder();
    const plan = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema);
    // main 80 + old 10 + ops 6 = 96 messages, each session a new conversation; the cron session is ignored.
    expect(plan).toMatchObject({ dryRun: true, sessions: 4, importedMessages: 96, byStatus: { imported: 3, ignored: 1, failed: 0 } });
    expect(plan.results.map((result) => [result.sessionKey ?? result.sessionId, result.status, result.imported, result.conversationId])).toEqual([
      ["agent:main:main", "imported", 80, null], ["agent:main:cron:nightly", "ignored", 0, null], ["s-old", "imported", 10, null],
      ["agent:ops:main", "imported", 6, null],
    ]);
    expect(existsSync(databasePath)).toBe(false);
    const applied = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(applied).toMatchObject({ dryRun: false, importedMessages: 96 });
  });

  it("without --apply after an import, counts only what was appended, names stored sessions as skipped, and changes no byte", async () => {
    const { stateDir, main, databasePath } = stateFolder();
    await runJson(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    appendFileSync(join(main, "s-main.jsonl"), transcriptLines(exchanges(4, 5, "later")));
    const before = readFileSync(databasePath);
    const plan = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema);
    expect(plan).toMatchObject({ dryRun: true, importedMessages: 8, byStatus: { imported: 1, "up-to-date": 2 } });
    const text = await runLcm(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath]);
    expect(text.code, text.stderr).toBe(EXIT.ok);
    expect(text.stdout).toMatch(/^Dry run: 4 OpenClaw sessions in .*; 8 messages would be stored in 1 sessions \(0 new conversations\)/);
    expect(text.stdout).toMatch(/would import main\/agent:main:main: 8 messages into conversation 1/);
    expect(text.stdout).toMatch(/skipped ops\/agent:ops:main: already stored as conversation \d+/);
    expect(readFileSync(databasePath)).toEqual(before);
    expect(messageCount(databasePath)).toBe(96);
  });

  it("without --apply, does not count messages already stored even when the transcript is read again from the start", async () => {
    const { stateDir, databasePath } = stateFolder();
    await runJson(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    // No cursor: bootstrap reads every transcript from its first line, and identity keys find each message stored.
    const db = openDatabase(databasePath);
    db.writeNow(() => db.run("UPDATE conversations SET bootstrap_state = NULL"));
    db.close();
    const plan = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema);
    expect(plan).toMatchObject({ dryRun: true, importedMessages: 0, byStatus: { "up-to-date": 3, imported: 0 } });
  });

  it("stores a hostile transcript (line separators, NUL, CR, CRLF, bad UTF-8, a 16 MB line) whole and once, as its dry run counted", async () => {
    const stateDir = tempDir("openclaw-state-");
    const sessions = join(stateDir, "agents", "main", "sessions");
    mkdirSync(sessions, { recursive: true });
    const transcript = hostileTranscript();
    writeFileSync(join(sessions, "s-hostile.jsonl"), transcript.bytes);
    const databasePath = join(tempDir(), "lcm.db");
    const plan = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema);
    const applied = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect([plan.importedMessages, applied.importedMessages]).toEqual([transcript.markers.length, transcript.markers.length]);
    const db = openDatabase(databasePath);
    const contents = db.all<{ content: string }>("SELECT content FROM messages ORDER BY seq").map((row) => row.content.split(" ")[0]);
    db.close();
    expect(contents).toEqual(transcript.markers);
    const again = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(again).toMatchObject({ importedMessages: 0, byStatus: { "up-to-date": 1 } });
  });

  it("names a session index that is not JSON as not read, and still reads the transcripts beside it", async () => {
    const { stateDir, main, databasePath } = stateFolder();
    writeFileSync(join(main, "sessions.json"), "{ not json");
    const output = await runJson<Output & { unread: { subject: string; reason: string }[] }>(
      ["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema,
    );
    expect(output.unread).toEqual([expect.objectContaining({ subject: join(main, "sessions.json"), reason: expect.stringMatching(/not valid JSON .*transcript files beside it are still read/) })]);
    // Without the index the cron session is not known as one: its file is read as a session without a key.
    expect(output.importedMessages).toBe(80 + 4 + 10 + 6);
  });

  it("refuses a folder without OpenClaw sessions, or an unknown agent, and creates no database", async () => {
    const { stateDir, databasePath } = stateFolder();
    const empty = await runLcm(["import", "openclaw", "--state-dir", tempDir(), "--db", databasePath]);
    expect([empty.code, empty.stderr]).toEqual([EXIT.notFound, expect.stringMatching(/No OpenClaw sessions under .* \(no agents folder\)/)]);
    const agent = await runLcm(["import", "openclaw", "--agent", "nobody", "--state-dir", stateDir, "--db", databasePath, "--apply"]);
    expect([agent.code, agent.stderr]).toEqual([EXIT.notFound, expect.stringMatching(/OpenClaw has no agent nobody/)]);
    expect(existsSync(databasePath)).toBe(false);
  });
});
