/**
 * lcm_expand: the low-level DAG walk, offered ONLY to the helper sub-agent of a delegated expansion. The
 * factory returns no tool for any other session (the main agent never sees it), and execute re-checks the
 * session's grant on every call: active, same agent, the summary inside the granted conversations, tokens left.
 * What a call returns is charged to the grant.
 */
import { Type } from "@sinclair/typebox";
import type { AgentTool, ToolContext } from "../host/openclaw-types.js";
import type { ExpandResult } from "../retrieval/summary-expansion.js";
import { isExpansionSessionKey } from "../store/grant-store.js";
import { callerOf, recallService, type RecallToolDeps } from "./recall-tool-deps.js";
import { ToolParams } from "./tool-params.js";
import { formatJson, runTool, textResult, type ToolResult } from "./tool-result.js";
import { characterLimit } from "../retrieval/window-share.js";
import type { RecallReader, RecallService, WalkInput } from "../services/recall-service.js";

export const LCM_EXPAND = "lcm_expand";
const MAX_DEPTH = 4;

const DESCRIPTION = [
  "Open a summary: returns the summaries it was condensed from and, for leaf summaries, the original messages,",
  "down to `depth` levels (default 1, max 4), within `tokenCap` tokens (default: all that is left of your budget).",
  "Use depth 1 to look, then expand the most relevant returned summaryIds further; set includeMessages to get exact",
  "wording. Everything returned counts against your expansion budget; `truncated` means the cap cut the result and",
  "`unexpandedSummaryIds` lists what was not opened.",
].join(" ");

/** lcm_expand's parameters (the MCP server offers the same). */
export const LCM_EXPAND_PARAMETERS = Type.Object({
  summaryId: Type.String({ description: "The summary to open (sum_ + 16 hex digits)." }),
  depth: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DEPTH, description: "Levels below the summary to read. Default 1." })),
  includeMessages: Type.Optional(Type.Boolean({ description: "Include the original messages under leaf summaries. Default true." })),
  tokenCap: Type.Optional(Type.Integer({ minimum: 1, description: "Most tokens to return from this call. Default: the rest of the budget." })),
});

const KNOWN = ["summaryId", "depth", "includeMessages", "tokenCap"] as const;

/** The tool for a delegated expansion's helper session; null for every other session. */
export function createLcmExpandTool(deps: RecallToolDeps, context: ToolContext): AgentTool | null {
  if (!isExpansionSessionKey(typeof context.sessionKey === "string" ? context.sessionKey : undefined)) return null;
  return {
    name: LCM_EXPAND,
    label: "LCM expand",
    description: DESCRIPTION,
    parameters: LCM_EXPAND_PARAMETERS,
    catalogMode: "direct-only",
    execute: (_toolCallId, rawParams, signal) =>
      runTool(LCM_EXPAND, deps.logger, signal, async () => {
        const { result, remainingTokens } = await recallService(deps).walkWithGrant(callerOf(context), readWalk(rawParams));
        return textResult(render(result, remainingTokens), { ...result, remainingTokens });
      }),
  };
}

/**
 * lcm_expand for an MCP client: the same parameters and result, without a grant (so no `remainingTokens`); the walk
 * reads at most `tokenCap` tokens, by default what the client's result limit holds.
 */
export async function lcmExpandForClient(service: RecallService, reader: RecallReader & { kind: "client" }, rawParams: unknown): Promise<ToolResult> {
  const input = readWalk(rawParams);
  const result = await service.walk(reader, { ...input, tokenCap: input.tokenCap ?? characterLimit(reader.maxResultChars).answerTokens });
  return textResult(render(result, undefined), result);
}

function readWalk(rawParams: unknown): WalkInput {
  const params = new ToolParams(rawParams, KNOWN);
  const summaryId = params.string("summaryId", { required: true, maxLength: 200 }).trim();
  const depth = params.integer("depth", { min: 1, max: MAX_DEPTH }) ?? 1;
  const includeMessages = params.boolean("includeMessages") ?? true;
  const requestedCap = params.integer("tokenCap", { min: 1, max: Number.MAX_SAFE_INTEGER });
  return { summaryId, depth, includeMessages, ...(requestedCap !== undefined ? { tokenCap: requestedCap } : {}) };
}

function render(result: ExpandResult, remainingTokens: number | undefined): string {
  const header = formatJson({
    summaryId: result.summaryId,
    itemCount: result.items.length,
    estimatedTokens: result.estimatedTokens,
    truncated: result.truncated,
    unexpandedSummaryIds: result.unexpandedSummaryIds,
    remainingTokens,
  });
  const items = result.items.map((item) =>
    item.type === "summary"
      ? `[summary ${item.summaryId} · ${item.kind} depth ${item.depth} · ${item.earliestAt} to ${item.latestAt}${item.parentSummaryIds.length > 0 ? ` · parents ${item.parentSummaryIds.join(", ")}` : ""}]\n${item.content}`
      : `[message ${item.messageId} · ${item.role} · ${item.createdAt} · seq ${item.seq} · under ${item.summaryId}]\n${item.content}`,
  );
  return [header, ...items].join("\n\n");
}
