import { describe, expect, it } from "vitest";
import { formatMinute, renderMessageSources } from "../../src/compaction/source-text.js";
import type { MessageRecord } from "../../src/records.js";

function message(seq: number, createdAt: number): MessageRecord {
  return {
    messageId: seq, conversationId: 1, seq, role: "user", content: `message ${seq}`, tokenCount: 3,
    createdAt, identityKey: `k${seq}`, flags: 0, meta: "{}", parts: [],
  };
}

describe("renderMessageSources", () => {
  it("stamps each message with its own minute, across minute boundaries and before 1970", () => {
    const minute = Date.UTC(2026, 10, 1, 8, 0);
    const times = [minute - 1, minute, minute + 59_999, minute + 60_000, minute + 60_000, -90_000, -60_001, minute];
    const headers = renderMessageSources(times.map((time, seq) => message(seq, time)))
      .split("\n")
      .filter((line) => line.startsWith("["));

    expect(headers).toEqual(times.map((time) => `[${formatMinute(time)}] user:`));
    expect(headers.slice(0, 4)).toEqual([
      "[2026-11-01 07:59 UTC] user:", "[2026-11-01 08:00 UTC] user:", "[2026-11-01 08:00 UTC] user:", "[2026-11-01 08:01 UTC] user:",
    ]);
  });
});
