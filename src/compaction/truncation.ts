/**
 * The last escalation level: deterministic truncation of the source text to about FALLBACK_TARGET_TOKENS, with
 * a visible marker. It needs no model, so a pass always makes progress whatever the summarizer does. Summaries
 * made this way are stored with level "fallback" so they can be found and re-summarized later.
 */
import type { TokenEstimator } from "../contracts.js";
import { EXPAND_LINE_PREFIX } from "./summary-output.js";

export const FALLBACK_TARGET_TOKENS = 512;
export const TRUNCATION_MARKER = "[Truncated for context management]";

/**
 * The longest head of `sourceText` that, with the marker and the expand line, stays within `maxTokens` and
 * passes `fits`; null when not even the marker alone fits (the source is too small to be worth replacing).
 */
export function truncateForFallback(
  sourceText: string,
  maxTokens: number,
  tokens: TokenEstimator,
  fits: (text: string) => boolean,
): string | null {
  const render = (length: number) => {
    const head = sourceText.slice(0, length).trimEnd();
    const ellipsis = length < sourceText.length ? " ..." : "";
    return `${TRUNCATION_MARKER}\n${head}${ellipsis}\n\n${EXPAND_LINE_PREFIX} the full text of these messages (this summary is a truncated fallback)`;
  };
  const isAcceptable = (length: number) => {
    const text = render(length);
    return tokens.estimate(text) <= maxTokens && fits(text);
  };
  if (!isAcceptable(0)) return null;
  let low = 0;
  let high = sourceText.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (isAcceptable(middle)) low = middle;
    else high = middle - 1;
  }
  return render(low);
}
