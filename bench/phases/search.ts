/**
 * Search phases through the registered `lcm_grep` tool's execute, as the model calls it: full-text (a rare
 * planted word, the most common word, by recency and by relevance; several words of different frequencies and a
 * question, by relevance) and regex (a rare planted pattern, a pattern found in most code), each over the main
 * conversation and over every conversation of the agent's history. Last, the first search after a bulk ingest
 * that no maintenance followed (issue 15): on a copy of the dataset whose message index holds nothing, as a
 * history imported in one go leaves it. "pending feature" while the tool is not registered. On PostgreSQL the
 * same state is the size's database right after the table copy loaded it, before anything indexed it: run-size.ts
 * measures those two searches there (measureFirstSearches) and passes them in the context.
 */
import { constants, copyFileSync } from "node:fs";
import { join } from "node:path";
import { closeSharedDatabase, openSharedDatabase } from "../../src/sqlite/connection-registry.js";
import type { AgentTool } from "../../src/host/openclaw-types.js";
import type { ConversationInfo } from "../dataset.js";
import { type BenchContext, conversationOf, wantsSample } from "../context.js";
import { benchConfig, copyFilesDirectory, datasetPaths, removeDatabase } from "../dataset.js";
import { COMMON_PATTERN, COMMON_TERM, RARE_PATTERN, RARE_TERM } from "../generate.js";
import { BenchHost } from "../host.js";
import { Phase, type PhaseResult, pending } from "../measure.js";
import { DATA_DIR } from "../paths.js";

interface GrepCase {
  name: string;
  params: Record<string, unknown>;
}

const CASES: GrepCase[] = [
  { name: "grep.fts.rare", params: { pattern: RARE_TERM, mode: "full_text", sort: "recency" } },
  { name: "grep.fts.common", params: { pattern: COMMON_TERM, mode: "full_text", sort: "recency" } },
  { name: "grep.fts.rare.relevance", params: { pattern: RARE_TERM, mode: "full_text", sort: "relevance" } },
  { name: "grep.fts.common.relevance", params: { pattern: COMMON_TERM, mode: "full_text", sort: "relevance" } },
  { name: "grep.regex.rare", params: { pattern: RARE_PATTERN, mode: "regex" } },
  { name: "grep.regex.common", params: { pattern: COMMON_PATTERN, mode: "regex" } },
  // Several words, by relevance (the default for full text): a rare word with a common one, two words found in
  // a few percent of the messages each (the independent benchmark's "deploy kubernetes"), two found in most,
  // and a question whose words range from rare to everywhere.
  { name: "grep.fts.words.rare-common", params: { pattern: `${RARE_TERM} rollout`, mode: "full_text" } },
  { name: "grep.fts.words.mid-mid", params: { pattern: "deploy kubernetes", mode: "full_text" } },
  { name: "grep.fts.words.common-common", params: { pattern: "function return value", mode: "full_text" } },
  { name: "grep.fts.words.question", params: { pattern: "how did we fix the failing database migration test?", mode: "full_text" } },
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
  if (tool) results.push(...(context.firstSearches ?? (await firstSearchAfterBulkIngest(context))));
  return results;
}

/**
 * The first lcm_grep after a bulk ingest with no maintain in between: a copy of the cached dataset with its
 * message index emptied (every message waiting, as an import leaves them), one full-text and one regex search,
 * each timed once with the longest event-loop block. The search reads what is not indexed newest first within
 * its budget and says so when it stops (truncated).
 */
async function firstSearchAfterBulkIngest(context: BenchContext): Promise<PhaseResult[]> {
  const path = join(DATA_DIR, `first-search-n${context.manifest.size}.db`);
  removeDatabase(path);
  copyFileSync(datasetPaths(context.manifest.seed, context.manifest.size).database, path, constants.COPYFILE_FICLONE);
  const reset = openSharedDatabase(path);
  const waiting = reset.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n;
  await reset.write(() => {
    reset.run("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
    reset.run("UPDATE search_index_state SET through = 0 WHERE name = 'messages_fts'");
  });
  // The connection stays open: the host's engine shares it, so opening the file is not part of what is timed.
  const host = new BenchHost(benchConfig(path, copyFilesDirectory(path)));
  try {
    return await measureFirstSearches(host, conversationOf(context, "main"), waiting);
  } finally {
    closeSharedDatabase(path);
    removeDatabase(path);
  }
}

/** One full-text and one regex lcm_grep through `host`, whose database has `waiting` messages not indexed yet. */
export async function measureFirstSearches(host: BenchHost, main: ConversationInfo, waiting: number): Promise<PhaseResult[]> {
  const tool = host.tool("lcm_grep", { agentId: main.agentId, sessionKey: main.sessionKey, sessionId: main.sessionId });
  if (!tool) return ["grep.first-after-ingest.fts", "grep.first-after-ingest.regex"].map((name) => pending(name, "lcm_grep is not registered"));
  const results: PhaseResult[] = [];
  for (const [name, params] of [
    ["grep.first-after-ingest.fts", { pattern: RARE_TERM, mode: "full_text" }],
    ["grep.first-after-ingest.regex", { pattern: RARE_PATTERN, mode: "regex" }],
  ] as [string, Record<string, unknown>][]) {
    const phase = new Phase(name);
    const result = await phase.time(() => tool.execute("bench-first", params));
    results.push(phase.finish({
      values: {
        pattern: String(params.pattern), unindexedMessages: waiting, isError: result.isError === true, hits: hitCount(result.details),
        ...truncation(result.details),
      },
    }));
  }
  return results;
}

async function grep(context: BenchContext, tool: AgentTool, name: string, params: Record<string, unknown>): Promise<PhaseResult> {
  const first = await tool.execute("bench-warmup", params);
  const phase = new Phase(name);
  let result = first;
  // Every answer counts toward the gate (bars.ts): one error among the samples makes the figure not count.
  let errorAnswers = first.isError === true ? 1 : 0;
  for (let index = 0; wantsSample(context, phase, index); index++) {
    result = await phase.time(() => tool.execute(`bench-${index}`, params));
    if (result.isError === true) errorAnswers++;
  }
  return phase.finish({
    values: {
      pattern: String(params.pattern),
      isError: errorAnswers > 0,
      errorAnswers,
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
