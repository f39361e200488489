/**
 * Identity never merges distinct messages (issue 13), and replays still change nothing, on every backend the run tests:
 * a later message reusing an idempotency key with other text, and the same text at the same timestamp in a later turn,
 * are stored; a replay of the same turn under a new advancement key and a transcript re-read are not stored again.
 * (A row an older version stored under its old identity: test/engine/identity.test.ts, and the store contract.)
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LcmStore } from "../../src/store/store.js";
import { FakeTranscriptSource } from "../fakes/fake-transcript-source.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };
const anchor = (entryId: string) => ({ entryId, agentId: "main", sessionId: "s1", sessionKey: "agent:main:main", rawSeq: 1 });

async function allMessages(store: LcmStore) {
  const conversation = await store.findConversation({ agentId: "main", sessionId: "s1" });
  return conversation ? store.getMessagesBySeq(conversation.conversationId, 1, Number.MAX_SAFE_INTEGER, 100_000) : [];
}

async function userTexts(store: LcmStore): Promise<string[]> {
  return (await allMessages(store)).filter((message) => message.role === "user").map((message) => message.content);
}

describe.each(backendKinds())("message identity on %s", (kind) => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
  });
  afterEach(async () => {
    await opened.close();
  });

  it("stores a later message that reuses an idempotency key with other text, and logs nothing wrong", async () => {
    const { newEngine, store, logger } = createTestEngine({ backend: opened.backend });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [withIdempotencyKey(userMessage("first text"), "run-1:user")] });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [withIdempotencyKey(userMessage("second text"), "run-1:user")] });
    expect(await userTexts(store)).toEqual(["first text", "second text"]);
    expect(logger.errors()).toEqual([]);
  });

  it("stores a keyed message once, whichever hook brings it again (docs/mutations.md, M7)", async () => {
    const { newEngine, store, logger } = createTestEngine({ backend: opened.backend });
    const keyed = withIdempotencyKey(userMessage("deploy the ledger fix"), "run-3:user");
    const answer = assistantMessage("deployed");
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [keyed, answer] });
    // The same messages again: one at a time, as a batch, and in a later turn's commit.
    expect(await newEngine().ingest({ ...SESSION, message: { ...keyed } })).toEqual({ ingested: false });
    expect(await newEngine().ingestBatch({ ...SESSION, messages: [{ ...keyed }, { ...answer }] })).toEqual({ ingestedCount: 0 });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", messages: [{ ...keyed }, { ...answer }, userMessage("next question")] });
    expect(await userTexts(store)).toEqual(["deploy the ledger fix", "next question"]);
    expect((await allMessages(store)).length).toBe(3);
    expect(logger.errors()).toEqual([]);
  });

  it("stores the same text at the same timestamp when a later turn brings it", async () => {
    const { newEngine, store } = createTestEngine({ backend: opened.backend });
    const yes = { role: "user", content: "yes", timestamp: 1_700_000_000_000 };
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", admission: anchor("entry-1"), messages: [yes, assistantMessage("a1")] });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", admission: anchor("entry-7"), messages: [{ ...yes }, assistantMessage("a2")] });
    expect(await userTexts(store)).toEqual(["yes", "yes"]);
  });

  it("stores a turn replayed under a new advancement key once (the same opening entry)", async () => {
    const { newEngine, store, logger } = createTestEngine({ backend: opened.backend });
    const messages = [userMessage("question"), assistantMessage("answer")];
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", admission: anchor("entry-1"), messages });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1-retry", admission: anchor("entry-1"), messages });
    expect((await allMessages(store)).length).toBe(2);
    expect(logger.lines.some((line) => /2 of 2 messages of turn t1-retry were stored already/.test(line.message))).toBe(true);
  });

  it("does not store twins again when the host transcript is read back", async () => {
    const yes = { role: "user", content: "yes", timestamp: 1_700_000_000_000 };
    const first = [{ ...yes }, assistantMessage("a1")];
    const second = [{ ...yes }, assistantMessage("a2")];
    const source = new FakeTranscriptSource([...first, ...second]);
    const { newEngine, store } = createTestEngine({ transcriptSource: source, backend: opened.backend });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t1", admission: anchor("entry-1"), messages: first });
    await newEngine().commitTurn({ ...SESSION, advancementKey: "t2", admission: anchor("entry-3"), messages: second });
    await newEngine().bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect((await allMessages(store)).length).toBe(4);
  });
});
