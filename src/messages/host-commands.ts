/**
 * Host commands are not conversation (specs/016-session-lifecycle.md). When a chat command is answered by the
 * gateway itself (/lcm status, /lcm doctor, /compact …), OpenClaw 2026.9.6 writes the command into the transcript
 * as a user message and its answer as an assistant message from provider "openclaw", model "gateway-injected".
 * Only its own /status marks both `excludeFromContext`; for the others the user message looks like any prompt, so
 * OpenClaw's built-in engine replays it to the model (without the answer). LCM stores both and keeps both out of the
 * context and the summarizer's input: the answer by its provider and model, the command by its pairing with the
 * answer (the answer's idempotency key K, the command's `K:user`), or, without keys, by being a slash command
 * right before the answer.
 */
import type { AgentMessage } from "../host/openclaw-types.js";

/** Assistant messages OpenClaw writes into the transcript itself and never sends to a model. */
const TRANSCRIPT_ONLY_MODELS = new Set(["gateway-injected", "delivery-mirror"]);
const DELIVERY_MIRROR_KINDS = new Set(["channel-final", "channel-final-suppressed", "message-tool-source-reply", "cron-direct-delivery-context"]);
/** "/lcm status", or as the host may render it, "[Mon 2026-11-23 17:24 UTC] /lcm status". */
const SLASH_COMMAND = /^\s*(?:\[[^\]\n]{1,80}\]\s*)?\/[A-Za-z][\w-]*(?:\s|$)/;
/** How far before its answer the command may be (other transcript entries can land in between). */
const PAIR_DISTANCE = 3;

/** OpenClaw's transcript-only assistant messages (its `isTranscriptOnlyOpenClawAssistantMessage`). */
export function isTranscriptOnlyReply(message: AgentMessage): boolean {
  if (message.role !== "assistant") return false;
  if (message.provider === "openclaw" && typeof message.model === "string" && TRANSCRIPT_ONLY_MODELS.has(message.model)) return true;
  const mirror = message.openclawDeliveryMirror;
  return mirror !== null && typeof mirror === "object" && DELIVERY_MIRROR_KINDS.has(String((mirror as { kind?: unknown }).kind));
}

/** The idempotency key of the command a gateway answer replies to (`<answer key>:user`), if it has one. */
export function commandKeyOfReply(message: AgentMessage): string | undefined {
  if (!isTranscriptOnlyReply(message)) return undefined;
  const key = message.idempotencyKey;
  return typeof key === "string" && key !== "" && !key.endsWith(":user") ? `${key}:user` : undefined;
}

/** Whether a user message's visible text is a slash command. */
export function isSlashCommandText(message: AgentMessage): boolean {
  if (message.role !== "user") return false;
  return SLASH_COMMAND.test(firstText(message.content));
}

/**
 * Which messages of a batch are host commands answered within it: indexes of user messages. A gateway answer whose
 * command is not in the batch (stored earlier) is reported in `unpairedCommandKeys`, for the caller to look up.
 */
export function hostCommandsIn(messages: readonly AgentMessage[]): { commandIndexes: Set<number>; unpairedCommandKeys: string[] } {
  const commandIndexes = new Set<number>();
  const unpairedCommandKeys: string[] = [];
  messages.forEach((message, index) => {
    if (!isTranscriptOnlyReply(message)) return;
    const commandKey = commandKeyOfReply(message);
    for (let back = index - 1; back >= Math.max(0, index - PAIR_DISTANCE); back--) {
      const candidate = messages[back]!;
      if (candidate.role !== "user") continue;
      if (commandKey !== undefined ? candidate.idempotencyKey === commandKey : back === index - 1 && isSlashCommandText(candidate)) {
        commandIndexes.add(back);
        return;
      }
    }
    if (commandKey !== undefined && index < PAIR_DISTANCE) unpairedCommandKeys.push(commandKey);
  });
  return { commandIndexes, unpairedCommandKeys };
}

function firstText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  for (const block of content) {
    if (block !== null && typeof block === "object" && (block as { type?: unknown }).type === "text") {
      const text = (block as { text?: unknown }).text;
      if (typeof text === "string") return text;
    }
  }
  return "";
}
