/**
 * `lcm conversations`: every conversation, newest activity first: agent, session, messages and tokens stored,
 * context against the budget, summaries, last activity, and flags that ask for a look (over budget, fallback
 * summaries, the spend guard tripped, a helper or sub-agent session, archived or ended).
 */
import { isSubagentSessionKey } from "../../sessions/session-identity.js";
import { isExpansionSessionKey } from "../../store/grant-store.js";
import type { ConversationListing } from "../../store/operator-store.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { count, isoOrNever, table } from "../format.js";

export interface ConversationRow {
  conversationId: number;
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  messages: number;
  messageTokens: number;
  contextItems: number;
  contextTokens: number;
  budgetTokens: number;
  summaries: number;
  fallbackSummaries: number;
  maxDepth: number | null;
  lastActivityAt: string;
  lastMessageAt: string | null;
  lastCompaction: { at: string; trigger: string; compacted: boolean } | null;
  flags: string[];
}

export interface ConversationsOutput {
  databasePath: string;
  count: number;
  limit: number;
  conversations: ConversationRow[];
}

export async function conversationsCommand(runtime: CliRuntime, options: { agent?: string; limit: number }): Promise<CommandOutput<ConversationsOutput>> {
  const { config } = runtime.settings;
  const stores = runtime.open("read");
  const listed = await stores.operator.listConversations({ ...(options.agent ? { agentId: options.agent } : {}), limit: options.limit });
  const rows = listed.map((listing) => rowOf(listing, config.defaultTokenBudget));
  const text = rows.length === 0
    ? `No conversations stored${options.agent ? ` for agent ${options.agent}` : ""} in ${config.databasePath}.`
    : table(
        ["ID", "AGENT", "SESSION", "MESSAGES", "TOKENS", "CONTEXT", "BUDGET", "SUMMARIES", "LAST ACTIVITY", "FLAGS"],
        rows.map((row) => [
          String(row.conversationId), row.agentId, row.sessionKey ?? row.sessionId, count(row.messages), count(row.messageTokens),
          count(row.contextTokens), count(row.budgetTokens), `${count(row.summaries)}${row.maxDepth !== null ? ` (d${row.maxDepth})` : ""}`,
          row.lastActivityAt, row.flags.join(","),
        ]),
        new Set([0, 3, 4, 5, 6]),
      ) + (rows.length === options.limit ? `\n(first ${options.limit}; pass --limit for more)` : "");
  return { data: { databasePath: config.databasePath, count: rows.length, limit: options.limit, conversations: rows }, text };
}

export function rowOf(listing: ConversationListing, defaultTokenBudget: number): ConversationRow {
  const conversation = listing.conversation;
  const budgetTokens = conversation.lastTokenBudget ?? defaultTokenBudget;
  const lifecycle = conversation as unknown as { archivedAt?: number | null; endedAt?: number | null };
  const flags = [
    conversation.contextTokens > budgetTokens ? "over-budget" : null,
    conversation.lastTokenBudget === null ? "no-budget-yet" : null,
    listing.fallbackSummaries > 0 ? "fallback-summaries" : null,
    conversation.lastCompaction?.spendGuardDiverted ? "spend-guard" : null,
    isExpansionSessionKey(conversation.sessionKey) ? "expansion-helper" : isSubagentSessionKey(conversation.sessionKey ?? undefined) ? "subagent" : null,
    typeof lifecycle.archivedAt === "number" ? "archived" : null,
    typeof lifecycle.endedAt === "number" ? "ended" : null,
  ].filter((flag): flag is string => flag !== null);
  return {
    conversationId: conversation.conversationId,
    agentId: conversation.agentId,
    sessionId: conversation.sessionId,
    sessionKey: conversation.sessionKey,
    messages: conversation.messageCount,
    messageTokens: conversation.messageTokens,
    contextItems: conversation.contextItemCount,
    contextTokens: conversation.contextTokens,
    budgetTokens,
    summaries: listing.summaries,
    fallbackSummaries: listing.fallbackSummaries,
    maxDepth: listing.maxDepth,
    lastActivityAt: isoOrNever(conversation.updatedAt),
    lastMessageAt: conversation.lastIngestAt === null ? null : isoOrNever(conversation.lastIngestAt),
    lastCompaction: conversation.lastCompaction
      ? { at: isoOrNever(conversation.lastCompaction.at), trigger: conversation.lastCompaction.trigger, compacted: conversation.lastCompaction.compacted }
      : null,
    flags,
  };
}
