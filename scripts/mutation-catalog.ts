/**
 * The mutations scripts/mutations.ts applies: each breaks one feature the suite claims to test, as a small text
 * edit of one source file, and names the tests that must then fail. docs/mutations.md explains each and why its
 * tests kill it. An edit whose text is no longer found once (the code moved) is reported, never skipped.
 */

/** One text replacement: `find` must occur exactly once in the file. */
export interface Edit {
  file: string;
  find: string;
  replace: string;
}

/** One vitest run: test files under a config (default: the unit config), with extra environment. */
export interface TestRun {
  files: string[];
  config?: string;
  env?: Record<string, string>;
}

export interface Mutation {
  id: string;
  /** What the mutation breaks, in a sentence. */
  breaks: string;
  edits: Edit[];
  runs: TestRun[];
}

const RANKING = "src/search/text-ranking.ts";
const RELIABILITY = "vitest.reliability.config.ts";

export const MUTATIONS: Mutation[] = [
  {
    id: "M1",
    breaks: "relevance ranking sorts newest first and nothing else",
    edits: [{
      file: RANKING,
      find: "  if (left.allTerms !== right.allTerms) return right.allTerms - left.allTerms;",
      replace: "  return rightTime - leftTime;\n  if (left.allTerms !== right.allTerms) return right.allTerms - left.allTerms;",
    }],
    runs: [{ files: ["test/search/text-ranking.test.ts", "test/search/relevance-ranking.test.ts", "test/retrieval/expansion-ranking.test.ts"] }],
  },
  {
    id: "M1b",
    breaks: "BM25 is removed from both branches of the ranking (all words and some words)",
    edits: [
      { file: RANKING, find: " || right.bm25 - left.bm25 ||", replace: " ||" },
      { file: RANKING, find: "  return score.bm25 * (1 + ", replace: "  return 1 * (1 + " },
    ],
    runs: [{ files: ["test/search/text-ranking.test.ts", "test/search/relevance-ranking.test.ts"] }],
  },
  {
    id: "M1c",
    breaks: "documents holding only some of the query's words are ordered oldest first, with no score",
    edits: [{
      file: RANKING,
      find: "  return someTermsScore(right) - someTermsScore(left) || rightTime - leftTime;",
      replace: "  return leftTime - rightTime;",
    }],
    runs: [{ files: ["test/search/text-ranking.test.ts", "test/search/relevance-ranking.test.ts"] }],
  },
  {
    id: "M2",
    breaks: "compaction is switched off: sweeps and the per-turn incremental run return at once",
    edits: [
      {
        file: "src/compaction/compaction-engine.ts",
        find: "    const run = await this.start(conversationId, options);\n    const backlog",
        replace: "    const run = await this.start(conversationId, options);\n    return this.finish(run, \"nothing-to-do\");\n    const backlog",
      },
      {
        file: "src/compaction/compaction-engine.ts",
        find: "tail: TailPolicy): Promise<StopReason> {\n    const leaf = await this.leafPhase(",
        replace: "tail: TailPolicy): Promise<StopReason> {\n    return \"done\";\n    const leaf = await this.leafPhase(",
      },
    ],
    runs: [
      { files: ["test/compaction/compaction-properties.test.ts"] },
      { files: ["test/reliability/hostile-summarizers.test.ts"], config: RELIABILITY, env: { LCM_HOSTILE_SESSIONS: "60" } },
    ],
  },
  {
    id: "M3",
    breaks: "a summary's context cost counts only its text, not the XML element that is sent",
    edits: [{
      file: "src/assembly/summary-message.ts",
      find: "  return tokens.estimate(renderSummaryXml(summary)) + 4;",
      replace: "  return tokens.estimate(summary.content) + 4;",
    }],
    runs: [{ files: ["test/compaction/compaction-properties.test.ts", "test/assembly/budget-properties.test.ts"] }],
  },
  {
    id: "M4",
    breaks: "the fresh tail ignores its token share (only its message count limits it)",
    edits: [{
      file: "src/compaction/context-units.ts",
      find: "    if (!unit.isRaw || tokens + unit.tokens > policy.maxTokens) break;",
      replace: "    if (!unit.isRaw) break;",
    }],
    runs: [{ files: ["test/compaction/compact.test.ts"] }],
  },
  {
    id: "M5",
    breaks: "the assembler always keeps the four newest items, over the budget or not",
    edits: [{
      file: "src/assembly/assembler.ts",
      find: "        if (total + unitTokens > budget) {",
      replace: "        if (total + unitTokens > budget && selected.length >= 4) {",
    }],
    runs: [{ files: ["test/assembly/assemble.test.ts"] }],
  },
  {
    id: "M6",
    breaks: "a summary renders with a random attribute, so the prompt-cache prefix changes every turn",
    edits: [{
      file: "src/assembly/summary-message.ts",
      find: "    `latest_at=\"${isoMinute(summary.latestAt)}\"`,",
      replace: "    `latest_at=\"${isoMinute(summary.latestAt)}\"`,\n    `nonce=\"${Math.random()}\"`,",
    }],
    runs: [{ files: ["test/assembly/prompt-cache.test.ts"] }],
  },
  {
    id: "M7",
    breaks: "idempotency keys: a keyed message gets a new identity every time it is seen, so a re-delivery is stored twice",
    edits: [{
      file: "src/messages/message-codec.ts",
      find: "  return key === undefined ? `fp:${fingerprintOf(message)}` : `${key}#${fingerprintOf(message)}`;",
      replace: "  return key === undefined ? `fp:${fingerprintOf(message)}` : `${key}#${fingerprintOf(message)}#${Math.random()}`;",
    }],
    runs: [{ files: ["test/engine/identity.test.ts"] }],
  },
  {
    id: "M8",
    breaks: "tool-call pairing: a tool result whose call is not in the context is sent anyway",
    edits: [{
      file: "src/assembly/tool-pairing.ts",
      find: "      if (typeof id !== \"string\" || !called.has(id) || answered.has(id)) continue;",
      replace: "      if (typeof id !== \"string\") continue;",
    }],
    runs: [{ files: ["test/assembly/assemble.test.ts"] }],
  },
  {
    id: "M9",
    breaks: "the fresh tail protects nothing: compaction may summarize the newest messages",
    edits: [{
      file: "src/compaction/context-units.ts",
      find: "  while (startIndex > 0 && messages < policy.count) {",
      replace: "  while (startIndex > 0 && messages < 0) {",
    }],
    runs: [{ files: ["test/compaction/compact.test.ts"] }],
  },
  {
    id: "M10",
    breaks: "the stale-write re-check: a summary is written over a range that changed while the model worked",
    edits: [{
      file: "src/sqlite/sqlite-compaction-store.ts",
      find: "      const mismatch = describeMismatch(range, rows, sources);",
      replace: "      const mismatch = null as string | null;",
    }],
    runs: [{ files: ["test/compaction/sqlite-compaction-store.test.ts", "test/compaction/compaction-engine.test.ts"] }],
  },
  {
    id: "M11",
    breaks: "the integrity checker no longer notices a message that is neither in the context nor under a summary",
    edits: [{
      file: "src/integrity/integrity-checker.ts",
      find: "    if (coverage.visibleMessages !== coverage.inContext + coverage.summarized) {",
      replace: "    if (coverage.visibleMessages < 0) {",
    }],
    runs: [{ files: ["test/integrity/integrity-checker.test.ts"] }],
  },
  {
    id: "M12",
    breaks: "the regex prefilter treats a word a match only starts with as a whole word, so it misses longer words",
    edits: [{
      file: "src/search/regex-prefilter.ts",
      find: "    if (startsAtToken) words.terms.push({ text: run.toLowerCase(), prefix: !endsAtToken });",
      replace: "    if (startsAtToken) words.terms.push({ text: run.toLowerCase(), prefix: false });",
    }],
    runs: [{ files: ["test/search/regex-search.test.ts"] }],
  },
  {
    id: "M13",
    breaks: "large-file interception never fires: a file over the threshold goes into the context whole",
    edits: [{
      file: "src/large-files/large-file-interceptor.ts",
      find: "messages.filter((message) => message.tokenCount >= threshold &&",
      replace: "messages.filter((message) => message.tokenCount >= threshold * 1_000 &&",
    }],
    runs: [{ files: ["test/large-files/interception.test.ts"] }],
  },
  {
    id: "M14",
    breaks: "lcm_grep's default scope no longer reads content stored aside (pastes, tool outputs)",
    edits: [
      { file: "src/search/grep.ts", find: "    files: scope === \"summaries\" ? null : fileChunkReader(", replace: "    files: true ? null : fileChunkReader(" },
      { file: "src/search/regex-search.ts", find: "    const files = searchesMessages && stored", replace: "    const files = false && stored" },
    ],
    runs: [{ files: ["test/retrieval/everything-findable.test.ts", "test/tools/lcm-grep-files.test.ts"] }],
  },
  {
    id: "M15",
    breaks: "summaries that repeat a matching message are listed on their own, ahead of it (no sources before copies)",
    edits: [{ file: "src/search/grep-ranking.ts", find: "      if (covered.length > 0) {", replace: "      if (covered.length > 0 && false) {" }],
    runs: [{ files: ["test/retrieval/everything-findable.test.ts", "test/cli/recall-commands.test.ts"] }],
  },
  {
    id: "M16",
    breaks: "a number and its unit are two terms again (33156.65 ms no longer finds 33156.65ms)",
    edits: [{ file: "src/text/text-query.ts", find: "    const withUnit = previous ? joinUnit(previous, term) : null;", replace: "    const withUnit = null;" }],
    runs: [{ files: ["test/retrieval/everything-findable.test.ts"] }],
  },
  {
    id: "M17",
    breaks: "snippets and excerpts centre where most query words meet, whatever their rarity",
    edits: [{ file: "src/search/text-snippet.ts", find: "  const weight = (term: number) => Math.max(MIN_WEIGHT, match.weights?.[term] ?? 1);", replace: "  const weight = (_term: number) => 1;" }],
    runs: [{ files: ["test/retrieval/everything-findable.test.ts"] }],
  },
  {
    id: "M18",
    breaks: "a chunk of stored content is scored by its whole 4 KB, not by the passage holding its hits",
    edits: [{ file: "src/search/text-readers.ts", find: "    lengthOf: (_row, match) => passageWords(match),", replace: "    lengthOf: undefined," }],
    runs: [{ files: ["test/retrieval/everything-findable.test.ts"] }],
  },
  {
    id: "M19",
    breaks: "messages and stored content are ranked with each source's own inverse document frequencies",
    edits: [{
      file: "src/search/grep.ts",
      find: "budgetMs: remaining(), ...together[inScope.indexOf(source)]! });",
      replace: "budgetMs: remaining() });",
    }],
    runs: [{ files: ["test/retrieval/everything-findable.test.ts"] }],
  },
  {
    id: "M20",
    breaks: "lcm_expand_query's excerpts leave out content stored aside under the candidate summaries",
    edits: [{ file: "src/retrieval/direct-expansion.ts", find: "    for (const hit of files.hits) {", replace: "    for (const hit of files.hits.slice(0, 0)) {" }],
    runs: [{ files: ["test/retrieval/everything-findable.test.ts"] }],
  },
  {
    id: "M21",
    breaks: "an answer too small for an excerpt drops it instead of showing the window around what matched",
    edits: [{ file: "src/retrieval/direct-expansion.ts", find: "      : excerpt.core && used", replace: "      : false && excerpt.core && used" }],
    runs: [{ files: ["test/retrieval/everything-findable.test.ts"] }],
  },
  {
    id: "M22",
    breaks: "a document holding some words is not weighed by the share of the query's information it holds",
    edits: [{ file: RANKING, find: " + 0.15 * closeness) * score.information;", replace: " + 0.15 * closeness);" }],
    runs: [{ files: ["test/search/text-ranking.test.ts"] }],
  },
];
