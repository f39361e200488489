/** One token per whitespace-separated word (images 100): makes budget arithmetic in tests obvious. */
import type { TokenEstimator } from "../../src/contracts.js";

export class WordTokenEstimator implements TokenEstimator {
  readonly imageTokens = 100;
  estimate(text: string): number {
    const trimmed = text.trim();
    return trimmed === "" ? 0 : trimmed.split(/\s+/).length;
  }
}
