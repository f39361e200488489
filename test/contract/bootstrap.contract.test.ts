/**
 * Bootstrap (the host's transcript store, or an older host's JSONL file) on every backend the run tests: an existing
 * session is imported once, later reads take only what is new, nothing is stored twice whichever path brought it.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LcmStore } from "../../src/store/store.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine, type TestEngineOptions } from "../helpers/engine.js";
import { conversation, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";
import { FakeTranscriptSource } from "../fakes/fake-transcript-source.js";

/** Messages stored for session s1 (every one, in or out of context). */
async function messageCount(store: LcmStore): Promise<number> {
  const conversation = await store.findConversation({ agentId: "main", sessionId: "s1" });
  return conversation ? (await store.getMessagesBySeq(conversation.conversationId, 1, Number.MAX_SAFE_INTEGER, 1_000_000)).length : 0;
}

describe.each(backendKinds())("bootstrap on %s", (kind) => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
  });
  afterEach(async () => {
    await opened.close();
  });
  /** An engine on this run's backend. */
  const engineOn = (options: TestEngineOptions = {}) => createTestEngine({ ...options, backend: opened.backend });

  describe("bootstrap from the host transcript store", () => {
    it("imports an existing session so installing on a live agent loses nothing", async () => {
      const source = new FakeTranscriptSource(conversation(300));
      const { newEngine, store } = engineOn({ transcriptSource: source });
      const result = await newEngine().bootstrap({ sessionId: "s1", sessionKey: "agent:main:main", sessionFile: "agent:main:main" });
      expect(result).toEqual({ bootstrapped: true, importedMessages: 600 });
      expect(await messageCount(store)).toBe(600);
      expect(source.reads[0]).toMatchObject({ scope: { agentId: "main", sessionId: "s1", sessionKey: "agent:main:main" }, cursor: undefined });
    });

    it("reads only what was appended since the last bootstrap and never duplicates", async () => {
      const source = new FakeTranscriptSource(conversation(5));
      const { newEngine, store } = engineOn({ transcriptSource: source });
      await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      // The host committed the next turn through commitTurn, and it is also in its transcript.
      const next = [userMessage("sixth"), userMessage("seventh")];
      await newEngine().commitTurn({ sessionId: "s1", advancementKey: "t6", messages: next });
      source.messages.push(...next);
      const readsBefore = source.reads.length;
      expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" })).toEqual({
        bootstrapped: true, importedMessages: 0,
      });
      expect(source.reads[readsBefore]?.cursor).toBe("10");
      expect(await messageCount(store)).toBe(12);
    });

    it("imports a message larger than the host reader's default page (1 MB), asking for the bytes it needs", async () => {
      // A paste of twice a 128k window: OpenClaw keeps it in the transcript when its turn fails.
      const paste = userMessage(`${"word ".repeat(260_000)}END-OF-PASTE`);
      const source = new FakeTranscriptSource([...conversation(2), paste, ...conversation(1, "after")]);
      const { newEngine, store } = engineOn({ transcriptSource: source });
      const result = await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      expect(result).toEqual({ bootstrapped: true, importedMessages: 7 });
      expect(await messageCount(store)).toBe(7);
      expect(source.reads.length).toBeLessThan(10);
    });

    it("stops, and says so, when the host reader returns no message at the cursor and claims more", async () => {
      const source = new FakeTranscriptSource(conversation(2));
      source.stuck = true;
      const { newEngine } = engineOn({ transcriptSource: source });
      const result = await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      expect(result).toMatchObject({ bootstrapped: true, importedMessages: 0, reason: expect.stringMatching(/returned no message at the cursor/) });
      expect(source.reads.length).toBeLessThanOrEqual(2);
    });

    it("recovers a turn whose commit never reached the store", async () => {
      const source = new FakeTranscriptSource(conversation(2));
      const { newEngine, store } = engineOn({ transcriptSource: source });
      await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      source.messages.push(userMessage("lost commit"));
      await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      expect(await messageCount(store)).toBe(5);
    });

    it("starts over without duplicates when the host resets the cursor", async () => {
      const source = new FakeTranscriptSource(conversation(3));
      const { newEngine, store } = engineOn({ transcriptSource: source });
      await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      source.resetNext = true;
      expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" })).toEqual({
        bootstrapped: true, importedMessages: 0,
      });
      expect(await messageCount(store)).toBe(6);
    });

    it("reports a failing reader truthfully without throwing", async () => {
      const source = new FakeTranscriptSource();
      source.readPage = async () => {
        throw new Error("Transcript read cursor has crossed the current-turn admission fence");
      };
      const { newEngine, logger } = engineOn({ transcriptSource: source });
      const result = await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      expect(result).toEqual({ bootstrapped: false, reason: expect.stringContaining("admission fence") });
      expect(logger.errors()).toHaveLength(1);
    });

    it("imports at most a bounded number of messages per call and continues on the next", async () => {
      const source = new FakeTranscriptSource(conversation(3_000));
      const { newEngine, store } = engineOn({ transcriptSource: source });
      const first = await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      expect(first.importedMessages).toBe(5_000);
      expect(first.reason).toMatch(/rest follows/);
      await newEngine().bootstrap({ sessionId: "s1", sessionFile: "agent:main:main" });
      expect(await messageCount(store)).toBe(6_000);
    });
  });

  describe("bootstrap from a JSONL transcript file (older hosts)", () => {
    function jsonl(messages: unknown[]): string {
      return messages.map((message, index) => JSON.stringify({ type: "message", id: `e${index}`, message })).join("\n") + "\n";
    }

    it("imports message entries, skips other entries and bad lines, and resumes from its offset", async () => {
      const file = join(tempDir(), "session.jsonl");
      const history = conversation(3);
      writeFileSync(file, JSON.stringify({ type: "session", id: "s1" }) + "\n" + jsonl(history) + "not json\n");
      const { newEngine, store, logger } = engineOn();
      // The line that is not JSON is named (its byte offset) in the result and the log, and skipped.
      expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: file })).toEqual({
        bootstrapped: true, importedMessages: 6, reason: expect.stringMatching(/^skipped 1 line that is not JSON \(at byte \d+\)$/),
      });
      expect(logger.lines.some((line) => /not valid JSON/.test(line.message))).toBe(true);
      appendFileSync(file, jsonl([userMessage("appended later")]));
      expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: file })).toEqual({ bootstrapped: true, importedMessages: 1 });
      expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: file })).toEqual({ bootstrapped: true, importedMessages: 0 });
      expect(await messageCount(store)).toBe(7);
    });

    it("does not duplicate what ingest stored before", async () => {
      const file = join(tempDir(), "session.jsonl");
      const history = conversation(2);
      writeFileSync(file, jsonl(history));
      const { newEngine, store } = engineOn();
      await newEngine().ingestBatch({ sessionId: "s1", messages: history });
      expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: file })).toEqual({ bootstrapped: true, importedMessages: 0 });
      expect(await messageCount(store)).toBe(4);
    });

    it("leaves a half-written last line for the next call", async () => {
      const file = join(tempDir(), "session.jsonl");
      writeFileSync(file, jsonl([userMessage("complete")]) + '{"type":"message","message":{"role":"user"');
      const { newEngine, store } = engineOn();
      expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: file })).toEqual({
        bootstrapped: true, importedMessages: 1, reason: expect.stringMatching(/the rest follows on later turns/),
      });
      appendFileSync(file, ',"content":"finished","timestamp":1}}\n');
      expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: file })).toEqual({ bootstrapped: true, importedMessages: 1 });
      expect(await messageCount(store)).toBe(2);
    });
  });
});
