/**
 * lcm_describe: everything stored about one summary (`sum_…`) or one large file (`file_…`). Cheap and exact: no
 * model call. The second recall step, after lcm_grep or when a <summary id=…> in context looks relevant.
 */
import { Type } from "@sinclair/typebox";
import { invalidParameter } from "../errors.js";
import type { AgentTool, ToolContext } from "../host/openclaw-types.js";
import { DEFAULT_PAGE_BYTES, DEFAULT_PAGE_LINES, MAX_PAGE_BYTES, MAX_PAGE_LINES } from "../retrieval/file-content.js";
import type { FilePage } from "../retrieval/describe.js";
import { agentRecallTool, SCOPE_PARAMETERS, type RecallToolDeps } from "./recall-tool-deps.js";
import { ToolParams } from "./tool-params.js";
import { formatJson, textResult, type ToolResult } from "./tool-result.js";
import type { RecallReader, RecallService } from "../services/recall-service.js";

export const LCM_DESCRIBE = "lcm_describe";

const DESCRIPTION = [
  "Read one summary (sum_…) or stored large file (file_…) by id, exactly, with no model call. A summary: its full",
  "text, time range, the summaries and message ids under it. A file: its name, size, exploration summary and one",
  `page of content, by lines (startLine, maxLines; default ${DEFAULT_PAGE_LINES}) or bytes (offset, maxBytes); the result says`,
  "where the next page starts. For the original wording under a summary use lcm_expand_query.",
].join(" ");

/** lcm_describe's parameters (the MCP server offers the same). */
export const LCM_DESCRIBE_PARAMETERS = Type.Object({
  id: Type.String({ description: "sum_… or file_…" }),
  ...SCOPE_PARAMETERS,
  startLine: Type.Optional(Type.Integer({ minimum: 1, description: "Files: first line, 1-based." })),
  maxLines: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_LINES })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: "Files: first byte." })),
  maxBytes: Type.Optional(Type.Integer({ minimum: 1_000, maximum: MAX_PAGE_BYTES })),
});

const KNOWN = ["id", "conversationId", "allConversations", "startLine", "maxLines", "offset", "maxBytes"] as const;

export function createLcmDescribeTool(deps: RecallToolDeps, context: ToolContext): AgentTool {
  return agentRecallTool(deps, context, { name: LCM_DESCRIBE, label: "LCM describe", description: DESCRIPTION, parameters: LCM_DESCRIBE_PARAMETERS }, lcmDescribe);
}

/** lcm_describe for `reader` (the agent tool, the MCP server's tool and its summary resources). */
export async function lcmDescribe(service: RecallService, reader: RecallReader, rawParams: unknown): Promise<ToolResult> {
  const params = new ToolParams(rawParams, KNOWN);
  const id = params.string("id", { required: true, maxLength: 200 }).trim();
  const conversationId = params.integer("conversationId", { min: 1, max: Number.MAX_SAFE_INTEGER });
  const allConversations = params.boolean("allConversations") ?? false;
  const offset = params.integer("offset", { min: 0, max: Number.MAX_SAFE_INTEGER });
  const maxBytes = params.integer("maxBytes", { min: 1_000, max: MAX_PAGE_BYTES });
  const startLine = params.integer("startLine", { min: 1, max: Number.MAX_SAFE_INTEGER });
  const maxLines = params.integer("maxLines", { min: 1, max: MAX_PAGE_LINES });
  const byteParameter = offset !== undefined ? "offset" : maxBytes !== undefined ? "maxBytes" : null;
  const lineParameter = startLine !== undefined ? "startLine" : maxLines !== undefined ? "maxLines" : null;
  if (byteParameter && lineParameter) {
    throw invalidParameter(lineParameter, `cannot be combined with "${byteParameter}": page a file either by lines (startLine, maxLines) or by bytes (offset, maxBytes)`);
  }
  const description = await service.describe(
    reader, id,
    { ...(conversationId !== undefined ? { conversationId } : {}), allConversations },
    {
      ...(offset !== undefined ? { offset } : {}),
      ...(maxBytes !== undefined ? { maxBytes } : {}),
      ...(startLine !== undefined ? { startLine } : {}),
      ...(maxLines !== undefined ? { maxLines } : {}),
    },
  );
  if (description.type === "summary") {
    const { content, ...metadata } = description;
    return textResult(`${formatJson(metadata)}\n\ncontent:\n${content}`, description);
  }
  const { explorationSummary, content, ...metadata } = description;
  const text = [
    formatJson({ ...metadata, contentPage: content && pageFields(content) }),
    `\nexplorationSummary:\n${explorationSummary}`,
    ...(content ? [`\ncontent (${pageLabel(content)}):\n${content.text}`] : []),
  ].join("\n");
  return textResult(text, description);
}

/** The page's position, without its text (shown once, below the metadata). */
function pageFields(page: FilePage): Record<string, unknown> {
  const { text: _text, ...fields } = page;
  return fields;
}

function pageLabel(page: FilePage): string {
  return page.unit === "bytes"
    ? `bytes ${page.offset}-${page.nextOffset ?? page.totalBytes}`
    : `lines ${page.startLine}-${page.endLine} of ${page.totalLines}`;
}
