/**
 * lcm_grep: search the stored history (raw messages and summaries), or inside stored large files, by regex or
 * full text. The first recall step: cheap, no model call; hits point at the summaries that now cover them, or at
 * the file lines lcm_describe reads.
 */
import { Type } from "@sinclair/typebox";
import type { AgentTool, ToolContext } from "../host/openclaw-types.js";
import type { GrepMode, GrepScope } from "../search/grep.js";
import { MAX_PATTERN_LENGTH } from "../search/regex-policy.js";
import { describeLimit, itemsThatFit, type ResultLimit } from "../retrieval/window-share.js";
import type { RecallReader, RecallService } from "../services/recall-service.js";
import type { SearchSort } from "../store/retrieval-store.js";
import { agentRecallTool, SCOPE_PARAMETERS, stringEnum, type RecallToolDeps } from "./recall-tool-deps.js";
import { ToolParams } from "./tool-params.js";
import { formatJson, textResult, type ToolResult } from "./tool-result.js";

export const LCM_GREP = "lcm_grep";
export const DEFAULT_GREP_LIMIT = 50;
export const MAX_GREP_LIMIT = 200;
const MAX_FULL_TEXT_LENGTH = 1_000;

const MODES: readonly GrepMode[] = ["regex", "full_text"];
const SCOPES: readonly GrepScope[] = ["messages", "summaries", "both", "files"];
const SORTS: readonly SearchSort[] = ["recency", "relevance"];

/**
 * Every request carries the tool schemas, so they are written short: in an 8k window OpenClaw's own prompt leaves
 * about 1.5k tokens, and the three recall tools cost 7.6k characters (2.4k tokens by the host's measure) before this
 * was cut to 3.9k (1.2k).
 */
const DESCRIPTION = [
  "Search everything this conversation stored (raw messages, pastes and tool outputs stored aside, and the summaries",
  "that replaced older turns) for a detail not in your context: words, identifiers, paths, commands, errors. Fast,",
  "no model call; use it first.",
  'mode "regex" (default), for exact strings with punctuation and patterns: case-insensitive JavaScript regex over',
  "the text as you saw it, newest first; escape ( [ . * + ? $ for literal text.",
  'mode "full_text", for words as you remember them or a question: best match first; finds other word forms,',
  "identifier parts, id prefixes, numbers with or without a space before the unit, CJK text;",
  '"quoted phrase", prefix*, OR.',
  "A match's coveringSummaryId is the summary now standing for it: pass it to lcm_describe or lcm_expand_query;",
  "inFile says where in stored content ([LCM File: file_…]) it matched: read on with its `read` call.",
].join(" ");

/** lcm_grep's parameters (the MCP server offers the same). */
export const LCM_GREP_PARAMETERS = Type.Object({
  pattern: Type.String({ description: "A regex, or words (full_text).", minLength: 1 }),
  mode: Type.Optional(stringEnum(MODES, { description: 'Default "regex".', default: "regex" })),
  scope: Type.Optional(stringEnum(SCOPES, { description: 'Default "both": messages with their stored content, and summaries. "files": stored files only.', default: "both" })),
  ...SCOPE_PARAMETERS,
  since: Type.Optional(Type.String({ description: "ISO 8601 time: only history at or after it." })),
  before: Type.Optional(Type.String({ description: "ISO 8601 time: only history before it." })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_GREP_LIMIT, description: `Default ${DEFAULT_GREP_LIMIT}.` })),
  sort: Type.Optional(stringEnum(SORTS, { description: "full_text only; regex is always newest first." })),
});

const KNOWN = ["pattern", "mode", "scope", "conversationId", "allConversations", "since", "before", "limit", "sort"] as const;

export function createLcmGrepTool(deps: RecallToolDeps, context: ToolContext): AgentTool {
  return agentRecallTool(deps, context, { name: LCM_GREP, label: "LCM grep", description: DESCRIPTION, parameters: LCM_GREP_PARAMETERS }, lcmGrep);
}

/**
 * lcm_grep for `reader`: reads the arguments, searches, and renders the matches that fit the reader's limit. The agent
 * tool and the MCP server's lcm_grep both call it, so their parameters and results are the same.
 */
export async function lcmGrep(service: RecallService, reader: RecallReader, rawParams: unknown): Promise<ToolResult> {
  const params = new ToolParams(rawParams, KNOWN);
  const mode = params.choice("mode", MODES, "regex");
  const pattern = params.string("pattern", { required: true, maxLength: mode === "regex" ? MAX_PATTERN_LENGTH : MAX_FULL_TEXT_LENGTH });
  const request = {
    mode,
    scope: params.choice("scope", SCOPES, "both"),
    since: params.time("since"),
    before: params.time("before"),
    limit: params.integer("limit", { min: 1, max: MAX_GREP_LIMIT }) ?? DEFAULT_GREP_LIMIT,
    sort: params.choice("sort", SORTS, mode === "full_text" ? "relevance" : "recency"),
  };
  const conversationId = params.integer("conversationId", { min: 1, max: Number.MAX_SAFE_INTEGER });
  const allConversations = params.boolean("allConversations") ?? false;
  const { result, searchedConversations, note, limit } = await service.grep(
    reader,
    { ...request, pattern, ...(conversationId !== undefined ? { conversationId } : {}), allConversations },
  );
  const summary = {
    matchCount: result.matches.length,
    mode: result.mode,
    scope: result.scope,
    sort: result.sort,
    searchedConversations,
    limitReached: result.limitReached,
    truncated: result.truncated,
    ...(result.strategy ? { strategy: result.strategy } : {}),
    ...(result.matched ? { matched: result.matched } : {}),
    ...(result.filesInScope !== undefined ? { filesInScope: result.filesInScope, searchedFiles: result.searchedFiles } : {}),
    ...(result.unavailableFiles?.length ? { unavailableFiles: result.unavailableFiles } : {}),
    ...(note ? { note } : {}),
    matches: result.matches,
  };
  return textResult(...fittedToLimit(summary, limit));
}

/**
 * The result as text and details, with as many matches (in their order) as fit the reader's limit: an agent's model
 * window or a client's characters (retrieval/window-share.ts); when some are left out, `shown` says how many are listed
 * and the note how to narrow the search.
 */
function fittedToLimit<T extends { matchCount: number; note?: string; matches: unknown[] }>(summary: T, limit: ResultLimit | null): [string, unknown] {
  const maxChars = limit?.maxChars ?? Number.POSITIVE_INFINITY;
  const withMatches = (count: number) => {
    if (count === summary.matches.length || limit === null) return summary;
    const omitted = `${summary.matches.length - count} more match(es) not shown, to fit ${describeLimit(limit)}: ` +
      "narrow the pattern, add since/before, or search one conversation.";
    return { ...summary, shown: count, note: summary.note ? `${summary.note} ${omitted}` : omitted, matches: summary.matches.slice(0, count) };
  };
  const shown = itemsThatFit(summary.matches.length, maxChars, (count) => formatJson(withMatches(count)));
  const fitted = withMatches(shown);
  return [formatJson(fitted), fitted];
}
