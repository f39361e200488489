/**
 * The recall section of docs/benchmarks.md (issue 14): top-5 recall per query form, for the plugin and for a
 * plain substring search, with the share of lcm_expand_query excerpts that quote the detail; and evidence
 * recall@5 on the question-answering conversation beside BM25.
 */
import type { SizeResult } from "../bars.js";
import { QUERY_FORMS } from "../recall-corpus.js";

export function recallTables(sizes: readonly SizeResult[]): string[] {
  const owner = sizes.find((size) => size.phases.some((phase) => phase.name === "recall.forms" && phase.status === "measured"));
  const forms = owner?.phases.find((phase) => phase.name === "recall.forms")?.values;
  const questions = owner?.phases.find((phase) => phase.name === "recall.questions")?.values;
  if (!owner || !forms) return [];
  const lines = [
    `### Recall (measured with the ${owner.label} run, ${owner.measuredAt.slice(0, 16).replace("T", " ")})`,
    "",
    `One session of ${Number(forms.sessionMessages).toLocaleString("en")} messages (${Number(forms.sessionTokens).toLocaleString("en")} tokens), ` +
      `${forms.compactions} compaction rounds, ${forms.details} planted details. Found: the detail's message among the first five matches of ` +
      "lcm_grep with the query as an agent types it; substring: a plain case-insensitive substring search, newest first, over the same " +
      "messages; excerpts: lcm_expand_query with no model quotes the detail (details under a summary).",
    "",
    "| query form | lcm_grep top 5 | substring top 5 | expand_query excerpts |",
    "|---|---:|---:|---:|",
  ];
  for (const form of QUERY_FORMS) {
    lines.push(`| ${form} | ${forms[`plugin:${form}`]}% | ${forms[`baseline:${form}`]}% | ${forms[`excerpts:${form}`]}% |`);
  }
  if (questions) {
    lines.push(
      "",
      `Question answering: ${questions.questions} questions in natural language over ${Number(questions.messages).toLocaleString("en")} messages ` +
        `of two speakers in 40 dated sessions (${questions.compactions} compactions). Evidence recall@5:`,
      "",
      "| lcm_grep (question as typed) | lcm_expand_query (no model) | BM25 baseline | BM25 on the compacted questions |",
      "|---:|---:|---:|---:|",
      `| ${questions.grepRecallAt5}% | ${questions.expandRecallAt5}% (${questions.compactedQuestions} compacted) | ${questions.bm25RecallAt5}% | ${questions.bm25RecallAt5Compacted}% |`,
    );
  }
  return lines;
}
