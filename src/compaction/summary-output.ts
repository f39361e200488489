/**
 * Turns what a summarizer returned into summary text, or says why it cannot be used. Models that think out
 * loud wrap reasoning in tags or return nothing but reasoning; both count as no output. Every accepted summary
 * ends with an "Expand for details about: ..." line (added when the model left it out), so the reader always
 * knows recall can bring back more.
 */
export const EXPAND_LINE_PREFIX = "Expand for details about:";

const REASONING_BLOCK = /<(think|thinking|reasoning|reflection)>[\s\S]*?(<\/\1>|$)/gi;

export type CleanedOutput = { kind: "text"; text: string } | { kind: "empty"; reason: string };

export function cleanSummaryOutput(raw: unknown): CleanedOutput {
  if (typeof raw !== "string") return { kind: "empty", reason: `the summarizer returned ${raw === null ? "null" : typeof raw}, not text` };
  const withoutReasoning = raw.replace(REASONING_BLOCK, "").trim();
  if (withoutReasoning === "") {
    return { kind: "empty", reason: raw.trim() === "" ? "the summarizer returned empty text" : "the summarizer returned only reasoning" };
  }
  return { kind: "text", text: withExpandLine(withoutReasoning) };
}

/** Appends a generic expand line when the text has none. */
export function withExpandLine(text: string, topics = "the source messages of this summary"): string {
  if (text.includes(EXPAND_LINE_PREFIX)) return text;
  return `${text.trimEnd()}\n\n${EXPAND_LINE_PREFIX} ${topics}`;
}
