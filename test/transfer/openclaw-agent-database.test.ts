/**
 * `lcm import openclaw` on OpenClaw 2026.9.6's layout: sessions in each agent's database
 * (test/fixtures/openclaw-agent-database.ts). The `lcm` bin reads the file read-only and never changes it; under
 * `openclaw lcm` the host's own reader is used. The dry run names what it found and what it could not read, and
 * counts what --apply then stores; hostile messages arrive whole, compressed events too; a second run stores nothing.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/exit-codes.js";
import { ImportOpenClawOutputSchema } from "../../src/cli/output-schemas.js";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import type { ProbedTranscriptSource, TranscriptPage, TranscriptScope } from "../../src/ingest/transcript-source.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { exchanges, runJson, runLcm } from "../cli/cli-harness.js";
import { hostileTranscript } from "../fixtures/hostile-transcript.js";
import { appendToAgentDatabase, writeAgentDatabase } from "../fixtures/openclaw-agent-database.js";
import { tempDir } from "../helpers/temp-dir.js";

interface Output {
  dryRun: boolean;
  reader: string | null;
  sessions: number;
  importedMessages: number;
  byStatus: Record<string, number>;
  agents: { agentId: string; database: string | null; sessionsDirectory: string | null; sessions: number }[];
  unread: { agentId: string; subject: string; sessionKey: string | null; reason: string }[];
  results: { sessionId: string; sessionKey: string | null; source: string | null; status: string; imported: number; note: string | null }[];
}

const databaseOf = (stateDir: string, agent: string) => join(stateDir, "agents", agent, "agent", "openclaw-agent.sqlite");

/** agents/main: two sessions (one compressed), a cold one, a deleted one; agents/ops: one session; agents/broken: not a database. */
function stateFolder() {
  const stateDir = tempDir("openclaw-state-");
  writeAgentDatabase(databaseOf(stateDir, "main"), [
    { sessionId: "s-main", sessionKey: "agent:main:main", messages: exchanges(30, 10, "main") },
    { sessionId: "s-zip", sessionKey: "agent:main:zipped", messages: exchanges(4, 10, "zip"), compressed: true },
    { sessionId: "s-cold", sessionKey: "agent:main:cold", messages: exchanges(2, 5, "cold"), cold: true },
  ], [{ sessionId: "s-gone", sessionKey: "agent:main:gone", reason: "deleted" }]);
  writeAgentDatabase(databaseOf(stateDir, "ops"), [{ sessionId: "s-ops", sessionKey: "agent:ops:main", messages: exchanges(3, 5, "ops") }]);
  mkdirSync(join(stateDir, "agents", "broken", "agent"), { recursive: true });
  writeFileSync(databaseOf(stateDir, "broken"), "not a database");
  return { stateDir, databasePath: join(tempDir(), "lcm.db") };
}

function stored(databasePath: string) {
  const db = openDatabase(databasePath);
  try {
    return db.all<{ session_id: string; content: string }>(
      "SELECT c.session_id, m.content FROM messages m JOIN conversations c USING (conversation_id) ORDER BY c.session_id, m.seq",
    );
  } finally {
    db.close();
  }
}

/** The agent databases' bytes and the names beside them (nothing may change, nothing may appear). */
function agentFiles(stateDir: string) {
  return ["main", "ops"].map((agent) => {
    const directory = join(stateDir, "agents", agent, "agent");
    return [readdirSync(directory).sort(), readFileSync(databaseOf(stateDir, agent)).toString("base64")];
  });
}

describe("lcm import openclaw on OpenClaw's agent databases", () => {
  it("dry run: names every session found, what it cannot read and why, and counts what --apply then stores", async () => {
    const { stateDir, databasePath } = stateFolder();
    const plan = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema);
    // main 60 + zipped 8 + ops 6 = 74 messages; the cold session cannot be read from the file; the deleted one is archived.
    expect(plan).toMatchObject({ dryRun: true, reader: "agent-database", sessions: 4, importedMessages: 74, byStatus: { imported: 3, unavailable: 1 } });
    expect(plan.agents).toEqual([
      { agentId: "broken", database: databaseOf(stateDir, "broken"), sessionsDirectory: null, sessions: 0 },
      { agentId: "main", database: databaseOf(stateDir, "main"), sessionsDirectory: null, sessions: 3 },
      { agentId: "ops", database: databaseOf(stateDir, "ops"), sessionsDirectory: null, sessions: 1 },
    ]);
    expect(plan.results.find((result) => result.sessionId === "s-cold")).toMatchObject({
      status: "unavailable", note: expect.stringMatching(/cold storage; run `openclaw lcm import openclaw`/),
    });
    expect(plan.unread).toEqual([
      { agentId: "broken", subject: databaseOf(stateDir, "broken"), sessionKey: null, reason: expect.stringMatching(/cannot read .* read-only as an SQLite database \(file is not a database\); its sessions are not read/) },
      { agentId: "main", subject: "s-gone", sessionKey: "agent:main:gone", reason: expect.stringMatching(/OpenClaw deleted this session on .* archived its transcript \(s-gone\.jsonl\.deleted\.zst\)/) },
    ]);
    const text = await runLcm(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath]);
    expect(text.stdout).toMatch(/found main: 3 sessions \(agent database .*openclaw-agent\.sqlite, read-only\)/);
    expect(text.stdout).toMatch(/found broken: 0 sessions \(agent database .*, not read: see below\)/);
    expect(text.stdout).toMatch(/could not read main\/agent:main:cold: host transcript unavailable: OpenClaw moved this transcript to cold storage/);
    expect(text.stdout).toMatch(/not read main\/agent:main:gone: OpenClaw deleted this session/);
    expect(text.stdout).toMatch(/not read broken\/.*openclaw-agent\.sqlite: cannot read/);
    expect(existsSync(databasePath)).toBe(false);

    const applied = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(applied).toMatchObject({ dryRun: false, importedMessages: 74, byStatus: { imported: 3, unavailable: 1 } });
    expect(stored(databasePath).filter((row) => row.session_id === "s-zip").map((row) => row.content.split(" ")[0]))
      .toEqual(["zip1", "zip1", "zip2", "zip2", "zip3", "zip3", "zip4", "zip4"]);
  });

  it("leaves each conversation a cursor in the host's own format, so the host's reader continues from it", async () => {
    const { stateDir, databasePath } = stateFolder();
    await runJson(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    const db = openDatabase(databasePath);
    const state = JSON.parse(db.get<{ state: string }>("SELECT bootstrap_state AS state FROM conversations WHERE session_id = 's-main'")!.state) as { source: string; cursor: string };
    db.close();
    // The host parses its cursor and accepts it only if encoding it again gives the same text: these keys, this order
    // (seen on OpenClaw 2026.9.6: {"agentId":"main","generation":"39fc…","sessionId":"063c…","lastEventSeq":11,"lastMessagePosition":7,"version":1}).
    // Session header, model change, then 60 messages: events 2-61, message positions 0-59.
    expect(state.source).toBe("host");
    expect(Buffer.from(state.cursor, "base64url").toString("utf8"))
      .toBe('{"agentId":"main","generation":"gen-s-main","sessionId":"s-main","lastEventSeq":61,"lastMessagePosition":59,"version":1}');
  });

  it("never changes an agent database nor leaves anything beside it", async () => {
    const { stateDir, databasePath } = stateFolder();
    const before = agentFiles(stateDir);
    await runJson(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema);
    await runJson(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(agentFiles(stateDir)).toEqual(before);
  });

  it("continues from its cursor: a second run stores nothing, then only what the host appended", async () => {
    const { stateDir, databasePath } = stateFolder();
    await runJson(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    const again = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(again).toMatchObject({ importedMessages: 0, byStatus: { "up-to-date": 3, imported: 0 } });
    appendToAgentDatabase(databaseOf(stateDir, "main"), "s-main", exchanges(2, 5, "later"));
    const plan = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema);
    expect(plan).toMatchObject({ importedMessages: 4, byStatus: { imported: 1, "up-to-date": 2 } });
    const next = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect(next).toMatchObject({ importedMessages: 4, byStatus: { imported: 1, "up-to-date": 2 } });
    expect(stored(databasePath).filter((row) => row.session_id === "s-main")).toHaveLength(64);
  });

  it("stores hostile messages (line separators, NUL, CR, a lone surrogate, a 16 MB line) whole and once", async () => {
    const stateDir = tempDir("openclaw-state-");
    const transcript = hostileTranscript();
    // The host keeps what JSON.parse made of the JSONL: here the same messages, one event each, the long one compressed.
    writeAgentDatabase(databaseOf(stateDir, "main"), [{ sessionId: "s-hostile", sessionKey: "agent:main:hostile", messages: transcript.messages, compressed: true }]);
    const databasePath = join(tempDir(), "lcm.db");
    const plan = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath], ImportOpenClawOutputSchema);
    const applied = await runJson<Output>(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath, "--apply"], ImportOpenClawOutputSchema);
    expect([plan.importedMessages, applied.importedMessages]).toEqual([transcript.markers.length, transcript.markers.length]);
    expect(stored(databasePath).map((row) => row.content.split(" ")[0])).toEqual(transcript.markers);
  });

  it("under openclaw lcm, reads the agent databases' sessions through the host's own reader", async () => {
    const { stateDir, databasePath } = stateFolder();
    const host = new RecordingHostReader({ "s-main": exchanges(2, 5, "viahost"), "s-zip": [], "s-cold": exchanges(1, 5, "restored"), "s-ops": [] });
    // The host's own state folder (OPENCLAW_STATE_DIR), as `openclaw lcm` runs against it.
    const applied = await runJson<Output>(
      ["import", "openclaw", "--db", databasePath, "--apply"], ImportOpenClawOutputSchema,
      { env: { OPENCLAW_STATE_DIR: stateDir }, environment: { hostTranscripts: host } },
    );
    // The host's reader answers for every session of the databases (the cold one too: it restores what it archived).
    expect(applied).toMatchObject({ reader: "host", importedMessages: 6, byStatus: { imported: 2, "up-to-date": 2 } });
    expect(host.reads.map((read) => read.sessionId).sort()).toEqual(["s-cold", "s-main", "s-ops", "s-zip"]);
    // Its SDK cannot load, or --state-dir names another folder than the host's: the files are read.
    const unavailable = new RecordingHostReader({}, false);
    const fallback = await runJson<Output>(
      ["import", "openclaw", "--db", join(tempDir(), "other.db")], ImportOpenClawOutputSchema,
      { env: { OPENCLAW_STATE_DIR: stateDir }, environment: { hostTranscripts: unavailable } },
    );
    expect(fallback).toMatchObject({ reader: "agent-database", importedMessages: 74 });
    const elsewhere = await runJson<Output>(
      ["import", "openclaw", "--state-dir", stateDir, "--db", join(tempDir(), "third.db")], ImportOpenClawOutputSchema,
      { env: { OPENCLAW_STATE_DIR: tempDir() }, environment: { hostTranscripts: host } },
    );
    expect(elsewhere).toMatchObject({ reader: "agent-database", importedMessages: 74 });
  });

  it("exits 0 with a report when a session cannot be read, and 3 for a missing state folder", async () => {
    const { stateDir, databasePath } = stateFolder();
    expect((await runLcm(["import", "openclaw", "--state-dir", stateDir, "--db", databasePath])).code).toBe(EXIT.ok);
    expect((await runLcm(["import", "openclaw", "--state-dir", join(stateDir, "nowhere"), "--db", databasePath])).code).toBe(EXIT.notFound);
  });
});

/** The host's reader (plugin-sdk readSessionTranscriptVisibleMessageDelta) as `openclaw lcm` hands it over, over fixed messages. */
class RecordingHostReader implements ProbedTranscriptSource {
  readonly reads: TranscriptScope[] = [];
  constructor(private readonly sessions: Record<string, AgentMessage[]>, private readonly available = true) {}
  async isAvailable(): Promise<boolean> {
    return this.available;
  }
  async readPage(scope: TranscriptScope, cursor: string | undefined, maxMessages: number): Promise<TranscriptPage> {
    this.reads.push(scope);
    const messages = this.sessions[scope.sessionId];
    if (!messages) return { kind: "missing", reason: "no such session" };
    const start = cursor === undefined ? 0 : Number(cursor);
    const page = messages.slice(start, start + maxMessages);
    return { kind: "page", messages: page, cursor: String(start + page.length), hasMore: start + page.length < messages.length };
  }
}
