/**
 * Cutting text to a token budget. The estimator is not linear in characters for mixed scripts, so the cut point
 * is found by binary search over the length (O(n log n) estimator work, never more than the text itself).
 */
import type { TokenEstimator } from "../contracts.js";

export const CUT_MARKER = "\n[… cut to fit the token budget]";

export interface FittedText {
  text: string;
  tokenCount: number;
  cut: boolean;
}

/** `text` if it fits in `maxTokens`, else its longest prefix that fits together with CUT_MARKER. */
export function fitToTokens(text: string, maxTokens: number, tokens: TokenEstimator): FittedText {
  const full = tokens.estimate(text);
  if (full <= maxTokens) return { text, tokenCount: full, cut: false };
  const room = maxTokens - tokens.estimate(CUT_MARKER);
  if (room <= 0) return { text: "", tokenCount: 0, cut: true };
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (tokens.estimate(text.slice(0, middle)) <= room) low = middle;
    else high = middle - 1;
  }
  let end = low;
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code < 0xdc00) end--; // never end on half a surrogate pair
  const fitted = text.slice(0, end) + CUT_MARKER;
  return { text: fitted, tokenCount: tokens.estimate(fitted), cut: true };
}
