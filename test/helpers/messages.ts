/** Builders for host AgentMessages as OpenClaw 2026.9.6 sends them. */
import type { AgentMessage } from "../../src/host/openclaw-types.js";

let counter = 0;
const BASE_TIME = Date.UTC(2026, 10, 1, 8, 0, 0);

function nextStamp(): number {
  counter++;
  return BASE_TIME + counter * 1_000;
}

export function userMessage(text: string, extra: Partial<AgentMessage> = {}): AgentMessage {
  return { role: "user", content: text, timestamp: nextStamp(), ...extra };
}

export function assistantMessage(text: string, extra: Partial<AgentMessage> = {}): AgentMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "openai-completions",
    provider: "fake",
    model: "fake-model",
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
    stopReason: "stop",
    timestamp: nextStamp(),
    ...extra,
  };
}

export function toolCallMessage(calls: { id: string; name: string; arguments: Record<string, unknown> }[], text?: string): AgentMessage {
  return assistantMessage("", {
    content: [...(text ? [{ type: "text", text }] : []), ...calls.map((call) => ({ type: "toolCall", ...call }))],
    stopReason: "toolUse",
  });
}

export function toolResultMessage(toolCallId: string, toolName: string, text: string, extra: Partial<AgentMessage> = {}): AgentMessage {
  return {
    role: "toolResult",
    toolCallId,
    toolName,
    content: [{ type: "text", text }],
    isError: false,
    timestamp: nextStamp(),
    ...extra,
  };
}

/** A user message as OpenClaw persists it: with the run's idempotency key. */
export function withIdempotencyKey(message: AgentMessage, key: string): AgentMessage {
  return { ...message, idempotencyKey: key };
}

/** A run of `turns` plain user/assistant exchanges with unique words. */
export function conversation(turns: number, prefix = "turn"): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    messages.push(userMessage(`${prefix} ${turn} question about topic${turn}`));
    messages.push(assistantMessage(`${prefix} ${turn} answer mentioning detail${turn}`));
  }
  return messages;
}
