/**
 * `lcm context <conversation>`: exactly what the model would see next, assembled as the assemble hook does at the
 * conversation's recorded budget, with the token breakdown: what OpenClaw sends around it (its system prompt, the
 * message, the tool schemas, the reply reserve) and, when that leaves too little, why and what to change; the system
 * prompt addition, the memory floor, summaries, raw messages, and whether older items were left out.
 */
import { SYSTEM_PROMPT_ADDITION, systemPromptAdditionTokens } from "../../assembly/system-prompt.js";
import type { ConversationRecord } from "../../records.js";
import { type ContextPreview, previewContext } from "../../services/context-preview.js";
import { hostShareSentence, tooSmallAdvice } from "../../services/host-share.js";
import type { CliRuntime, CliStores, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { count, preview } from "../format.js";

export type ContextOutput = Omit<ContextPreview, "messages"> & {
  messages: { index: number; role: string; kind: "summary" | "message" | "floor"; tokens: number; text: string }[];
};

export async function contextCommand(runtime: CliRuntime, conversationId: number, options: { full: boolean }): Promise<CommandOutput<ContextOutput>> {
  const stores = runtime.open("read");
  const conversation = await requireConversation(stores, conversationId);
  const result = await previewContext(conversation, {
    store: stores.store,
    tokens: runtime.tokens,
    systemPromptAddition: { text: SYSTEM_PROMPT_ADDITION, tokens: systemPromptAdditionTokens(runtime.tokens) },
    defaultTokenBudget: runtime.settings.config.defaultTokenBudget,
  });
  const data: ContextOutput = {
    ...result,
    messages: result.messages.map((message, index) => ({ index: index + 1, role: message.role, kind: message.kind, tokens: message.tokens, text: message.text })),
  };
  const { totals } = result;
  const share = result.hostShare;
  const advice = share ? tooSmallAdvice(share) : "";
  const lines = [
    `Context of conversation ${conversationId} (agent ${conversation.agentId}): what the model sees next`,
    ...(share
      ? [`Host: ${hostShareSentence(share)}. OpenClaw sends its system prompt (with LCM's addition), the messages below, then the new message and the tool schemas.`]
      : []),
    ...(advice ? [advice] : []),
    `Budget ${count(result.budgetTokens)} tokens (${result.budgetSource === "recorded" ? "the last turn's" : "default: no turn assembled yet"}) · ` +
      `uses ${count(totals.estimatedTokens)} = system prompt addition ${count(result.systemPromptAddition.tokens)} + ` +
      (totals.floorTokens > 0 ? `memory floor ${count(totals.floorTokens)} + ` : "") +
      `${count(totals.summaryCount)} summaries ${count(totals.summaryTokens)} + ${count(totals.rawMessageCount)} raw messages ${count(totals.rawTokens)}`,
    totals.evictedOlderItems
      ? `Older context items did not fit and are left out (${count(conversation.contextItemCount)} items, ${count(conversation.contextTokens)} tokens in all; ` +
        "the memory floor stands for them, compaction will fold them)"
      : `All ${count(conversation.contextItemCount)} context items fit.`,
    ...(totals.boundedNewest ? ["The newest message alone is larger than the budget: it is shown bounded (head and tail)."] : []),
    "",
    ...data.messages.map((message) => {
      const kind = message.kind === "summary" ? "summary" : message.kind === "floor" ? "memory floor" : message.role;
      const head = `#${message.index} ${kind} · ${count(message.tokens)} tokens`;
      return options.full ? `${head}\n${message.text}\n` : `${head} · ${preview(message.text, 160)}`;
    }),
  ];
  return { data, text: lines.join("\n") };
}

export async function requireConversation(stores: CliStores, conversationId: number): Promise<ConversationRecord> {
  const conversation = await stores.store.getConversation(conversationId);
  if (!conversation) {
    throw new CliError(EXIT.notFound, `No conversation ${conversationId} is stored in ${stores.backend.location}; list them with \`lcm conversations\`.`);
  }
  return conversation;
}
