/**
 * What the model would see next for a conversation, exactly: the Assembler run at the budget the last turn's first
 * assemble used (recorded with it, spec 023; else the recorded compaction budget, or defaultTokenBudget when no turn
 * was assembled), less the system prompt addition when the engine would send it, with the memory floor, as the
 * assemble hook does. Each message comes with its stored token count and kind, so `lcm context` can show where the
 * budget goes, and what OpenClaw's own prompt and tools took of the window (host-share.ts).
 */
import { Assembler } from "../assembly/assembler.js";
import type { TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import type { ConversationRecord } from "../records.js";
import type { ContextStore, MessageStore, SummaryReadStore } from "../store/store.js";
import { MEMORY_FLOOR_TOKENS } from "../assembly/memory-floor.js";
import { type HostShare, hostShareOf } from "./host-share.js";

export interface ContextPreviewDeps {
  store: ContextStore & MessageStore & SummaryReadStore;
  tokens: TokenEstimator;
  /** The engine's system prompt addition and its cost (engine/lcm-context-engine.ts). */
  systemPromptAddition: { text: string; tokens: number };
  defaultTokenBudget: number;
}

export interface PreviewMessage {
  role: string;
  /** "floor": the memory floor standing for the older history left out. */
  kind: "summary" | "message" | "floor";
  tokens: number;
  /** The message as the model reads it, in plain text (tool calls as name and JSON arguments). */
  text: string;
  message: AgentMessage;
}

export interface ContextPreview {
  conversationId: number;
  budgetTokens: number;
  budgetSource: "recorded" | "default";
  systemPromptAddition: { included: boolean; tokens: number; text: string };
  /** What OpenClaw's own prompt and tools took of the last turn's window (null before a turn was assembled). */
  hostShare: HostShare | null;
  messages: PreviewMessage[];
  totals: {
    estimatedTokens: number;
    summaryTokens: number;
    rawTokens: number;
    summaryCount: number;
    rawMessageCount: number;
    /** The memory floor's tokens (0 when none is sent). */
    floorTokens: number;
    /** Older context items left out because they did not fit the budget. */
    evictedOlderItems: boolean;
    boundedNewest: boolean;
  };
}

export async function previewContext(conversation: ConversationRecord, deps: ContextPreviewDeps): Promise<ContextPreview> {
  const budgetTokens = conversation.lastAssembly?.budgetTokens ?? conversation.lastTokenBudget ?? deps.defaultTokenBudget;
  // As the assemble hook: a budget too small to hold the addition and some context goes to the context alone.
  const withAddition = budgetTokens >= 2 * deps.systemPromptAddition.tokens;
  const additionTokens = withAddition ? deps.systemPromptAddition.tokens : 0;
  const assembled = await new Assembler({ store: deps.store, tokens: deps.tokens }).assemble({
    conversationId: conversation.conversationId,
    tokenBudget: budgetTokens - additionTokens,
    memoryFloor: { roomTokens: MEMORY_FLOOR_TOKENS, storedMessages: conversation.messageCount },
  });
  const messages = assembled.messages.map((message, index): PreviewMessage => {
    const item = assembled.items[index] ?? { tokens: 0, isSummary: false };
    const kind = item.isFloor ? "floor" : item.isSummary ? "summary" : "message";
    return { role: message.role, kind, tokens: item.tokens, text: messageText(message), message };
  });
  const floorTokens = assembled.floor?.tokens ?? 0;
  const summaryTokens = messages.filter((message) => message.kind === "summary").reduce((total, message) => total + message.tokens, 0);
  return {
    conversationId: conversation.conversationId,
    budgetTokens,
    budgetSource: conversation.lastAssembly === null && conversation.lastTokenBudget === null ? "default" : "recorded",
    systemPromptAddition: { included: withAddition, tokens: additionTokens, text: withAddition ? deps.systemPromptAddition.text : "" },
    hostShare: hostShareOf(conversation),
    messages,
    totals: {
      estimatedTokens: assembled.estimatedTokens + additionTokens,
      summaryTokens,
      rawTokens: assembled.estimatedTokens - summaryTokens - floorTokens,
      floorTokens,
      summaryCount: assembled.summaryCount,
      rawMessageCount: assembled.rawMessageCount,
      evictedOlderItems: assembled.evictedOlderItems,
      boundedNewest: assembled.boundedNewest,
    },
  };
}

/** A message's content as plain text: text and thinking blocks, tool calls as `name(arguments)`, images as a marker. */
export function messageText(message: AgentMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) {
    const fields = ["summary", "command", "output"].flatMap((field) => (typeof message[field] === "string" ? [String(message[field])] : []));
    return fields.join("\n");
  }
  return content.flatMap((item: unknown) => {
    if (typeof item === "string") return [item];
    // A null (or any non-object) block, which a host message may carry, holds nothing to show.
    if (item === null || typeof item !== "object") return [];
    const block = item as Record<string, unknown>;
    switch (block.type) {
      case "text":
        return String(block.text ?? "");
      case "thinking":
        return `[thinking] ${String(block.thinking ?? "")}`;
      case "toolCall":
        return `[tool call ${String(block.name)}] ${JSON.stringify(block.arguments ?? {})}`;
      case "image":
        return `[image ${String(block.mimeType ?? "")}]`;
      default:
        return `[${String(block.type)}]`;
    }
  }).join("\n");
}
