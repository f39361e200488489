/**
 * How many tokens a model would count in a chat.completions request, with a real tokenizer (o200k, the encoding of
 * OpenAI's current models, through js-tiktoken), so that the fake model refuses what a real model of its window would
 * refuse (issue 31). Counted as OpenAI documents for chat requests: each message's text and tool calls plus a few
 * tokens of framing, the tool schemas as their JSON, and a few tokens that prime the reply. Characters / 4 (the
 * suite's earlier measure) was 2.4 times too lenient on dense text; this count is the plugin-independent truth the
 * window checks compare against.
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import type { ChatMessage, ChatRequest } from "./fake-model-script.js";

/** Framing per message (role and separators) and the tokens that prime the reply, as OpenAI's cookbook counts them. */
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMING_TOKENS = 3;

let encoder: Tiktoken | undefined;

/** Real tokens of a text; special-token strings such as "<|endoftext|>" count as the plain text they are. */
export function textTokens(text: string): number {
  encoder ??= new Tiktoken(o200kBase);
  return encoder.encode(text, [], []).length;
}

function messageTokens(message: ChatMessage): number {
  let tokens = TOKENS_PER_MESSAGE + textTokens(message.role);
  const content = message.content;
  if (typeof content === "string") tokens += textTokens(content);
  else if (Array.isArray(content)) for (const part of content) tokens += textTokens(part.text ?? "");
  for (const call of message.tool_calls ?? []) {
    tokens += textTokens(call.function?.name ?? "") + textTokens(call.function?.arguments ?? "");
  }
  if (message.tool_call_id) tokens += textTokens(message.tool_call_id);
  return tokens;
}

/** The prompt tokens of a request: its messages and its tool schemas. */
export function requestTokens(request: ChatRequest): number {
  const messages = (request.messages ?? []).reduce((total, message) => total + messageTokens(message), 0);
  const tools = request.tools && request.tools.length > 0 ? textTokens(JSON.stringify(request.tools)) : 0;
  return messages + tools + REPLY_PRIMING_TOKENS;
}
