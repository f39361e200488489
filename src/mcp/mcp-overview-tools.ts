/**
 * The two MCP tools the agent has no counterpart for, because an agent is always inside one conversation:
 * lcm_conversations (which conversations this server serves, newest activity first, with the figures `lcm
 * conversations` shows) and lcm_status (what the server serves, and one conversation's status as `/lcm status` shows
 * it). Both read the operator's services; neither shows anything of an agent the server does not serve.
 */
import { Type } from "@sinclair/typebox";
import { LcmError } from "../errors.js";
import { itemsThatFit } from "../retrieval/window-share.js";
import type { ConversationRecord } from "../records.js";
import { type ConversationRow, type ConversationStatus, conversationRow } from "../services/status-service.js";
import type { ConversationListing } from "../store/operator-store.js";
import { isExpansionSessionKey } from "../store/grant-store.js";
import { ToolParams } from "../tools/tool-params.js";
import { formatJson, textResult, type ToolResult } from "../tools/tool-result.js";
import type { McpBackend } from "./mcp-backend.js";

export const DEFAULT_CONVERSATION_LIMIT = 50;
const MAX_CONVERSATION_LIMIT = 500;
/** A listing limit no database reaches (conversations number in the hundreds, at most thousands). */
const EVERY_CONVERSATION = 1_000_000;

export const LCM_CONVERSATIONS_PARAMETERS = Type.Object({
  agentId: Type.Optional(Type.String({ description: "Only this agent's conversations (one of the agents this server serves)." })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CONVERSATION_LIMIT, description: `Default ${DEFAULT_CONVERSATION_LIMIT}.` })),
});

export const LCM_STATUS_PARAMETERS = Type.Object({
  conversationId: Type.Optional(Type.Integer({ minimum: 1, description: "One conversation's status (an id from lcm_conversations or lcm_grep)." })),
});

/** The conversations a client may read, newest activity first, at most `limit` (delegated helpers' never). */
export async function servedConversations(backend: McpBackend, agentId: string | null, limit: number): Promise<ConversationListing[]> {
  const { agentIds } = backend.reader;
  if (agentId !== null && agentIds !== null && !agentIds.includes(agentId)) {
    throw new LcmError("not_found", `Parameter "agentId": this server does not serve agent ${JSON.stringify(agentId)}; it serves ${agentIds.join(", ")}.`, { parameter: "agentId" });
  }
  const wanted = agentId !== null ? [agentId] : agentIds;
  // Delegated helpers' conversations are left out after listing, so ask for as many more as could be dropped.
  const lists = wanted === null
    ? [await backend.stores.operator.listConversations({ limit: limit * 2 })]
    : await Promise.all(wanted.map((agent) => backend.stores.operator.listConversations({ agentId: agent, limit: limit * 2 })));
  return lists.flat()
    .filter((listing) => !isExpansionSessionKey(listing.conversation.sessionKey))
    .sort((left, right) => right.conversation.updatedAt - left.conversation.updatedAt || right.conversation.conversationId - left.conversation.conversationId)
    .slice(0, limit);
}

/**
 * The conversation `conversationId` when the client may read it; else LcmError("not_found"), the same answer for an
 * id never stored and for another agent's (the recall rule: nothing is revealed about a history not served).
 */
export async function readableConversation(backend: McpBackend, conversationId: number, parameter: string): Promise<ConversationRecord> {
  const conversation = await backend.stores.store.getConversation(conversationId);
  const { agentIds } = backend.reader;
  if (!conversation || isExpansionSessionKey(conversation.sessionKey) || (agentIds !== null && !agentIds.includes(conversation.agentId))) {
    throw new LcmError(
      "not_found",
      `Parameter "${parameter}": conversation ${conversationId} does not exist or belongs to an agent this server does not serve; lcm_conversations lists them.`,
      { parameter },
    );
  }
  return conversation;
}

export async function lcmConversations(backend: McpBackend, rawParams: unknown): Promise<ToolResult> {
  const params = new ToolParams(rawParams, ["agentId", "limit"]);
  const agentId = params.string("agentId", { maxLength: 200 })?.trim() ?? null;
  const limit = params.integer("limit", { min: 1, max: MAX_CONVERSATION_LIMIT }) ?? DEFAULT_CONVERSATION_LIMIT;
  const listed = await servedConversations(backend, agentId, limit);
  const rows = listed.map((listing) => conversationRow(listing, backend.config.defaultTokenBudget));
  const summary = (count: number): { count: number; limit: number; shown?: number; note?: string; conversations: ConversationRow[] } =>
    count === rows.length
      ? { count: rows.length, limit, conversations: rows }
      : { count: rows.length, limit, shown: count, note: `${rows.length - count} more conversation(s) not shown, to fit the result limit of ${backend.reader.maxResultChars} characters: pass agentId or a smaller limit.`, conversations: rows.slice(0, count) };
  const shown = itemsThatFit(rows.length, backend.reader.maxResultChars, (count) => formatJson(summary(count)));
  const fitted = summary(shown);
  return textResult(formatJson(fitted), fitted);
}

export interface ServerStatus {
  databasePath: string;
  readOnly: boolean;
  /** The agents served ("all": every agent's conversations). */
  agents: readonly string[] | "all";
  maxResultChars: number;
  /** How lcm_expand_query answers: one model call, or the excerpts themselves. */
  expandQuery: "model" | "excerpts";
  served: { conversations: number; messages: number; messageTokens: number; summaries: number };
  conversation: ConversationStatus | null;
}

export async function lcmStatus(backend: McpBackend, rawParams: unknown): Promise<ToolResult> {
  const params = new ToolParams(rawParams, ["conversationId"]);
  const conversationId = params.integer("conversationId", { min: 1, max: Number.MAX_SAFE_INTEGER });
  const listed = await servedConversations(backend, null, EVERY_CONVERSATION);
  let conversation: ConversationStatus | null = null;
  if (conversationId !== undefined) {
    await readableConversation(backend, conversationId, "conversationId");
    conversation = (await backend.status.snapshot({ conversationId })).conversation;
  }
  const status: ServerStatus = {
    databasePath: backend.location,
    readOnly: backend.stores.readOnly,
    agents: backend.reader.agentIds ?? "all",
    maxResultChars: backend.reader.maxResultChars,
    expandQuery: backend.hasModel ? "model" : "excerpts",
    served: {
      conversations: listed.length,
      messages: sum(listed, (listing) => listing.conversation.messageCount),
      messageTokens: sum(listed, (listing) => listing.conversation.messageTokens),
      summaries: sum(listed, (listing) => listing.summaries),
    },
    conversation,
  };
  return textResult(formatJson(status as unknown as Record<string, unknown>), status);
}

function sum<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((total, item) => total + value(item), 0);
}
