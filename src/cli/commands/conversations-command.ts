/**
 * `lcm conversations`: every conversation, newest activity first: agent, session, messages and tokens stored,
 * context against the budget, summaries, last activity, and flags that ask for a look (over budget, fallback
 * summaries, the spend guard tripped, a helper or sub-agent session, archived or ended).
 */
import { type ConversationRow, conversationRow } from "../../services/status-service.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { count, table } from "../format.js";

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
  const rows = listed.map((listing) => conversationRow(listing, config.defaultTokenBudget));
  const text = rows.length === 0
    ? `No conversations stored${options.agent ? ` for agent ${options.agent}` : ""} in ${runtime.databaseLabel}.`
    : table(
        ["ID", "AGENT", "SESSION", "MESSAGES", "TOKENS", "CONTEXT", "BUDGET", "SUMMARIES", "LAST ACTIVITY", "FLAGS"],
        rows.map((row) => [
          String(row.conversationId), row.agentId, row.sessionKey ?? row.sessionId, count(row.messages), count(row.messageTokens),
          count(row.contextTokens), count(row.budgetTokens), `${count(row.summaries)}${row.maxDepth !== null ? ` (d${row.maxDepth})` : ""}`,
          row.lastActivityAt, row.flags.join(","),
        ]),
        new Set([0, 3, 4, 5, 6]),
      ) + (rows.length === options.limit ? `\n(first ${options.limit}; pass --limit for more)` : "");
  return { data: { databasePath: runtime.databaseLabel, count: rows.length, limit: options.limit, conversations: rows }, text };
}
