/**
 * How much of the model's window one recall tool result may take. OpenClaw cuts an oversized tool result itself, to
 * a share of the window, but only after the fact and mid-text; in an 8k window its own prompt and the tool schemas
 * leave about 1.2k tokens, and a 50-match lcm_grep result (about 17 KB) did not fit. So a tool that knows the
 * caller's window (the conversation's `lastWindowTokens`, recorded by assemble) returns what fits, and says what it
 * left out and how to narrow the request.
 */
import { HOST_CHARS_PER_TOKEN } from "../tokens/host-measure.js";

/** The share of the window one recall tool result may take: about the history room an 8k window leaves. */
export const TOOL_RESULT_WINDOW_SHARE = 0.12;
/** Whatever the window, a result may be this long (one match with its context). */
const MIN_TOOL_RESULT_CHARS = 1_500;

/** The most characters of one tool result for a model window of `windowTokens` (null: not known, no limit). */
export function toolResultCharsFor(windowTokens: number | null): number {
  if (windowTokens === null || !(windowTokens > 0)) return Number.POSITIVE_INFINITY;
  return Math.max(MIN_TOOL_RESULT_CHARS, Math.floor(windowTokens * TOOL_RESULT_WINDOW_SHARE * HOST_CHARS_PER_TOKEN));
}

/** The most tokens of an answer (lcm_expand_query) for a model window of `windowTokens`: the same share, at least 100. */
export function answerTokensFor(windowTokens: number): number {
  return Math.max(100, Math.floor(windowTokens * TOOL_RESULT_WINDOW_SHARE));
}

/**
 * The size one recall result may take, whoever asked: an agent's model window (a share of it), or a fixed number of
 * characters (the MCP server's --max-result-chars). `windowTokens` is set for the first, so notes can name the window.
 */
export interface ResultLimit {
  maxChars: number;
  /** The longest lcm_expand_query answer, in tokens. */
  answerTokens: number;
  windowTokens: number | null;
}

/** The limit for an agent whose model window is `windowTokens`; null (no limit) when the window is not known. */
export function windowLimit(windowTokens: number | null): ResultLimit | null {
  if (windowTokens === null || !(windowTokens > 0)) return null;
  return { maxChars: toolResultCharsFor(windowTokens), answerTokens: answerTokensFor(windowTokens), windowTokens };
}

/**
 * A limit of `maxChars` characters. The answer gets four fifths of it at four characters a token (English prose; the
 * rest is the result's metadata), at least 100 tokens.
 */
export function characterLimit(maxChars: number): ResultLimit {
  return { maxChars, answerTokens: Math.max(100, Math.floor((maxChars * 0.8) / 4)), windowTokens: null };
}

/** How a note names the limit a result was cut to: "this conversation's model window (8192 tokens)". */
export function describeLimit(limit: ResultLimit): string {
  return limit.windowTokens !== null
    ? `this conversation's model window (${limit.windowTokens} tokens)`
    : `the result limit of ${limit.maxChars} characters`;
}

/**
 * The longest prefix of `items` whose rendering (`render(count)`) fits `maxChars`, at least one item: by bisection,
 * since the rendering grows with the count. Returns the count.
 */
export function itemsThatFit(count: number, maxChars: number, render: (count: number) => string): number {
  if (count === 0 || render(count).length <= maxChars) return count;
  let low = 1;
  let high = count - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (render(middle).length <= maxChars) low = middle;
    else high = middle - 1;
  }
  return low;
}
