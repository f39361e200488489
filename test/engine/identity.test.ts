/**
 * Identity never merges distinct messages (issue 13), and replays still change nothing: a later message reusing
 * an idempotency key with other text, and the same text at the same timestamp in a later turn, are stored; a
 * replay of the same turn under a new advancement key, a transcript re-read and a row an older version stored
 * under its old identity are not stored again.
 */
import { describe, expect, it } from "vitest";
import { FakeTranscriptSource } from "../fakes/fake-transcript-source.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };
const anchor = (entryId: string) => ({ entryId, agentId: "main", sessionId: "s1", sessionKey: "agent:main:main", rawSeq: 1 });
const userTexts = (db: ReturnType<typeof createTestEngine>["db"]) =>
  db.all<{ content: string }>("SELECT content FROM messages WHERE role = 'user' ORDER BY seq").map((row) => row.content);

describe("message identity", () => {
  it("stores a later message that reuses an idempotency key with other text, and logs nothing wrong", async () => {
    const { newEngine, db, logger } = createTestEngine();
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [withIdempotencyKey(userMessage("first text"), "run-1:user")] });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [withIdempotencyKey(userMessage("second text"), "run-1:user")] });
    expect(userTexts(db)).toEqual(["first text", "second text"]);
    expect(logger.errors()).toEqual([]);
  });

  it("stores a keyed message once, whichever hook brings it again (docs/mutations.md, M7)", async () => {
    const { newEngine, db, logger } = createTestEngine();
    const keyed = withIdempotencyKey(userMessage("deploy the ledger fix"), "run-3:user");
    const answer = assistantMessage("deployed");
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [keyed, answer] });
    // The same messages again: one at a time, as a batch, and in a later turn's commit.
    expect(await newEngine().ingest({ ...SESSION, message: { ...keyed } })).toEqual({ ingested: false });
    expect(await newEngine().ingestBatch({ ...SESSION, messages: [{ ...keyed }, { ...answer }] })).toEqual({ ingestedCount: 0 });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [{ ...keyed }, { ...answer }, userMessage("next question")] });
    expect(userTexts(db)).toEqual(["deploy the ledger fix", "next question"]);
    expect(db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(3);
    expect(logger.errors()).toEqual([]);
  });

  it("stores the same text at the same timestamp when a later turn brings it", async () => {
    const { newEngine, db } = createTestEngine();
    const yes = { role: "user", content: "yes", timestamp: 1_700_000_000_000 };
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", admission: anchor("entry-1"), messages: [yes, assistantMessage("a1")] });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", admission: anchor("entry-7"), messages: [{ ...yes }, assistantMessage("a2")] });
    expect(userTexts(db)).toEqual(["yes", "yes"]);
  });

  it("stores a turn replayed under a new advancement key once (the same opening entry)", async () => {
    const { newEngine, db, logger } = createTestEngine();
    const messages = [userMessage("question"), assistantMessage("answer")];
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", admission: anchor("entry-1"), messages });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1-retry", admission: anchor("entry-1"), messages });
    expect(db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(2);
    expect(logger.lines.some((line) => /2 of 2 messages of turn t1-retry were stored already/.test(line.message))).toBe(true);
  });

  it("does not store twins again when the host transcript is read back", async () => {
    const yes = { role: "user", content: "yes", timestamp: 1_700_000_000_000 };
    const first = [{ ...yes }, assistantMessage("a1")];
    const second = [{ ...yes }, assistantMessage("a2")];
    const source = new FakeTranscriptSource([...first, ...second]);
    const { newEngine, db } = createTestEngine({ transcriptSource: source });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", admission: anchor("entry-1"), messages: first });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", admission: anchor("entry-3"), messages: second });
    await newEngine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect(db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(4);
  });

  it("recognises a message an older version stored under its key alone", async () => {
    const { newEngine, db } = createTestEngine();
    const message = withIdempotencyKey(userMessage("hello"), "run-9:user");
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [message] });
    // What a version before schema 5 wrote: the identity without the content fingerprint.
    db.run("UPDATE messages SET identity_key = 'key:run-9:user'");
    await newEngine().ingest({ ...SESSION, message });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [message] });
    expect(db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(1);
  });
});
