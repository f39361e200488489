/**
 * An independent recount of what an assembled context sends a model, so a budget test does not trust the plugin's
 * own figure (estimatedTokens is a sum of stored costs). Each message is rendered as a provider receives it (its
 * text, a tool call's name and JSON arguments, a summary's whole XML element) and counted with OpenAI's o200k_base
 * and cl100k_base encodings (js-tiktoken), the larger of the two, plus the chat format's framing per message.
 */
import { Tiktoken } from "js-tiktoken/lite";
import cl100kBase from "js-tiktoken/ranks/cl100k_base";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import type { AgentMessage } from "../../src/host/openclaw-types.js";

/** OpenAI's chat format: 3 tokens frame every message, and its role is one more. */
const FRAMING_TOKENS_PER_MESSAGE = 4;
/** What a provider charges for one image block (not text: no tokenizer counts it). */
const IMAGE_TOKENS = 1_600;

let encodings: Tiktoken[] | null = null;
/** Counts of texts already counted: assembled contexts repeat most of their messages from turn to turn. */
const counted = new Map<string, number>();

/** The larger of the o200k_base and cl100k_base counts of `text` (special-token strings count as plain text). */
export function realTokens(text: string): number {
  if (text.length === 0) return 0;
  const known = counted.get(text);
  if (known !== undefined) return known;
  encodings ??= [new Tiktoken(o200kBase), new Tiktoken(cl100kBase)];
  const count = Math.max(...encodings.map((encoding) => encoding.encode(text, [], []).length));
  counted.set(text, count);
  return count;
}

/** The texts of one message as sent: string content, text and thinking blocks, tool calls, other fields as JSON. */
export function sentTexts(message: AgentMessage): string[] {
  const content = message.content;
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return content === undefined ? [] : [JSON.stringify(content)];
  return content.map((block) => {
    const record = block as Record<string, unknown>;
    if (record.type === "text" && typeof record.text === "string") return record.text;
    if (record.type === "thinking" && typeof record.thinking === "string") return record.thinking;
    if (record.type === "toolCall") return `${String(record.name)}${JSON.stringify(record.arguments ?? {})}`;
    if (record.type === "image") return "";
    return JSON.stringify(record);
  });
}

/** Real tokens of the messages as sent, and of the system prompt addition when the assemble returned one. */
export function sentTokens(assembled: { messages: AgentMessage[]; systemPromptAddition?: string }): number {
  let total = assembled.systemPromptAddition ? realTokens(assembled.systemPromptAddition) : 0;
  for (const message of assembled.messages) {
    total += FRAMING_TOKENS_PER_MESSAGE;
    for (const text of sentTexts(message)) total += realTokens(text);
    if (Array.isArray(message.content)) {
      total += IMAGE_TOKENS * message.content.filter((block) => (block as { type?: unknown }).type === "image").length;
    }
  }
  return total;
}
