/**
 * Host-given sizes (token budgets, windows): only finite numbers above 0 count; the floored reading is a token
 * count. The assembly budget, the compaction targets and the compaction service read with flooredPositive, the
 * compact hook with positiveNumber (the service floors after it).
 */
import { describe, expect, it } from "vitest";
import { flooredPositive, positiveNumber } from "../../src/runtime/numbers.js";

const NOT_SIZES: unknown[] = [0, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, "1000", null, undefined, {}, 10n];

describe("positiveNumber", () => {
  it("keeps a finite number above 0 as it is", () => {
    expect(positiveNumber(1000)).toBe(1000);
    expect(positiveNumber(0.5)).toBe(0.5);
  });

  it("drops zero, negatives, NaN, infinities and anything not a number", () => {
    for (const value of NOT_SIZES) expect(positiveNumber(value)).toBeUndefined();
  });
});

describe("flooredPositive", () => {
  it("rounds a positive number down, so a fraction below 1 gives 0 rather than nothing", () => {
    expect(flooredPositive(1000.9)).toBe(1000);
    expect(flooredPositive(0.5)).toBe(0);
  });

  it("drops what positiveNumber drops", () => {
    for (const value of NOT_SIZES) expect(flooredPositive(value)).toBeUndefined();
  });
});
