/**
 * `lcm grep` and `lcm expand`: the agent's recall tools for the operator, through the same RecallService and
 * engines (lcm_grep, lcm_expand, lcm_expand_query; `lcm describe` is describe-command.ts). The operator may read every
 * conversation: all of them by default, one with --conversation, one agent's with --agent. grep indexes messages
 * still waiting for the full-text index first, as the tool does (it writes the index only, and only to a writable
 * LCM file); describe and expand only read.
 */
import type { CompletionModel } from "../../contracts.js";
import type { ExpandQueryResult } from "../../retrieval/delegated-expansion.js";
import type { GrepMode, GrepResult, GrepScope } from "../../search/grep.js";
import { createRecallServices } from "../../retrieval/recall-services.js";
import type { ExpandResult } from "../../retrieval/summary-expansion.js";
import { RecallService, type RecallReader } from "../../services/recall-service.js";
import type { SearchSort } from "../../store/retrieval-store.js";
import type { CliRuntime, CliStores, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { count, counted, preview } from "../format.js";

export interface GrepOptions {
  mode: GrepMode;
  scope: GrepScope;
  conversation?: number;
  agent?: string;
  since?: string;
  before?: string;
  limit: number;
  sort: SearchSort;
}

export type GrepOutput = Omit<GrepResult, "matches"> & { pattern: string; searchedConversations: number; matchCount: number; matches: GrepResult["matches"] };

export async function grepCommand(runtime: CliRuntime, pattern: string, options: GrepOptions): Promise<CommandOutput<GrepOutput>> {
  const { service, reader } = recallFor(runtime, runtime.open("prefer-write"), options.agent);
  const outcome = await service.grep(reader, {
    pattern, mode: options.mode, scope: options.scope, limit: options.limit, sort: options.sort,
    since: time(options.since, "--since"), before: time(options.before, "--before"),
    ...(options.conversation !== undefined ? { conversationId: options.conversation } : {}),
  });
  const { result } = outcome;
  const data: GrepOutput = { ...result, note: outcome.note, pattern, searchedConversations: outcome.searchedConversations, matchCount: result.matches.length };
  const lines = [
    `${count(result.matches.length)} match${result.matches.length === 1 ? "" : "es"} for ${JSON.stringify(pattern)} (${result.mode}, ${result.scope}) ` +
      `in ${counted(outcome.searchedConversations, "conversation")}${result.limitReached ? `; limit ${options.limit} reached` : ""}${result.truncated ? "; search stopped early (time budget)" : ""}`,
    ...result.matches.map((match) => {
      switch (match.type) {
        case "message":
          return `[conversation ${match.conversationId} · message ${match.id} · seq ${match.seq} · ${match.role} · ${match.createdAt}` +
            `${match.coveringSummaryId ? ` · under ${match.coveringSummaryId}` : ""}` +
            `${match.inFile ? ` · in ${match.inFile.fileId} line ${match.inFile.line}` : ""}` +
            `${match.alsoIn?.length ? ` · also in ${match.alsoIn.join(", ")}` : ""}] ${preview(match.snippet, 200)}`;
        case "summary":
          return `[conversation ${match.conversationId} · ${match.summaryId} · ${match.kind} d${match.depth} · ${match.latestAt}] ${preview(match.snippet, 200)}`;
        default:
          return `[file ${match.fileId} · line ${match.lineNumber}] ${preview(match.snippet, 200)}`;
      }
    }),
    ...(outcome.note ? [`Note: ${outcome.note}`] : []),
  ];
  return { data, text: lines.join("\n") };
}

export interface ExpandOptions {
  depth: number;
  messages: boolean;
  tokenCap?: number;
  prompt?: string;
  maxTokens: number;
}

export type ExpandOutput = ({ kind: "walk" } & ExpandResult) | ({ kind: "query" } & ExpandQueryResult);

export async function expandCommand(runtime: CliRuntime, summaryId: string, options: ExpandOptions): Promise<CommandOutput<ExpandOutput>> {
  // A question needs the full-text index of the messages under the summary (it may index what is waiting).
  const stores = runtime.open(options.prompt !== undefined ? "prefer-write" : "read");
  const { service } = recallFor(runtime, stores, undefined, runtime.environment.model);
  const reader = { kind: "operator" as const };
  if (options.prompt !== undefined) {
    const result = await service.expandQuery(reader, { prompt: options.prompt, query: null, summaryIds: [summaryId], maxTokens: options.maxTokens });
    const { answer, ...metadata } = result;
    return { data: { kind: "query", ...result }, text: `${answer}\n\n${JSON.stringify(metadata, null, 2)}` };
  }
  const result = await service.walk(reader, { summaryId, depth: options.depth, includeMessages: options.messages, ...(options.tokenCap !== undefined ? { tokenCap: options.tokenCap } : {}) });
  const lines = [
    `${result.summaryId}: ${count(result.items.length)} items, ${count(result.estimatedTokens)} tokens${result.truncated ? " (cut at the token cap)" : ""}` +
      (result.unexpandedSummaryIds.length > 0 ? `; not opened: ${result.unexpandedSummaryIds.join(", ")}` : ""),
    ...result.items.map((item) =>
      item.type === "summary"
        ? `\n[summary ${item.summaryId} · ${item.kind} d${item.depth} · ${item.earliestAt} → ${item.latestAt}]\n${item.content}`
        : `\n[message ${item.messageId} · ${item.role} · seq ${item.seq} · ${item.createdAt} · under ${item.summaryId}]\n${item.content}`),
  ];
  return { data: { kind: "walk", ...result }, text: lines.join("\n") };
}

/** The recall service on a command's stores, reading as the operator (every conversation, or one agent's). */
export function recallFor(runtime: CliRuntime, stores: CliStores, agentId?: string, model?: CompletionModel): { service: RecallService; reader: RecallReader } {
  const { config } = runtime.settings;
  const services = createRecallServices({
    store: stores.store, retrievalStore: stores.retrievalStore, grants: stores.grantStore, config, tokens: runtime.tokens,
    clock: runtime.clock, logger: runtime.logger,
    ...(model ? { llm: model } : {}),
  });
  const service = new RecallService({ recall: services, conversations: { listRecallConversationIds: (agent) => stores.retrievalStore.listRecallConversationIds(agent), getConversation: (id) => stores.store.getConversation(id) }, clock: runtime.clock });
  return { service, reader: { kind: "operator", ...(agentId ? { agentId } : {}) } };
}

function time(value: string | undefined, option: string): number | null {
  if (value === undefined) return null;
  const millis = /^\d{4}-\d{2}-\d{2}/.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN;
  if (Number.isNaN(millis)) throw new CliError(EXIT.usage, `${option} must be an ISO 8601 time such as 2026-02-19 or 2026-02-19T08:00:00Z, got ${JSON.stringify(value)}.`);
  return millis;
}
