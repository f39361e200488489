/**
 * The longest head or tail of a text within a number of tokens, by an estimator: binary search over the length
 * (an estimate never shrinks as text grows; O(n log n) estimator work), never splitting a UTF-16 surrogate pair. Used
 * wherever a text must be cut to a token budget rather than to a character count (token density varies fourfold
 * between prose and logs); fitToTokens also marks the cut.
 */
import type { TokenEstimator } from "../contracts.js";

export function prefixWithin(text: string, maxTokens: number, tokens: TokenEstimator): string {
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (tokens.estimate(text.slice(0, middle)) <= maxTokens) low = middle;
    else high = middle - 1;
  }
  const prefix = text.slice(0, low);
  return /[\ud800-\udbff]$/.test(prefix) ? prefix.slice(0, -1) : prefix;
}

export function suffixWithin(text: string, maxTokens: number, tokens: TokenEstimator): string {
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (tokens.estimate(text.slice(text.length - middle)) <= maxTokens) low = middle;
    else high = middle - 1;
  }
  const suffix = text.slice(text.length - low);
  return /^[\udc00-\udfff]/.test(suffix) ? suffix.slice(1) : suffix;
}

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
  const fitted = prefixWithin(text, room, tokens) + CUT_MARKER;
  return { text: fitted, tokenCount: tokens.estimate(fitted), cut: true };
}
