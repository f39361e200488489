/**
 * Search phases through the registered `lcm_grep` tool's execute, as the model calls it: full-text (a rare
 * planted word, the most common word, by recency and by relevance) and regex (a rare planted pattern, a pattern
 * found in most code), each over the main conversation and over every conversation of the agent's history.
 * "pending feature" while the tool is not registered.
 */
import type { AgentTool } from "../../src/host/openclaw-types.js";
import { type BenchContext, conversationOf, wantsSample } from "../context.js";
import { COMMON_PATTERN, COMMON_TERM, RARE_PATTERN, RARE_TERM } from "../generate.js";
import { Phase, type PhaseResult, pending } from "../measure.js";

interface GrepCase {
  name: string;
  params: Record<string, unknown>;
}

const CASES: GrepCase[] = [
  { name: "grep.fts.rare", params: { pattern: RARE_TERM, mode: "full_text" } },
  { name: "grep.fts.common", params: { pattern: COMMON_TERM, mode: "full_text" } },
  { name: "grep.fts.rare.relevance", params: { pattern: RARE_TERM, mode: "full_text", sort: "relevance" } },
  { name: "grep.fts.common.relevance", params: { pattern: COMMON_TERM, mode: "full_text", sort: "relevance" } },
  { name: "grep.regex.rare", params: { pattern: RARE_PATTERN, mode: "regex" } },
  { name: "grep.regex.common", params: { pattern: COMMON_PATTERN, mode: "regex" } },
];

export async function runSearchPhases(context: BenchContext): Promise<PhaseResult[]> {
  const main = conversationOf(context, "main");
  const tool = context.host.tool("lcm_grep", { agentId: main.agentId, sessionKey: main.sessionKey, sessionId: main.sessionId });
  const results: PhaseResult[] = [];
  for (const scope of ["conversation", "all"] as const) {
    for (const grepCase of CASES) {
      const name = `${grepCase.name}.${scope}`;
      if (!tool) {
        results.push(pending(name, "lcm_grep is not registered yet (issue 4)"));
        continue;
      }
      const params = { ...grepCase.params, ...(scope === "all" ? { allConversations: true } : {}) };
      results.push(await grep(context, tool, name, params));
    }
  }
  return results;
}

async function grep(context: BenchContext, tool: AgentTool, name: string, params: Record<string, unknown>): Promise<PhaseResult> {
  const first = await tool.execute("bench-warmup", params);
  const phase = new Phase(name);
  let result = first;
  for (let index = 0; wantsSample(context, phase, index); index++) {
    result = await phase.time(() => tool.execute(`bench-${index}`, params));
  }
  return phase.finish({
    values: {
      pattern: String(params.pattern),
      isError: result.isError === true,
      hits: hitCount(result.details),
      ...(result.isError ? { error: result.content.map((part) => part.text).join(" ").slice(0, 200) } : {}),
      ...truncation(result.details),
    },
  });
}

/** The tool's hit count, whichever field name the implementation uses. */
export function hitCount(details: unknown): number | string {
  const record = (details ?? {}) as Record<string, unknown>;
  for (const key of ["matches", "results", "hits", "items"]) {
    if (Array.isArray(record[key])) return (record[key] as unknown[]).length;
  }
  for (const key of ["totalMatches", "matchCount", "count", "total"]) {
    if (typeof record[key] === "number") return record[key] as number;
  }
  return "unknown";
}

function truncation(details: unknown): Record<string, boolean> {
  const record = (details ?? {}) as Record<string, unknown>;
  for (const key of ["truncated", "stoppedEarly", "partial"]) {
    if (typeof record[key] === "boolean") return { [key]: record[key] as boolean };
  }
  return {};
}
