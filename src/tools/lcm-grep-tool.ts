/**
 * lcm_grep: search the stored history (raw messages and summaries), or inside stored large files, by regex or
 * full text. The first recall step: cheap, no model call; hits point at the summaries that now cover them, or at
 * the file lines lcm_describe reads.
 */
import { Type } from "@sinclair/typebox";
import type { AgentTool, ToolContext } from "../host/openclaw-types.js";
import type { GrepMode, GrepScope } from "../retrieval/grep.js";
import { MAX_PATTERN_LENGTH } from "../retrieval/regex-policy.js";
import type { SearchSort } from "../store/retrieval-store.js";
import { callerOf, recallService, SCOPE_PARAMETERS, stringEnum, type RecallToolDeps } from "./recall-tool-deps.js";
import { ToolParams } from "./tool-params.js";
import { formatJson, runTool, textResult } from "./tool-result.js";

export const LCM_GREP = "lcm_grep";
export const DEFAULT_GREP_LIMIT = 50;
export const MAX_GREP_LIMIT = 200;
const MAX_FULL_TEXT_LENGTH = 1_000;

const MODES: readonly GrepMode[] = ["regex", "full_text"];
const SCOPES: readonly GrepScope[] = ["messages", "summaries", "both", "files"];
const SORTS: readonly SearchSort[] = ["recency", "relevance"];

const DESCRIPTION = [
  "Search this conversation's full stored history — raw messages and the summaries that replaced older turns —",
  "for words, identifiers, paths, commands, error messages or a pattern. Use it first whenever you need a detail that",
  "is not in your visible context; it is fast and makes no model call.",
  'mode "full_text": type words as you remember them, or a question. It finds words whatever their case and accents,',
  "other forms of a word (deployed finds deploy), parts of identifiers (ContextEngine finds LcmContextEngineFactory,",
  "user_id finds get_user_id_from_token, a path piece finds the path), the start of a hash or id (4f2a9c1), a number",
  "with or without a space before its unit (1234 ms / 1234ms), and Chinese, Japanese or Thai text. Best match first",
  '(default sort "relevance"): messages holding every word, as a phrase and close together, then newer; when no',
  'message holds every word it returns those holding the most telling ones and says matched: "some words".',
  '"quoted phrases" must match exactly, prefix* matches word starts, OR gives alternatives; sort "recency" lists',
  "newest first.",
  'mode "regex" (default): a case-insensitive JavaScript regular expression over the text as you saw it (tool-call',
  "arguments as written, not JSON-escaped), ALL history, newest first; use it for exact strings with punctuation",
  "and for patterns. Escape ( [ . * + ? $ for literal text. A search that runs out of its few-second budget says so (truncated).",
  "Each match has a snippet with the hit marked «like this», its ids and time. A message match's coveringSummaryId is",
  "the summary that now stands for it in your context: pass it to lcm_describe or lcm_expand_query for detail.",
  'scope "both" (default) searches messages and summaries; scope "files" searches instead INSIDE stored large files',
  "(the [LCM File: file_…] references: attachments and long tool output), line by line, newest file first; full_text",
  "there matches the words as one literal phrase. A file match gives fileId, lineNumber, column and a hint: call",
  "lcm_describe(id: fileId, startLine) to read the lines around it. Files that cannot be read are listed in unavailableFiles.",
  `Returns at most limit matches (default ${DEFAULT_GREP_LIMIT}, max ${MAX_GREP_LIMIT}). Searches the current conversation`,
  "unless conversationId or allConversations is given.",
].join(" ");

const PARAMETERS = Type.Object({
  pattern: Type.String({ description: "What to search for: a regex (mode regex) or words, an identifier, a phrase or a question (mode full_text).", minLength: 1 }),
  mode: Type.Optional(stringEnum(MODES, { description: 'How to match "pattern". Default "regex".', default: "regex" })),
  scope: Type.Optional(stringEnum(SCOPES, { description: 'Search raw messages, summaries, both (default), or the content of stored large files ("files").', default: "both" })),
  ...SCOPE_PARAMETERS,
  since: Type.Optional(Type.String({ description: 'Only history (or files stored) at or after this ISO 8601 time, e.g. "2026-02-19T00:00:00Z".' })),
  before: Type.Optional(Type.String({ description: "Only history (or files stored) before this ISO 8601 time." })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_GREP_LIMIT, description: `Most matches to return (1-${MAX_GREP_LIMIT}). Default ${DEFAULT_GREP_LIMIT}.` })),
  sort: Type.Optional(stringEnum(SORTS, { description: 'Order: "relevance" (best match first; the default for full_text) or "recency" (newest first; always for regex).' })),
});

const KNOWN = ["pattern", "mode", "scope", "conversationId", "allConversations", "since", "before", "limit", "sort"] as const;

export function createLcmGrepTool(deps: RecallToolDeps, context: ToolContext): AgentTool {
  return {
    name: LCM_GREP,
    label: "LCM grep",
    description: DESCRIPTION,
    parameters: PARAMETERS,
    catalogMode: "direct-only",
    execute: (_toolCallId, rawParams, signal) =>
      runTool(LCM_GREP, deps.logger, signal, async () => {
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
        const { result, searchedConversations, note } = await recallService(deps).grep(
          { kind: "agent", caller: callerOf(context) },
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
        return textResult(formatJson(summary), summary);
      }),
  };
}
