/**
 * The cost rule that picks a full-text read's plan on PostgreSQL (pg-retrieval-sql.ts `probeFor`): walk the newest
 * rows checking each tsvector, or read every match from the GIN index. The figures are the 1M bench's
 * (docs/benchmarks.md, "PostgreSQL"); the rule is a pure function, so the plans it picks are checked here at sizes a
 * test database could not hold.
 */
import { describe, expect, it } from "vitest";
import { LARGE_DOCUMENT_COST, MAX_PROBE_IDS, probeFor } from "../../src/postgres/pg-retrieval-sql.js";

describe("the walk-or-index rule of a PostgreSQL full-text read", () => {
  it("walks the newest rows for a common word, whatever the history's size", () => {
    // "the" in 60% of the rows: 3 × 50 / 0.6 = 250 rows hold the limit three times over.
    expect(probeFor(0.6, 50)).toBe(250);
    expect(probeFor(0.6, 50, 600_000)).toBe(250);
  });

  it("reads a rare word from the GIN index, never a walk longer than its matches make worth it", () => {
    expect(probeFor(0.0001, 50)).toBe(0);
    expect(probeFor(0.0001, 50, 100)).toBe(0);
    expect(probeFor(0, 50, 1_000)).toBe(0);
  });

  it("walks past 4,000 rows when the GIN index would fetch more matches than the walk passes rows (a question's word at 1M)", () => {
    // "fix" in 1.5% of 1M messages: 15,000 matches to fetch from the GIN index, or 5,000 rows to walk for 25 of them.
    expect(probeFor(0.015, 25)).toBe(0);
    expect(probeFor(0.015, 25, 15_000)).toBe(5_000);
    // The same word in a 100k history: 1,500 matches, cheaper than the 5,000 rows' walk.
    expect(probeFor(0.015, 25, 1_500)).toBe(0);
  });

  it("walks a quarter as far in summaries and stored-content chunks, whose tsvectors cost four times a message's", () => {
    const share = 3 * 50 / MAX_PROBE_IDS; // a walk of exactly MAX_PROBE_IDS rows
    expect(probeFor(share, 50)).toBe(MAX_PROBE_IDS);
    expect(probeFor(share, 50, 0, LARGE_DOCUMENT_COST)).toBe(0);
    expect(probeFor(share * LARGE_DOCUMENT_COST, 50, 0, LARGE_DOCUMENT_COST)).toBe(MAX_PROBE_IDS / LARGE_DOCUMENT_COST);
  });
});
