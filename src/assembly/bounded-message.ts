/**
 * The bounded form of a unit that alone is larger than the budget (spec 011): every text of its messages keeps its
 * head and tail, with a note in the middle saying how much is left out and that the whole message is stored and
 * searchable. It is the assembler's last resort: large pastes and tool output are normally stored aside at ingest,
 * and compaction summarizes what does not fit, but a budget can shrink between turns (a smaller model), and the
 * newest context should still reach the model, within the budget.
 */
import type { TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import { encodeMessage } from "../messages/message-codec.js";
import { prefixWithin, suffixWithin } from "../tokens/text-within.js";
import type { Sized } from "./tool-pairing.js";

/** Below this many tokens nothing useful of a message fits: the unit is left out instead. */
export const MINIMUM_BOUNDED_TOKENS = 64;
/** Share of each kept text taken from its head; the rest from its tail (errors and conclusions end texts). */
const HEAD_SHARE = 2 / 3;
const ATTEMPTS = 4;

/** The unit within `budget` tokens, or null when not even its bounded form fits. */
export function boundUnit(unit: readonly Sized[], budget: number, tokens: TokenEstimator): Sized[] | null {
  if (unit.length === 0 || budget < MINIMUM_BOUNDED_TOKENS) return null;
  const texts = unit.map((item) => textsOf(item.message));
  const textTokens = texts.map((list) => list.map((text) => tokens.estimate(text)));
  const totalText = textTokens.flat().reduce((sum, count) => sum + count, 0);
  if (totalText === 0) return null;
  const fixed = unit.reduce((sum, item) => sum + costOf(item.message, tokens), 0) - totalText;
  let allowance = budget - fixed;
  for (let attempt = 0; attempt < ATTEMPTS && allowance > 0; attempt++) {
    const bounded = unit.map((item, index) => {
      const kept = texts[index]!.map((text, textIndex) =>
        shorten(text, Math.floor((allowance * textTokens[index]![textIndex]!) / totalText), tokens));
      const message = withTexts(item.message, kept);
      return { ...item, message, tokens: costOf(message, tokens) };
    });
    const cost = bounded.reduce((sum, item) => sum + item.tokens, 0);
    if (cost <= budget) return bounded;
    allowance -= cost - budget;
  }
  return null;
}

/** The message's cost as the store counts it (message-codec), so bounded and stored counts agree. */
function costOf(message: AgentMessage, tokens: TokenEstimator): number {
  return encodeMessage(message, tokens, 0).tokenCount;
}

/** The texts a bounded form may shorten: string content, and text blocks. */
function textsOf(message: AgentMessage): string[] {
  const content = message.content;
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) => (isTextBlock(block) ? [block.text] : []));
}

function withTexts(message: AgentMessage, texts: readonly string[]): AgentMessage {
  const content = message.content;
  if (typeof content === "string") return { ...message, content: texts[0] ?? "" };
  if (!Array.isArray(content)) return message;
  let next = 0;
  return { ...message, content: content.map((block) => (isTextBlock(block) ? { ...block, text: texts[next++] ?? "" } : block)) };
}

function isTextBlock(block: unknown): block is { type: "text"; text: string } {
  return block !== null && typeof block === "object" && (block as { type?: unknown }).type === "text" &&
    typeof (block as { text?: unknown }).text === "string";
}

/** The text's head and tail within `maxTokens`, with a note naming how many tokens are left out between them. */
export function shorten(text: string, maxTokens: number, tokens: TokenEstimator): string {
  const total = tokens.estimate(text);
  if (total <= maxTokens) return text;
  const note = (omitted: number) =>
    `\n\n[... ${omitted} tokens of this message are left out here to fit the model's context window. ` +
    "The whole message is stored: lcm_grep finds any part of it ...]\n\n";
  const room = Math.max(0, maxTokens - tokens.estimate(note(total)));
  const head = prefixWithin(text, Math.floor(room * HEAD_SHARE), tokens);
  const tail = suffixWithin(text.slice(head.length), room - tokens.estimate(head), tokens);
  return `${head}${note(Math.max(0, total - tokens.estimate(head) - tokens.estimate(tail)))}${tail}`;
}
