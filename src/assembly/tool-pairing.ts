/**
 * Keeps tool calls and tool results together in an assembled context. Strict providers reject a tool result
 * without its call and a call without its result, and such an error repeats on every turn. The assembler
 * already selects call+results as one unit; this pass is the last line of defence for what the host stored
 * (aborted turns, results whose call was never stored): orphan results are dropped and unanswered calls are
 * removed from their assistant message.
 */
import type { AgentMessage } from "../host/openclaw-types.js";

export interface Sized {
  message: AgentMessage;
  tokens: number;
  /** A summary rendered as a message (not a stored message). */
  isSummary: boolean;
  /** The memory floor (memory-floor.ts), neither a stored message nor a summary. */
  isFloor?: boolean;
}

function toolCallIdsOf(message: AgentMessage): string[] {
  if (message.role !== "assistant" || !Array.isArray(message.content)) return [];
  return message.content.flatMap((block) =>
    block && typeof block === "object" && (block as { type?: unknown }).type === "toolCall" &&
    typeof (block as { id?: unknown }).id === "string"
      ? [(block as { id: string }).id]
      : [],
  );
}

export function repairToolPairing(items: Sized[]): Sized[] {
  const called = new Set<string>();
  const answered = new Set<string>();
  const kept: Sized[] = [];
  for (const item of items) {
    if (item.message.role === "toolResult") {
      const id = item.message.toolCallId;
      if (typeof id !== "string" || !called.has(id) || answered.has(id)) continue;
      answered.add(id);
    } else {
      for (const id of toolCallIdsOf(item.message)) called.add(id);
    }
    kept.push(item);
  }
  return kept.flatMap((item) => {
    const ids = toolCallIdsOf(item.message);
    if (ids.every((id) => answered.has(id))) return [item];
    const content = (item.message.content as unknown[]).filter(
      (block) => !((block as { type?: unknown }).type === "toolCall" && !answered.has((block as { id: string }).id)),
    );
    if (content.length === 0) return [];
    return [{ ...item, message: { ...item.message, content } }];
  });
}
