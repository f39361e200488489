/**
 * The tools `lcm mcp` offers. The four recall tools take the agent tools' own parameter schemas and run their own
 * bodies (src/tools/: lcmGrep, lcmDescribe, lcmExpandForClient, lcmExpandQuery) as a client reader, so their
 * parameters and results are the agent's; only the descriptions differ, because an outside agent is in no
 * conversation: it reads every conversation of the agents the server serves unless it names one. lcm_conversations
 * and lcm_status list what is served.
 */
import type { TObject } from "@sinclair/typebox";
import { LCM_DESCRIBE, LCM_DESCRIBE_PARAMETERS, lcmDescribe } from "../tools/lcm-describe-tool.js";
import { LCM_EXPAND_QUERY, LCM_EXPAND_QUERY_PARAMETERS, lcmExpandQuery } from "../tools/lcm-expand-query-tool.js";
import { LCM_EXPAND, LCM_EXPAND_PARAMETERS, lcmExpandForClient } from "../tools/lcm-expand-tool.js";
import { LCM_GREP, LCM_GREP_PARAMETERS, lcmGrep } from "../tools/lcm-grep-tool.js";
import type { ToolResult } from "../tools/tool-result.js";
import type { McpBackend } from "./mcp-backend.js";
import { LCM_CONVERSATIONS_PARAMETERS, LCM_STATUS_PARAMETERS, lcmConversations, lcmStatus } from "./mcp-overview-tools.js";

export interface McpTool {
  name: string;
  title: string;
  /** Written for the model that calls it. */
  description: string;
  inputSchema: TObject;
  run(backend: McpBackend, args: unknown, signal: AbortSignal | undefined): Promise<ToolResult>;
}

const SCOPE = "every conversation of the agents this server serves (conversationId: one of them)";

export const MCP_TOOLS: readonly McpTool[] = [
  {
    name: LCM_GREP,
    title: "Search OpenClaw history",
    description: [
      `Search the stored OpenClaw history (raw messages, pastes and tool outputs stored aside, and the summaries that replaced`,
      `older turns) of ${SCOPE} for words, identifiers, paths, commands, errors, decisions. Fast, no model call; use it first.`,
      'mode "regex" (default): case-insensitive JavaScript regex, newest first; escape ( [ . * + ? $ for literal text.',
      'mode "full_text": words as remembered or a question, best match first; finds other word forms, identifier parts,',
      'id prefixes, CJK text; "quoted phrase", prefix*, OR. A message match names coveringSummaryId (the summary that now',
      "stands for it), alsoIn (summaries repeating it) and inFile (where in stored content it matched, and the lcm_describe call that reads on).",
    ].join(" "),
    inputSchema: LCM_GREP_PARAMETERS,
    run: (backend, args) => lcmGrep(backend.recall, backend.reader, args),
  },
  {
    name: LCM_DESCRIBE,
    title: "Read a summary or stored file",
    description: [
      "Read one summary (sum_…) or stored large file (file_…) by id, exactly, with no model call. A summary: its full text,",
      "time range, the summaries and message ids under it. A file: its name, size, exploration summary and one page of",
      "content, by lines (startLine, maxLines) or bytes (offset, maxBytes); the result says where the next page starts.",
    ].join(" "),
    inputSchema: LCM_DESCRIBE_PARAMETERS,
    run: (backend, args) => lcmDescribe(backend.recall, backend.reader, args),
  },
  {
    name: LCM_EXPAND,
    title: "Open a summary down to its messages",
    description: [
      "Open a summary: the summaries it was condensed from and, for leaf summaries, the original messages, down to `depth`",
      "levels (default 1, max 4), within `tokenCap` tokens (default: what one result may hold). `truncated` means the cap cut",
      "the result; `unexpandedSummaryIds` lists what was not opened (open those next).",
    ].join(" "),
    inputSchema: LCM_EXPAND_PARAMETERS,
    run: (backend, args) => lcmExpandForClient(backend.recall, backend.reader, args),
  },
  {
    name: LCM_EXPAND_QUERY,
    title: "Ask OpenClaw history a question",
    description: [
      "Answer one question from the original messages under the summaries that match it, with the summary ids used.",
      "Use it when a summary mentions what you need but not the exact detail. Give prompt and either query (words that",
      `find the summaries) or summaryIds. Reads ${SCOPE}. With a model configured it answers in one model call, else it`,
      'returns the best excerpts to read (mode "excerpts").',
    ].join(" "),
    inputSchema: LCM_EXPAND_QUERY_PARAMETERS,
    run: (backend, args, signal) => lcmExpandQuery(backend.recall, backend.reader, args, signal),
  },
  {
    name: "lcm_conversations",
    title: "List OpenClaw conversations",
    description: [
      "List the conversations this server serves, newest activity first: id, agent, session, messages and tokens stored,",
      "summaries, last activity. Pass an id as conversationId to the other tools to read one conversation only.",
    ].join(" "),
    inputSchema: LCM_CONVERSATIONS_PARAMETERS,
    run: (backend, args) => lcmConversations(backend, args),
  },
  {
    name: "lcm_status",
    title: "LCM server status",
    description: [
      "What this server serves (agents, conversations, messages, whether lcm_expand_query has a model) and, with",
      "conversationId, that conversation's status: stored messages, context against its budget, summaries per depth, last compaction.",
    ].join(" "),
    inputSchema: LCM_STATUS_PARAMETERS,
    run: (backend, args) => lcmStatus(backend, args),
  },
];
