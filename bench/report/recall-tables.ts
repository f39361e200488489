/**
 * The recall section of docs/benchmarks.md (issues 14, 22): top-5 recall per query form at each history size,
 * beside a plain substring search, with the share of lcm_expand_query excerpts that quote the detail; and evidence
 * recall@5 on the question-answering conversation beside BM25.
 */
import type { SizeResult } from "../bars.js";
import { QUERY_FORMS } from "../recall-corpus.js";

export function recallTables(sizes: readonly SizeResult[]): string[] {
  const measured = sizes
    .map((size) => ({ size, forms: size.phases.find((phase) => phase.name === "recall.forms" && phase.status === "measured")?.values }))
    .filter((entry): entry is { size: SizeResult; forms: NonNullable<typeof entry.forms> } => entry.forms !== undefined);
  const questionsOwner = sizes.find((size) => size.phases.some((phase) => phase.name === "recall.questions" && phase.status === "measured"));
  const questions = questionsOwner?.phases.find((phase) => phase.name === "recall.questions")?.values;
  if (measured.length === 0) return [];
  const first = measured[0]!.forms;
  const session = (name: string) =>
    `${Number(first[`${name}.messages`]).toLocaleString("en")} messages, ${first[`${name}.compactions`]} compaction rounds, ` +
    `a DAG ${first[`${name}.dagDepth`]} deep`;
  const lines = [
    `### Recall (${measured.map(({ size }) => `${size.label} run ${size.measuredAt.slice(0, 16).replace("T", " ")}`).join("; ")})`,
    "",
    `Two sessions stored in each size's database beside its history, ${first.details} planted details, each with six near misses ` +
      `planted after it, summarized by the extractive summarizer (which repeats ids at every level above them): an ordinary ` +
      `session (${session("ordinary")}) and one where most user ` +
      `messages carry a ~1.5k-token paste and the details sit inside pastes and long tool outputs, stored aside as in an 8k window ` +
      `(${session("storedAside")}; ${first["storedAside.storedFiles"]} stored files, ` +
      `${first["storedAside.storedMb"]} MB; ${first["storedAside.detailsInsideStoredContent"]} details inside stored content). ` +
      "Found: the detail's message among the first five matches of lcm_grep with its default parameters and the query as an agent " +
      "types it; substring: a plain case-insensitive substring search, newest first, over the messages' stored text; excerpts: " +
      "lcm_expand_query with no model quotes the detail (details under a summary).",
    "",
    `| query form | ${measured.map(({ size }) => `lcm_grep top 5 (${size.label})`).join(" | ")} | substring top 5 | ${measured.map(({ size }) => `excerpts (${size.label})`).join(" | ")} |`,
    `|---|${measured.map(() => "---:").join("|")}|---:|${measured.map(() => "---:").join("|")}|`,
  ];
  for (const form of QUERY_FORMS) {
    lines.push(
      `| ${form} | ${measured.map(({ forms }) => `${forms[`plugin:${form}`]}%`).join(" | ")} | ${first[`baseline:${form}`]}% | ` +
        `${measured.map(({ forms }) => `${forms[`excerpts:${form}`]}%`).join(" | ")} |`,
    );
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
