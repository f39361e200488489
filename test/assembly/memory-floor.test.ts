/**
 * The memory floor (spec 023): the line that says how much is stored and how to reach it, and the newest summary left
 * out, shortened to the floor's room, never more than MEMORY_FLOOR_TOKENS; the same bytes for the same inputs.
 */
import { describe, expect, it } from "vitest";
import { buildMemoryFloor, lineFloorTokens, MEMORY_FLOOR_TOKENS } from "../../src/assembly/memory-floor.js";
import type { SummaryRecord } from "../../src/records.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";

const tokens = new DefaultTokenEstimator();

function summary(content: string): SummaryRecord {
  return {
    rowId: 7, summaryId: "sum_00000000000000aa", conversationId: 1, kind: "condensed", depth: 2, content,
    tokenCount: tokens.estimate(content), sourceTokenCount: 40_000, earliestAt: Date.UTC(2026, 10, 1), latestAt: Date.UTC(2026, 10, 20),
    descendantCount: 12, sourceMessageCount: 180, seqStart: 1, seqEnd: 180, fileIds: [], level: "normal",
    createdAt: Date.UTC(2026, 10, 20), parentSummaryIds: ["sum_00000000000000a1", "sum_00000000000000a2"],
  };
}

const LONG = Array.from({ length: 400 }, (_, index) => `Decision ${index}: the staging vault moved to region ${index % 7}.`).join(" ");

describe("the memory floor", () => {
  it("carries the newest summary left out, shortened to its room, with the way to read it whole", () => {
    const floor = buildMemoryFloor({ storedMessages: 1_234, summary: summary(LONG), roomTokens: MEMORY_FLOOR_TOKENS, timestamp: Date.UTC(2026, 10, 20), tokens });
    const text = floor.message.content as string;
    expect(floor.kind).toBe("summary");
    expect(floor.summaryId).toBe("sum_00000000000000aa");
    expect(floor.tokens).toBeLessThanOrEqual(MEMORY_FLOOR_TOKENS);
    expect(floor.tokens).toBeGreaterThan(MEMORY_FLOOR_TOKENS - 40); // the room is used, not left empty
    expect(floor.tokens).toBe(tokens.estimate(text) + 4); // counted as a stored message is
    expect(text).toContain("This conversation has 1,234 stored messages; the older ones are not shown here.");
    expect(text).toContain('<summary id="sum_00000000000000aa" kind="condensed" depth="2"');
    expect(text).toContain("Decision 0: the staging vault moved to region 0.");
    expect(text).not.toContain("Decision 399");
    expect(text).toContain("[... shortened to fit the context window; lcm_describe with this summary's id reads it in full]");
    expect(floor.message).toMatchObject({ role: "user", timestamp: Date.UTC(2026, 10, 20) });
  });

  it("carries a short summary whole", () => {
    const floor = buildMemoryFloor({ storedMessages: 40, summary: summary("The user set up the staging vault."), roomTokens: 320, timestamp: 1, tokens });
    expect(floor.message.content).toContain("The user set up the staging vault.\n  </content>");
    expect(floor.message.content).not.toContain("shortened");
  });

  it("leaves a condensed summary's list of parents out when it would crowd out the text (lcm_describe lists them)", () => {
    const many = { ...summary("The user set up the staging vault and rotated its keys."), parentSummaryIds: Array.from({ length: 14 }, (_, index) => `sum_00000000000000${(0xb0 + index).toString(16)}`) };
    // Room for the line and the short text, not for fourteen parent references as well (about 16 tokens each).
    const room = lineFloorTokens(40, tokens) + 110;
    const floor = buildMemoryFloor({ storedMessages: 40, summary: many, roomTokens: room, timestamp: 1, tokens });
    expect(floor.kind).toBe("summary");
    expect(floor.tokens).toBeLessThanOrEqual(room);
    expect(floor.message.content).toContain("The user set up the staging vault and rotated its keys.");
    expect(floor.message.content).not.toContain("<parents>");
    // With room enough it is whole, parents included.
    expect(buildMemoryFloor({ storedMessages: 40, summary: { ...many, parentSummaryIds: many.parentSummaryIds.slice(0, 2) }, roomTokens: 320, timestamp: 1, tokens })
      .message.content).toContain("<parents>");
  });

  it("is the line alone when nothing was summarized yet, or when its room cannot hold a useful part of a summary", () => {
    const lineOnly = buildMemoryFloor({ storedMessages: 9, summary: null, roomTokens: 320, timestamp: 1, tokens });
    expect(lineOnly).toMatchObject({ kind: "line", summaryId: null, tokens: lineFloorTokens(9, tokens) });
    expect(lineOnly.message.content).toMatch(/^<earlier_history>\nThis conversation has 9 stored messages; .*lcm_grep searches all of them/s);
    // A tool loop that took the room: the line stays (the model must still know the history is there).
    const squeezed = buildMemoryFloor({ storedMessages: 9, summary: summary(LONG), roomTokens: 0, timestamp: 1, tokens });
    expect(squeezed).toMatchObject({ kind: "line", tokens: lineFloorTokens(9, tokens) });
  });

  it("renders the same bytes for the same inputs (the prompt cache holds while nothing changed)", () => {
    const build = () => buildMemoryFloor({ storedMessages: 77, summary: summary(LONG), roomTokens: 250, timestamp: 1, tokens });
    expect(JSON.stringify(build().message)).toBe(JSON.stringify(build().message));
    expect(build().tokens).toBeLessThanOrEqual(250);
  });
});
