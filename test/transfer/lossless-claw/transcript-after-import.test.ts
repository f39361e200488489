/**
 * The first turn after `lcm import lossless-claw --apply`: OpenClaw's transcript holds the same messages the peer
 * stored (with millisecond timestamps and idempotency keys the peer never kept) plus what came after. Bootstrap must
 * recognise the imported ones, append only the rest after them, and leave the imported summaries at the head of the
 * context.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ImportLosslessClawOutputSchema } from "../../../src/cli/output-schemas.js";
import type { AgentMessage } from "../../../src/host/openclaw-types.js";
import { runJson } from "../../cli/cli-harness.js";
import { createTestEngine } from "../../helpers/engine.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { FakeTranscriptSource } from "../../fakes/fake-transcript-source.js";
import { buildPeerScenario, CONDENSED_ID, type PeerScenario, SESSION_ID } from "./peer-scenario.js";

const AFTER_IMPORT = Date.UTC(2026, 1, 18, 9, 0, 0);

/** The peer's messages as OpenClaw's transcript holds them: millisecond timestamps, user messages keyed. */
function transcriptOf(scenario: PeerScenario): AgentMessage[] {
  return scenario.hostMessages.map((message, index) => ({
    ...message,
    timestamp: (message.timestamp as number) + 237,
    ...(message.role === "user" ? { idempotencyKey: `idem-${index}` } : {}),
  }));
}

/** Turns OpenClaw ran after the peer's last ingest; the first repeats an imported message's text word for word. */
const NEWER: AgentMessage[] = [
  { role: "user", content: "turn 1: what about marker1?", timestamp: AFTER_IMPORT, idempotencyKey: "idem-newer-1" },
  { role: "assistant", content: [{ type: "text", text: "asked again: marker1 is still detail1" }], timestamp: AFTER_IMPORT + 1_500 },
];

type Source = "host store" | "JSONL file";

/** Imports a peer database and gives bootstrap `transcriptFor(scenario)` as the session's transcript. */
async function importedSession(source: Source, transcriptFor: (scenario: PeerScenario) => AgentMessage[], extraMessages = 0) {
  const scenario = buildPeerScenario("1.x", { extraMessages });
  const transcript = transcriptFor(scenario);
  const db = join(tempDir("lcm-import-"), "lcm-context.db");
  await runJson(["import", "lossless-claw", scenario.path, "--db", db, "--apply"], ImportLosslessClawOutputSchema);
  let sessionFile = scenario.sessionKey!;
  let transcriptSource: FakeTranscriptSource | undefined;
  if (source === "host store") {
    transcriptSource = new FakeTranscriptSource(transcript);
  } else {
    sessionFile = join(tempDir("transcript-"), "session.jsonl");
    writeFileSync(sessionFile, transcript.map((message, index) => JSON.stringify({ type: "message", id: `e${index}`, message })).join("\n") + "\n");
  }
  const env = createTestEngine({ databasePath: db, ...(transcriptSource ? { transcriptSource } : {}) });
  const session = { sessionId: SESSION_ID, sessionKey: scenario.sessionKey!, sessionFile };
  const stored = () => env.db.all<{ role: string; content: string }>(
    `SELECT m.role, m.content FROM messages m JOIN conversations c USING (conversation_id)
     WHERE c.session_id = ? AND c.archived_at IS NULL ORDER BY m.seq`, SESSION_ID,
  ).map((row) => `${row.role}: ${row.content}`);
  return { scenario, env, session, stored, transcript, transcriptSource };
}

function visible(message: AgentMessage): string {
  const content = message.content;
  const text = typeof content === "string" ? content
    : Array.isArray(content) ? content.filter((block) => block.type === "text").map((block) => block.text as string).join("\n") : "";
  return `${message.role}: ${text}`;
}

describe.each(["host store", "JSONL file"] as const)("the first turn after an import, transcript from the %s", (source) => {
  it("stores each message once, appends the newer transcript messages after the imported ones, and keeps the summaries first", async () => {
    const { scenario, env, session, stored } = await importedSession(source, (peer) => [...transcriptOf(peer), ...NEWER]);
    const imported = stored();
    expect(imported).toHaveLength(scenario.messages);

    const engine = env.newEngine();
    const bootstrap = await engine.bootstrap(session);
    // 16 imported messages found in the transcript; the 2 newer ones appended.
    expect(bootstrap).toMatchObject({ bootstrapped: true, importedMessages: 2 });
    const assembled = await engine.assemble({ ...session, messages: [], tokenBudget: 50_000 });
    expect(JSON.stringify(assembled.messages[0]!.content)).toContain(`id=\\"${CONDENSED_ID}\\"`);
    expect(JSON.stringify(assembled.messages.at(-1)!.content)).toContain("asked again: marker1 is still detail1");
    const turn: AgentMessage[] = [
      { role: "user", content: "a new question after the import", timestamp: AFTER_IMPORT + 60_000, idempotencyKey: "idem-turn" },
      { role: "assistant", content: [{ type: "text", text: "a new answer" }], timestamp: AFTER_IMPORT + 61_000 },
    ];
    await engine.commitTurn({ ...session, advancementKey: "first-turn-after-import", messages: turn });

    expect(stored()).toEqual([...imported, ...NEWER.map(visible), ...turn.map(visible)]);
    // The next turn's bootstrap reads the transcript from where the first stopped: nothing again.
    expect(await env.newEngine().bootstrap(session)).toMatchObject({ importedMessages: 0 });
    expect(stored()).toHaveLength(scenario.messages + 4);
  });

  it("keeps a transcript message the peer never stored, appended after the imported ones", async () => {
    const missed: AgentMessage = { role: "user", content: "a message lossless-claw never saw", idempotencyKey: "idem-missed" };
    const { scenario, env, session, stored } = await importedSession(source, (peer) => {
      const transcript = transcriptOf(peer);
      transcript.splice(4, 0, { ...missed, timestamp: (transcript[3]!.timestamp as number) + 10 });
      return transcript;
    });
    expect(await env.newEngine().bootstrap(session)).toMatchObject({ importedMessages: 1 });
    expect(stored()).toHaveLength(scenario.messages + 1);
    expect(stored().at(-1)).toBe(visible(missed));
  });

  it("keeps a message twice when the transcript holds it twice and the import once", async () => {
    const { scenario, env, session, stored, transcript } = await importedSession(source, (peer) => {
      const messages = transcriptOf(peer);
      // The same words again within the second (the user sent them twice); the peer stored them once.
      messages.splice(1, 0, { ...messages[0]!, timestamp: (messages[0]!.timestamp as number) + 400, idempotencyKey: "idem-again" });
      return messages;
    });
    expect(await env.newEngine().bootstrap(session)).toMatchObject({ importedMessages: 1 });
    expect(stored().filter((line) => line === visible(transcript[0]!))).toHaveLength(2);
    expect(stored()).toHaveLength(scenario.messages + 1);
  });
});

describe("a transcript read over several bootstraps", () => {
  // 616 imported messages: pages of 250 from the host reader.
  const EXTRA = 600;

  it("keeps its matches when a reading stops half-way and the next bootstrap continues it", async () => {
    const { scenario, env, session, stored, transcriptSource } = await importedSession("host store", (peer) => [...transcriptOf(peer), ...NEWER], EXTRA);
    const source = transcriptSource!;
    const engine = () => env.newEngine();
    const read = source.readPage.bind(source);
    let pages = 0;
    source.readPage = async (...args) => (++pages === 2 ? { kind: "unavailable", reason: "host busy" } : read(...args));
    expect(await engine().bootstrap(session)).toMatchObject({ importedMessages: 0, reason: expect.stringMatching(/host busy/) });
    expect(await engine().bootstrap(session)).toMatchObject({ importedMessages: 2 });
    expect(stored()).toHaveLength(scenario.messages + 2);
  });

  it("matches again from the start when the host resets its cursor mid-reading", async () => {
    const { scenario, env, session, stored, transcriptSource } = await importedSession("host store", (peer) => [...transcriptOf(peer), ...NEWER], EXTRA);
    const source = transcriptSource!;
    const read = source.readPage.bind(source);
    let pages = 0;
    source.readPage = async (...args) => {
      if (++pages === 3) source.resetNext = true; // the third read answers "reset" to cursor 0
      return read(...args);
    };
    expect(await env.newEngine().bootstrap(session)).toMatchObject({ importedMessages: 2 });
    expect(stored()).toHaveLength(scenario.messages + 2);
  });
});
