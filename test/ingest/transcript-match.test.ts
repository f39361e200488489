/** The matcher alone: imported messages are consumed once each, in stored order, never by a newer message. */
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { ImportedHistoryMatcher, transcriptMatchKeyOf } from "../../src/ingest/transcript-match.js";
import type { ImportedMessageToMatch } from "../../src/store/imported-history-store.js";

const SECOND = Date.UTC(2026, 1, 18, 7, 0, 5);

function imported(ref: string, message: AgentMessage, createdAt = SECOND): ImportedMessageToMatch {
  return { ref, identityKey: `fp:${ref}`, matchKey: transcriptMatchKeyOf(message), createdAt };
}

describe("transcriptMatchKeyOf", () => {
  it("is the same for a string content and one text block, and ignores timestamps, keys and thinking", () => {
    expect(transcriptMatchKeyOf({ role: "user", content: "hi", timestamp: 1 })).toBe(
      transcriptMatchKeyOf({ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 2, idempotencyKey: "k" }),
    );
    expect(transcriptMatchKeyOf({ role: "assistant", content: [{ type: "thinking", thinking: "a" }, { type: "text", text: "x" }] })).toBe(
      transcriptMatchKeyOf({ role: "assistant", content: [{ type: "text", text: "x" }] }),
    );
  });

  it("tells roles apart and knows a tool result by its call id alone", () => {
    expect(transcriptMatchKeyOf({ role: "user", content: "hi" })).not.toBe(transcriptMatchKeyOf({ role: "assistant", content: "hi" }));
    expect(transcriptMatchKeyOf({ role: "toolResult", toolCallId: "call_1", content: "[LCM File: file_1]" })).toBe(
      transcriptMatchKeyOf({ role: "toolResult", toolCallId: "call1", content: "the whole output" }),
    );
  });
});

describe("ImportedHistoryMatcher", () => {
  const hello: AgentMessage = { role: "user", content: "hello" };

  it("takes each imported message once: a message seen twice but imported once is new the second time", () => {
    const matcher = new ImportedHistoryMatcher();
    matcher.add([imported("a", hello)]);
    expect(matcher.take({ ...hello, timestamp: SECOND + 300 })?.ref).toBe("a");
    expect(matcher.take({ ...hello, timestamp: SECOND + 600 })).toBeNull();
    expect(matcher.matched).toEqual(["a"]);
  });

  it("takes the earliest of equal imported messages first", () => {
    const matcher = new ImportedHistoryMatcher();
    matcher.add([imported("a", hello, SECOND), imported("b", hello, SECOND + 60_000)]);
    expect(matcher.take({ ...hello, timestamp: SECOND })?.ref).toBe("a");
    expect(matcher.take({ ...hello, timestamp: SECOND + 60_000 })?.ref).toBe("b");
  });

  it("never takes an imported message stored in an earlier second than the transcript message", () => {
    const matcher = new ImportedHistoryMatcher();
    matcher.add([imported("a", hello)]);
    // 07:00:06.000 is a second after the import's 07:00:05: a newer message with the same words.
    expect(matcher.take({ ...hello, timestamp: SECOND + 1_000 })).toBeNull();
    expect(matcher.take({ ...hello, timestamp: SECOND + 999 })?.ref).toBe("a");
  });

  it("takes an imported message by its exact identity, so that words alone no longer match it", () => {
    const matcher = new ImportedHistoryMatcher();
    matcher.add([imported("a", hello)]);
    expect(matcher.takeIdentity(["fp:a"])).toBe(true);
    expect(matcher.take(hello)).toBeNull();
  });
});
