import { describe, expect, it } from "vitest";
import { planCondensedPasses } from "../../src/compaction/condensed-planner.js";
import { findFreshTail, rawTokensOutsideTail, type TailPolicy } from "../../src/compaction/context-units.js";
import { type LeafPlanOptions, planLeafPass } from "../../src/compaction/leaf-planner.js";
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
const leafOptions = { freshTailCount: 2, freshTailMaxTokens: Infinity, minFanout: 3, chunkTokens: 50, minimumSourceTokens: 1 };

/** The first leaf plan of a sweep over `items` (the tail found as the engine does). */
function planLeaf(items: CompactionItem[], options: LeafPlanOptions & { freshTailCount: number; freshTailMaxTokens: number }) {
  const tail = findFreshTail(items, { count: options.freshTailCount, maxTokens: options.freshTailMaxTokens });
  return planLeafPass(items, tail, 0, options);
}

function tailOf(items: CompactionItem[], policy: TailPolicy) {
  return findFreshTail(items, policy);
}

describe("planLeafPass", () => {
  it("takes the oldest raw run outside the fresh tail, up to chunkTokens", () => {
    // 8 messages x 10 tokens; the last 2 are fresh; a chunk holds at most 50 tokens = 5 messages.
    const plan = planLeaf(context("mmmmmmmm"), leafOptions);
    expect(ordinals(plan?.items)).toEqual([1, 2, 3, 4, 5]);
    expect(plan?.sourceTokens).toBe(50);
  });

  it("never compacts the fresh tail", () => {
    expect(planLeaf(context("mmmm"), { ...leafOptions, freshTailCount: 4 })).toBeNull();
  });

  it("needs leafMinFanout messages unless the chunk is full", () => {
    expect(planLeaf(context("0mmmm"), leafOptions)).toBeNull(); // 2 messages outside the tail < 3
    expect(ordinals(planLeaf(context("0mmmmm"), leafOptions)?.items)).toEqual([2, 3, 4]);
  });

  it("never splits a tool call from its results, and counts results with their call", () => {
    // c r r at 4..6 would straddle a 50-token boundary: the chunk stops before the call.
    const plan = planLeaf(context("mmmcrrmmmm"), leafOptions);
    expect(ordinals(plan?.items)).toEqual([1, 2, 3]);
  });

  it("treats a call whose results reach into the fresh tail as fresh", () => {
    // Fresh tail = the last 2 raw messages, counted by unit: c r r is one unit of 3 messages.
    const plan = planLeaf(context("mmmmcrr"), { ...leafOptions, minFanout: 1 });
    expect(ordinals(plan?.items)).toEqual([1, 2, 3, 4]);
  });

  it("takes a single oversized message alone rather than blocking forever", () => {
    const items = context("mmmm");
    items[0]!.tokenCount = 500;
    expect(ordinals(planLeaf(items, leafOptions)?.items)).toEqual([1]);
  });

  it("lets a start too small for a summary ride with the large message after it, instead of leaving it raw for good", () => {
    // A turn's short reply (8 tokens) before the next turn's large message (500): the chunk is full at the reply alone,
    // which is under the minimum worth summarizing. Without the rider it is skipped, and stays between two summaries.
    const items = context("mmmmm");
    items[0]!.tokenCount = 8;
    items[1]!.tokenCount = 500;
    const plan = planLeaf(items, { ...leafOptions, minimumSourceTokens: 30 });
    expect(ordinals(plan?.items)).toEqual([1, 2]);
    expect(plan?.sourceTokens).toBe(508);
    // A start large enough for a summary does not take more than fits.
    items[0]!.tokenCount = 40;
    expect(ordinals(planLeaf(items, { ...leafOptions, minimumSourceTokens: 30 })?.items)).toEqual([1]);
  });

  it("passes the summary before the chunk as previous context", () => {
    const plan = planLeaf(context("10mmmmmm"), leafOptions);
    expect(plan?.previousSummaryRowId).toBe(501);
  });

  it("skips chunks below the minimum worth summarizing", () => {
    expect(planLeaf(context("mmmmmm"), { ...leafOptions, minimumSourceTokens: 60 })).toBeNull();
  });

  it("plans the next chunk from where the last one ended, over the same list", () => {
    // 12 messages x 10 tokens, tail 2: chunks of 5 messages at 1-5 and 6-10, then nothing before the tail.
    const items = context("mmmmmmmmmmmm");
    const tail = findFreshTail(items, { count: 2, maxTokens: Infinity });
    const first = planLeafPass(items, tail, 0, leafOptions)!;
    const second = planLeafPass(items, tail, first.end, leafOptions, 999)!;
    expect(ordinals(second.items)).toEqual([6, 7, 8, 9, 10]);
    expect(second.previousSummaryRowId).toBe(999); // the summary the caller applied for the first chunk
    expect(planLeafPass(items, tail, second.end, leafOptions)).toBeNull();
  });
});

describe("the fresh tail", () => {
  it("holds at most freshTailCount raw messages", () => {
    expect(tailOf(context("mmmmmm"), { count: 4, maxTokens: Infinity })).toMatchObject({ startIndex: 2, tokens: 40 });
  });

  it("holds at most its token share: older tail messages beyond it are compactable", () => {
    // 6 messages x 10 tokens, count 4, but only 25 tokens: the newest 2 messages.
    expect(tailOf(context("mmmmmm"), { count: 4, maxTokens: 25 })).toMatchObject({ startIndex: 4, tokens: 20 });
  });

  it("protects nothing when the newest unit alone exceeds its token share", () => {
    const items = context("mmmcrr");
    expect(tailOf(items, { count: 32, maxTokens: 25 })).toMatchObject({ startIndex: items.length, tokens: 0 });
  });

  it("ends at the newest summary: only raw messages after it are fresh", () => {
    expect(tailOf(context("mm0mm"), { count: 10, maxTokens: Infinity })).toMatchObject({ startIndex: 3 });
  });

  it("is found from the newest item back, reading only the tail and the unit before it", () => {
    const items = context("m".repeat(10_000) + "mcrr");
    let reads = 0;
    const counted = new Proxy(items, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    // count 3: the unit c r r (3 messages) fills it; the m before it is read and left out.
    expect(findFreshTail(counted, { count: 3, maxTokens: Infinity })).toMatchObject({ startIndex: 10_001, tokens: 30 });
    expect(reads).toBeLessThan(20);
  });

  it("starts a unit at a tool result with no call before it (the first item)", () => {
    // r m m: the orphan result is a unit of its own, as walking forward from the first item makes it.
    expect(tailOf(context("rmm"), { count: 10, maxTokens: Infinity })).toMatchObject({ startIndex: 0, tokens: 30 });
    expect(ordinals(planLeaf(context("rmmmmm"), { ...leafOptions, freshTailCount: 1 })?.items)).toEqual([1, 2, 3, 4, 5]);
  });

  it("measures the raw backlog outside the fresh tail", () => {
    const items = context("00mmmcrr");
    expect(rawTokensOutsideTail(items, findFreshTail(items, { count: 3, maxTokens: Infinity }))).toBe(30);
  });
});

describe("planCondensedPasses", () => {
  const condensedOptions = { minFanout: 3, chunkTokens: 100, minimumSourceTokens: 1 };
  const plan = (shape: string, depth: number, options = condensedOptions, tokens = 10) => {
    const items = context(shape, tokens);
    return planCondensedPasses(items, items.length, depth, options);
  };

  it("plans every run of enough contiguous summaries of one depth", () => {
    const plans = plan("1110000mm", 0);
    expect(plans.map((each) => ordinals(each.items))).toEqual([[4, 5, 6, 7]]);
    expect(plans[0]?.previousSummaryRowId).toBe(502);
    expect(plan("1110000mm", 1).map((each) => ordinals(each.items))).toEqual([[1, 2, 3]]);
  });

  it("needs a contiguous run: a raw message or another depth breaks it", () => {
    expect(plan("00m00100mm", 0)).toEqual([]);
    expect(plan("00m00100mm", 0, { ...condensedOptions, minFanout: 2 }).map((each) => ordinals(each.items))).toEqual([[1, 2], [4, 5], [7, 8]]);
  });

  it("cuts a long run into chunks capped at chunkTokens but never below the fan-out", () => {
    // 12 summaries x 30 tokens: chunks of 3 (90 <= 100; a 4th would be 120), four of them.
    const plans = plan("000000000000mm", 0, condensedOptions, 30);
    expect(plans.map((each) => each.items.length)).toEqual([3, 3, 3, 3]);
  });

  it("leaves a remainder shorter than the fan-out for later", () => {
    expect(plan("00000mm", 0).map((each) => ordinals(each.items))).toEqual([[1, 2, 3, 4, 5]]);
    expect(plan("0000000mm", 0, { ...condensedOptions, chunkTokens: 30 }).map((each) => ordinals(each.items))).toEqual([[1, 2, 3], [4, 5, 6]]);
  });
});
