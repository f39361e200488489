/**
 * The recall tools in registration order, each built per session by the host's tool factory. lcm_expand exists
 * only for delegated-expansion helper sessions and lcm_expand_query only outside them.
 */
import type { AgentTool, ToolContext } from "../host/openclaw-types.js";
import { createLcmDescribeTool, LCM_DESCRIBE } from "./lcm-describe-tool.js";
import { createLcmExpandQueryTool, LCM_EXPAND_QUERY } from "./lcm-expand-query-tool.js";
import { createLcmExpandTool, LCM_EXPAND } from "./lcm-expand-tool.js";
import { createLcmGrepTool, LCM_GREP } from "./lcm-grep-tool.js";
import type { RecallToolDeps } from "./recall-tool-deps.js";

export interface RecallToolEntry {
  name: string;
  create: (deps: RecallToolDeps, context: ToolContext) => AgentTool | null;
}

export const RECALL_TOOLS: readonly RecallToolEntry[] = [
  { name: LCM_GREP, create: createLcmGrepTool },
  { name: LCM_DESCRIBE, create: createLcmDescribeTool },
  { name: LCM_EXPAND_QUERY, create: createLcmExpandQueryTool },
  { name: LCM_EXPAND, create: createLcmExpandTool },
];
