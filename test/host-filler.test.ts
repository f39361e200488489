/**
 * The end-to-end suite's filler text is the size it says for a real tokenizer: a "1,500-token turn" is 1,500 tokens
 * for the fake model (which counts with o200k), not 3,600 as the suite's earlier filler was (issue 31).
 */
import { describe, expect, it } from "vitest";
import { fillerText } from "./host/harness/host-conversation.js";
import { textTokens } from "./host/request-tokens.js";

describe("the host suite's filler text", () => {
  it.each([300, 1_500, 16_000])("is within 5 percent of %i tokens for o200k, at about four characters a token", (tokens) => {
    for (const seed of ["turn-2", "turn-17", "paste"]) {
      const text = fillerText(tokens, seed);
      expect(textTokens(text)).toBeGreaterThanOrEqual(tokens * 0.95);
      expect(textTokens(text)).toBeLessThanOrEqual(tokens * 1.05);
      expect(text.length / textTokens(text)).toBeGreaterThan(3.4);
      expect(text.length / textTokens(text)).toBeLessThan(4.4);
    }
  });
});
