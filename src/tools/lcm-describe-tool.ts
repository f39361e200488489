/**
 * lcm_describe: everything stored about one summary (`sum_…`) or one large file (`file_…`). Cheap and exact: no
 * model call. The second recall step, after lcm_grep or when a <summary id=…> in context looks relevant.
 */
import { Type } from "@sinclair/typebox";
import type { AgentTool, ToolContext } from "../host/openclaw-types.js";
import { MAX_PAGE_BYTES, DEFAULT_PAGE_BYTES } from "../retrieval/file-content.js";
import { notFound } from "../retrieval/recall-access.js";
import { callerOf, SCOPE_PARAMETERS, type RecallToolDeps } from "./recall-tool-deps.js";
import { ToolParams } from "./tool-params.js";
import { formatJson, runTool, textResult } from "./tool-result.js";

export const LCM_DESCRIBE = "lcm_describe";

const DESCRIPTION = [
  "Read one summary or stored large file by id. For a summary (sum_…): its full text, kind and depth, time range,",
  "token counts, the summaries it condensed (parentSummaryIds), the summary that condensed it (childSummaryIds), its",
  "source message ids and seq range, referenced file ids, and whether it is in your context. For a file (file_…): name,",
  `type, size, the exploration summary and a page of the stored content (${DEFAULT_PAGE_BYTES} bytes; pass offset to`,
  "page on). Fast, no model call. Use it after lcm_grep or on a <summary id=…> from your context; when you need the",
  "original wording under a summary, use lcm_expand_query. Reads the current conversation unless conversationId or",
  "allConversations is given.",
].join(" ");

const PARAMETERS = Type.Object({
  id: Type.String({ description: "A summary id (sum_ + 16 hex digits) or a file id (file_ + 16 hex digits)." }),
  ...SCOPE_PARAMETERS,
  offset: Type.Optional(Type.Integer({ minimum: 0, description: "Files only: byte offset of the content page (the nextOffset of the previous page). Default 0." })),
  maxBytes: Type.Optional(Type.Integer({ minimum: 1_000, maximum: MAX_PAGE_BYTES, description: `Files only: page size in bytes (1000-${MAX_PAGE_BYTES}). Default ${DEFAULT_PAGE_BYTES}.` })),
});

const KNOWN = ["id", "conversationId", "allConversations", "offset", "maxBytes"] as const;

export function createLcmDescribeTool(deps: RecallToolDeps, context: ToolContext): AgentTool {
  return {
    name: LCM_DESCRIBE,
    label: "LCM describe",
    description: DESCRIPTION,
    parameters: PARAMETERS,
    catalogMode: "direct-only",
    execute: (_toolCallId, rawParams, signal) =>
      runTool(LCM_DESCRIBE, deps.logger, signal, async () => {
        const params = new ToolParams(rawParams, KNOWN);
        const id = params.string("id", { required: true, maxLength: 200 }).trim();
        const conversationId = params.integer("conversationId", { min: 1, max: Number.MAX_SAFE_INTEGER });
        const allConversations = params.boolean("allConversations") ?? false;
        const offset = params.integer("offset", { min: 0, max: Number.MAX_SAFE_INTEGER });
        const maxBytes = params.integer("maxBytes", { min: 1_000, max: MAX_PAGE_BYTES });
        const services = deps.services();
        const caller = callerOf(context);
        const scope = await services.access.resolve(caller, {
          ...(conversationId !== undefined ? { conversationId } : {}),
          allConversations,
        });
        const located = await services.retrieval.locate(id, "id");
        if (!located) throw notFound(id, "id");
        await services.access.authorize(caller, scope, located.conversationId, id, "id");
        const description = await services.retrieval.describe(located, {
          ...(offset !== undefined ? { offset } : {}),
          ...(maxBytes !== undefined ? { maxBytes } : {}),
        });
        if (description.type === "summary") {
          const { content, ...metadata } = description;
          return textResult(`${formatJson(metadata)}\n\ncontent:\n${content}`, description);
        }
        const { explorationSummary, content, ...metadata } = description;
        const page = content ? { offset: content.offset, nextOffset: content.nextOffset, totalBytes: content.totalBytes } : null;
        const text = [
          formatJson({ ...metadata, contentPage: page }),
          `\nexplorationSummary:\n${explorationSummary}`,
          ...(content ? [`\ncontent (bytes ${content.offset}-${content.nextOffset ?? content.totalBytes}):\n${content.text}`] : []),
        ].join("\n");
        return textResult(text, description);
      }),
  };
}
