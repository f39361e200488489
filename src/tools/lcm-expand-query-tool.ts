/**
 * lcm_expand_query: deep recall for the main agent. Finds the summaries to start from (a query, or given ids),
 * then lets a bounded helper read the original detail under them and answer one question. Not offered to a
 * delegated helper itself: expansions never nest.
 */
import { Type } from "@sinclair/typebox";
import { LcmError } from "../errors.js";
import type { AgentTool, ToolContext } from "../host/openclaw-types.js";
import type { ExpandQueryResult } from "../retrieval/delegated-expansion.js";
import { isExpansionSessionKey } from "../store/grant-store.js";
import { callerOf, recallService, SCOPE_PARAMETERS, type RecallToolDeps } from "./recall-tool-deps.js";
import { ToolParams } from "./tool-params.js";
import { formatJson, runTool, textResult, type ToolResult } from "./tool-result.js";
import type { RecallReader, RecallService } from "../services/recall-service.js";

export const LCM_EXPAND_QUERY = "lcm_expand_query";
export const DEFAULT_ANSWER_TOKENS = 2_000;
const MAX_ANSWER_TOKENS = 8_000;
const MAX_SUMMARY_IDS = 10;

function description(deps: RecallToolDeps): string {
  return [
    "Answer one question from the compacted part of this conversation: a helper reads the original messages under",
    "the relevant summaries and answers with the ids it used. Use it when a summary mentions what you need but not",
    "the exact detail (commands, values, paths, errors, reasons). Give prompt and either query (words that find the",
    `summaries) or summaryIds. Takes up to ${Math.round(deps.config.expansionTimeoutMs / 1_000)} s; for a keyword lookup use lcm_grep.`,
  ].join(" ");
}

/** lcm_expand_query's parameters (the MCP server offers the same). */
export const LCM_EXPAND_QUERY_PARAMETERS = Type.Object({
  prompt: Type.String({ description: "The question.", minLength: 1 }),
  query: Type.Optional(Type.String()),
  summaryIds: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_SUMMARY_IDS })),
  maxTokens: Type.Optional(Type.Integer({ minimum: 100, maximum: MAX_ANSWER_TOKENS, description: `Answer length cap. Default ${DEFAULT_ANSWER_TOKENS}.` })),
  ...SCOPE_PARAMETERS,
});

const KNOWN = ["prompt", "query", "summaryIds", "maxTokens", "conversationId", "allConversations"] as const;

/** The tool for ordinary sessions; null inside a delegated expansion's helper session. */
export function createLcmExpandQueryTool(deps: RecallToolDeps, context: ToolContext): AgentTool | null {
  if (isExpansionSessionKey(typeof context.sessionKey === "string" ? context.sessionKey : undefined)) return null;
  return {
    name: LCM_EXPAND_QUERY,
    label: "LCM expand query",
    description: description(deps),
    parameters: LCM_EXPAND_QUERY_PARAMETERS,
    catalogMode: "direct-only",
    execute: (_toolCallId, rawParams, signal) =>
      runTool(LCM_EXPAND_QUERY, deps.logger, signal, async () => {
        const caller = callerOf(context);
        if (isExpansionSessionKey(caller.sessionKey)) {
          throw new LcmError("forbidden", "A delegated expansion cannot start another one; use lcm_expand on the summaries you were given.");
        }
        return lcmExpandQuery(recallService(deps), { kind: "agent", caller }, rawParams, signal);
      }),
  };
}

/** lcm_expand_query for `reader` (the agent tool and the MCP server's tool). */
export async function lcmExpandQuery(service: RecallService, reader: RecallReader, rawParams: unknown, signal?: AbortSignal): Promise<ToolResult> {
  const params = new ToolParams(rawParams, KNOWN);
  const prompt = params.string("prompt", { required: true, maxLength: 4_000 });
  const query = params.string("query", { maxLength: 1_000 }) ?? null;
  const summaryIds = params.stringList("summaryIds", { maxItems: MAX_SUMMARY_IDS, maxLength: 200 });
  const maxTokens = params.integer("maxTokens", { min: 100, max: MAX_ANSWER_TOKENS }) ?? DEFAULT_ANSWER_TOKENS;
  const conversationId = params.integer("conversationId", { min: 1, max: Number.MAX_SAFE_INTEGER });
  const allConversations = params.boolean("allConversations") ?? false;
  const result = await service.expandQuery(reader, {
    prompt, query, summaryIds, maxTokens, ...(conversationId !== undefined ? { conversationId } : {}), allConversations,
    ...(signal ? { signal } : {}),
  });
  return render(result);
}

function render(result: ExpandQueryResult) {
  const { answer, ...metadata } = result;
  return textResult(`${answer}\n\n${formatJson(metadata)}`, result);
}
