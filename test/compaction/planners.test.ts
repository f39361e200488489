import { describe, expect, it } from "vitest";
import { planCondensedPass } from "../../src/compaction/condensed-planner.js";
import { planLeafPass, rawTokensOutsideFreshTail } from "../../src/compaction/leaf-planner.js";
import { ItemFlags } from "../../src/messages/message-codec.js";
import type { CompactionItem } from "../../src/store/compaction-store.js";

/**
 * Context described as a string, oldest first: m = message, c = assistant with tool calls, r = tool result,
 * 0-9 = summary of that depth. Every item costs `tokens` (default 10).
 */
function context(shape: string, tokens = 10): CompactionItem[] {
  return [...shape].map((char, index) => {
    const isSummary = /\d/.test(char);
    return {
      ordinal: index + 1,
      messageId: isSummary ? null : 100 + index,
      summaryRowId: isSummary ? 500 + index : null,
      tokenCount: tokens,
      flags: char === "c" ? ItemFlags.toolCalls : char === "r" ? ItemFlags.toolResult : 0,
      depth: isSummary ? Number(char) : null,
    };
  });
}

const ordinals = (items: CompactionItem[] | undefined) => items?.map((item) => item.ordinal);
const leafOptions = { freshTailCount: 2, minFanout: 3, chunkTokens: 50, minimumSourceTokens: 1 };

describe("planLeafPass", () => {
  it("takes the oldest raw run outside the fresh tail, up to chunkTokens", () => {
    // 8 messages x 10 tokens; the last 2 are fresh; a chunk holds at most 50 tokens = 5 messages.
    const plan = planLeafPass(context("mmmmmmmm"), leafOptions);
    expect(ordinals(plan?.items)).toEqual([1, 2, 3, 4, 5]);
    expect(plan?.sourceTokens).toBe(50);
  });

  it("never compacts the fresh tail", () => {
    expect(planLeafPass(context("mmmm"), { ...leafOptions, freshTailCount: 4 })).toBeNull();
  });

  it("needs leafMinFanout messages unless the chunk is full", () => {
    expect(planLeafPass(context("0mmmm"), leafOptions)).toBeNull(); // 2 messages outside the tail < 3
    expect(ordinals(planLeafPass(context("0mmmmm"), leafOptions)?.items)).toEqual([2, 3, 4]);
  });

  it("never splits a tool call from its results, and counts results with their call", () => {
    // c r r at 4..6 would straddle a 50-token boundary: the chunk stops before the call.
    const plan = planLeafPass(context("mmmcrrmmmm"), leafOptions);
    expect(ordinals(plan?.items)).toEqual([1, 2, 3]);
  });

  it("treats a call whose results reach into the fresh tail as fresh", () => {
    // Fresh tail = the last 2 raw messages, counted by unit: c r r is one unit of 3 messages.
    const plan = planLeafPass(context("mmmmcrr"), { ...leafOptions, minFanout: 1 });
    expect(ordinals(plan?.items)).toEqual([1, 2, 3, 4]);
  });

  it("takes a single oversized message alone rather than blocking forever", () => {
    const items = context("mmmm");
    items[0]!.tokenCount = 500;
    expect(ordinals(planLeafPass(items, leafOptions)?.items)).toEqual([1]);
  });

  it("passes the summary before the chunk as previous context", () => {
    const plan = planLeafPass(context("10mmmmmm"), leafOptions);
    expect(plan?.previousSummaryRowId).toBe(501);
  });

  it("skips chunks below the minimum worth summarizing", () => {
    expect(planLeafPass(context("mmmmmm"), { ...leafOptions, minimumSourceTokens: 60 })).toBeNull();
  });

  it("measures the raw backlog outside the fresh tail", () => {
    expect(rawTokensOutsideFreshTail(context("00mmmcrr"), 3)).toBe(30);
  });
});

describe("planCondensedPass", () => {
  const condensedOptions = { freshTailCount: 2, minFanout: 3, chunkTokens: 100, maxSourceDepth: Infinity, minimumSourceTokens: 1 };

  it("picks the shallowest depth with enough contiguous same-depth summaries", () => {
    const plan = planCondensedPass(context("1110000mm"), condensedOptions);
    expect(plan).toMatchObject({ sourceDepth: 0 });
    expect(ordinals(plan?.items)).toEqual([4, 5, 6, 7]);
    expect(plan?.previousSummaryRowId).toBe(502);
  });

  it("needs a contiguous run: a raw message or another depth breaks it", () => {
    expect(planCondensedPass(context("00m00100mm"), condensedOptions)).toBeNull();
    expect(planCondensedPass(context("00m00100mm"), { ...condensedOptions, minFanout: 2 })?.items.length).toBe(2);
  });

  it("respects the depth limit of incremental passes", () => {
    expect(planCondensedPass(context("1111mm"), { ...condensedOptions, maxSourceDepth: 0 })).toBeNull();
  });

  it("caps a long run at chunkTokens but never below the fan-out", () => {
    const plan = planCondensedPass(context("000000000000mm", 30), condensedOptions);
    expect(plan?.items).toHaveLength(3); // 3 x 30 = 90 <= 100; a 4th would be 120
  });
});
