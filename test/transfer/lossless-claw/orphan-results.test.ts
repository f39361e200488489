/**
 * attachOrphanResults (pure): which tool results at the head of the peer's fresh tail go under the summary that took
 * their call, and under which leaf.
 */
import { describe, expect, it } from "vitest";
import { attachOrphanResults } from "../../../src/transfer/lossless-claw/orphan-results.js";
import type { PeerContextItem } from "../../../src/transfer/lossless-claw/peer-reader.js";

const summary = (ordinal: number, summaryId: string): PeerContextItem => ({ ordinal, itemType: "summary", messageId: null, summaryId });
const message = (ordinal: number, messageId: number): PeerContextItem => ({ ordinal, itemType: "message", messageId, summaryId: null });
// Messages 1-8 are summarized (leaves a: 1-4, b: 5-8, condensed c over both); 9 and 10 are tool results, 11 an answer.
const edges = { messages: new Map([["a", [1, 2, 3, 4]], ["b", [5, 6, 7, 8]]]), parents: new Map([["c", ["a", "b"]]]) };
const isToolResult = (id: number) => id === 9 || id === 10 || id === 12;

describe("attachOrphanResults", () => {
  it("puts the results right after a summary under that summary's last leaf, in order, and leaves later ones alone", () => {
    // c, 9 (result), 10 (result), 11 (assistant with calls), 12 (its result).
    const plan = attachOrphanResults([summary(0, "c"), message(1, 9), message(2, 10), message(3, 11), message(4, 12)], isToolResult, new Set(["a", "b", "c"]), edges);
    expect([...plan.attached]).toEqual([9, 10]);
    expect(plan.edges.messages.get("b")).toEqual([5, 6, 7, 8, 9, 10]);
    expect(plan.edges.messages.get("a")).toEqual([1, 2, 3, 4]);
    expect(plan.unattached).toEqual([]);
    // The edges handed in are not changed.
    expect(edges.messages.get("b")).toEqual([5, 6, 7, 8]);
  });

  it("leaves a result that follows no summary of this conversation where it is, and says so", () => {
    expect(attachOrphanResults([message(0, 9)], isToolResult, new Set(["c"]), edges)).toMatchObject({ attached: new Set(), unattached: [9] });
    expect(attachOrphanResults([summary(0, "other"), message(1, 9)], isToolResult, new Set(["c"]), edges)).toMatchObject({ attached: new Set(), unattached: [9] });
  });
});
