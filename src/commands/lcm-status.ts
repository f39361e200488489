/**
 * The text of `/lcm status`: what is stored for this conversation, what the model sees against its budget,
 * the summary DAG by depth (fallback summaries called out), the last compaction and how long ago the last
 * message arrived — measured, so a stalled ingestion or a failing compaction is visible at a glance.
 */
import type { ConversationRecord } from "../records.js";
import type { DatabaseTotals, SummaryDepthStats } from "../store/status-store.js";

export interface StatusInput {
  conversation: ConversationRecord | null;
  summaries: SummaryDepthStats[];
  totals: DatabaseTotals;
  databasePath: string;
  defaultTokenBudget: number;
  now: number;
  /** Shown first when the database is served read-only: why, and the fix. */
  notice?: string;
}

export function renderStatus(input: StatusInput): string {
  const { conversation } = input;
  const lines: string[] = input.notice ? [`LCM is read-only: nothing new is being stored. ${input.notice}`] : [];
  if (!conversation) {
    lines.push("LCM status: nothing is stored for this session yet (it starts with the first message).");
  } else {
    const budget = conversation.lastTokenBudget ?? input.defaultTokenBudget;
    const budgetSource = conversation.lastTokenBudget === null ? " (default; no turn assembled yet)" : "";
    const share = budget > 0 ? Math.round((conversation.contextTokens / budget) * 100) : 0;
    lines.push(`LCM status · conversation ${conversation.conversationId} (agent ${conversation.agentId})`);
    lines.push(`Stored: ${count(conversation.messageCount)} messages · ${count(conversation.messageTokens)} tokens`);
    lines.push(
      `Context: ${count(conversation.contextItemCount)} items · ${count(conversation.contextTokens)} tokens ` +
        `(${count(conversation.contextRawTokens)} raw) · budget ${count(budget)}${budgetSource} · ${share}%` +
        (conversation.contextTokens > budget ? " (over budget: assembly sends the newest items that fit)" : ""),
    );
    lines.push(`Summaries: ${summaryLine(input.summaries)}`);
    lines.push(`Last compaction: ${compactionLine(conversation, input.now)}`);
    lines.push(`Last message stored: ${conversation.lastIngestAt === null ? "never" : ago(input.now - conversation.lastIngestAt)}`);
  }
  lines.push(
    `Database: ${count(input.totals.conversations)} conversations · ${count(input.totals.messages)} messages · ` +
      `${count(input.totals.messageTokens)} tokens · ${input.databasePath}` +
      (input.totals.awaitingIndex > 0 ? ` · ${count(input.totals.awaitingIndex)} messages waiting for the full-text index` : "") +
      (input.totals.awaitingTermDictionary > 0
        ? ` · ${count(input.totals.awaitingTermDictionary)} messages waiting for the term dictionary (maintenance adds them)`
        : ""),
  );
  return lines.join("\n");
}

function summaryLine(stats: SummaryDepthStats[]): string {
  if (stats.length === 0) return "none yet";
  const depths = stats.map((row) => `${count(row.count)} at depth ${row.depth} (${count(row.tokens)} tokens)`).join(", ");
  const fallback = stats.reduce((total, row) => total + row.fallbackCount, 0);
  return `${depths} · fallback summaries: ${count(fallback)}${fallback > 0 ? " (truncations; a repair can redo them)" : ""}`;
}

function compactionLine(conversation: ConversationRecord, now: number): string {
  const outcome = conversation.lastCompaction;
  if (!outcome) return "never";
  const change = outcome.compacted
    ? `${count(outcome.tokensBefore)} → ${count(outcome.tokensAfter)} tokens in ${outcome.passes} pass${outcome.passes === 1 ? "" : "es"}`
    : `nothing compacted${outcome.reason ? ` (${outcome.reason})` : ""}`;
  return `${ago(now - outcome.at)} (${outcome.trigger}): ${change}`;
}

function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

export function ago(millis: number): string {
  const seconds = Math.max(0, Math.round(millis / 1_000));
  if (seconds < 5) return "just now";
  if (seconds < 120) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} d ago`;
}
