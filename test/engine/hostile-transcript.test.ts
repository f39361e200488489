/**
 * Bootstrap's JSONL reader on a hostile transcript (test/fixtures/hostile-transcript.ts): no message is dropped or
 * split, and the byte cursor lands exactly on the file's end, so what is appended later is read once and whole.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BootstrapState } from "../../src/records.js";
import { hostileTranscript } from "../fixtures/hostile-transcript.js";
import { createTestEngine } from "../helpers/engine.js";
import { userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("bootstrap from a hostile JSONL transcript", () => {
  it("stores every message once and in order, and its cursor does not drift", async () => {
    const transcript = hostileTranscript();
    const file = join(tempDir(), "hostile.jsonl");
    writeFileSync(file, transcript.bytes);
    const { newEngine, db } = createTestEngine();
    // The long line is past bootstrap's 16 MB per call: it takes more than one call, as turns would.
    for (let call = 0; call < 3; call++) await newEngine().bootstrap({ sessionId: "s1", sessionFile: file });
    const stored = db.all<{ content: string }>("SELECT content FROM messages ORDER BY seq");
    expect(stored.map((row) => row.content.split(" ")[0])).toEqual(transcript.markers);
    expect(stored[0]!.content).toContain("before\u2028after");
    expect(stored[1]!.content).toContain("before\u2029after");
    expect(stored[2]!.content).toContain("a nul \u0000 inside");
    expect(stored[4]!.content).toContain("carriage\r\nreturns\rinside");
    // The long message arrived whole: the engine stored it aside as a file of exactly its size.
    const longBytes = Buffer.byteLength(transcript.messages[8]!.content as string);
    expect(stored[8]!.content).toContain(`| ${longBytes.toLocaleString("en-US")} bytes]`);
    const state = JSON.parse(db.get<{ bootstrap_state: string }>("SELECT bootstrap_state FROM conversations")!.bootstrap_state) as BootstrapState;
    expect(state).toMatchObject({ source: "file", offset: transcript.bytes.length, size: transcript.bytes.length });

    appendFileSync(file, `${JSON.stringify({ type: "message", id: "later", message: userMessage("markerlater appended\u2028later") })}\n`);
    expect(await newEngine().bootstrap({ sessionId: "s1", sessionFile: file })).toEqual({ bootstrapped: true, importedMessages: 1 });
    expect(db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(transcript.markers.length + 1);
  });
});
