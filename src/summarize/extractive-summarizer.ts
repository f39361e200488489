/**
 * A deterministic, model-free Summarizer: one line per source entry (time, who, the gist of what was said) plus
 * the exact identifiers found in it (paths, URLs, ids, hashes, versions, error codes and messages, numbers),
 * packed into the target size with the most informative lines kept first. It is what compaction uses when no
 * model is reachable, and what the demo runs on. Same input, same output.
 */
import type { Summarizer, SummaryRequest, TokenEstimator } from "../contracts.js";
import { EXPAND_LINE_PREFIX } from "../compaction/summary-output.js";

const ENTRY_HEADER = /^\[([^\]]+)\] (.+):$/;
const LABEL_LINE = /^\[(tool call|tool result|image|summary|command|output)[^\]]*\]$/;
const TOOL_CALL_LABEL = /^\[tool call ([^\]]+)\]$/;
const TOOL_RESULT_LABEL = /^\[tool result ([^\]]+)\]$/;
/** A line of an extractive summary: "- 2026-11-03 08:11 UTC user: ...". */
const SUMMARY_BULLET = /^- (\d{4}-\d\d-\d\d \d\d:\d\d UTC[^:]*): (.*)$/;
const OMITTED_LINE = /^- \(\d+ less informative entries omitted\)$/;
/** Identifiers worth keeping verbatim, most specific first (a later match inside an earlier one is skipped). */
const STRONG_PATTERNS: readonly RegExp[] = [
  /\bhttps?:\/\/[^\s"'<>)\]]+/g,
  /\b(?:file|sum)_[a-f0-9]{16}\b/g,
  /(?<![\w./-])[\w-]+(?:\/[\w.-]+)+\.[A-Za-z]\w{0,5}\b/g,
  /(?<![\w./-])(?:~|\.{1,2})?\/(?:[\w.@-]+\/)*[\w.@-]+/g,
  /\b(?=[a-f0-9]*\d)(?=[a-f0-9]*[a-f])[a-f0-9]{7,64}\b/g,
  /\bv?\d+\.\d+(?:\.\d+)+(?:-[\w.]+)?\b/g,
  /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g,
  /\b[A-Z]{1,5}-\d{2,}\b/g,
];
/** Bare numbers: kept, but only a few per entry and with little weight. */
const NUMBER_PATTERN = /\b\d{3,}(?:[.,]\d+)?\b/g;
const MAX_NUMBERS = 2;
const MAX_IDENTIFIERS = 6;
const ERROR_WORD = /\b(?:error|exception|failed|failure|denied|refused|not found|timeout|timed out)\b/i;
const GIST_WORDS = { normal: 24, aggressive: 12 } as const;
/** "- (N less informative entries omitted)" */
const OMITTED_LINE_TOKENS = 12;
const MAX_ERROR_CHARS = 160;
/** How much of a long sentence before its error word is kept. */
const ERROR_CONTEXT_BEFORE_CHARS = 60;

interface Entry {
  index: number;
  header: string;
  gist: string;
  identifiers: string[];
  /** How many of `identifiers` are strong (not bare numbers). */
  strongCount: number;
  hasError: boolean;
  isUser: boolean;
  /** An assistant reply that is not a tool call: usually what was concluded or done. */
  isConclusion: boolean;
}

export class ExtractiveSummarizer implements Summarizer {
  constructor(private readonly deps: { tokens: TokenEstimator }) {}

  async summarize(request: SummaryRequest): Promise<string> {
    return this.summarizeNow(request);
  }

  /** The synchronous core (the summary is pure computation). */
  summarizeNow(request: SummaryRequest): string {
    const entries = parseEntries(request.sourceText, GIST_WORDS[request.mode]);
    const seen = new Set<string>();
    const lines = entries.map((entry) => {
      const unseen = entry.identifiers.filter((identifier) => !seen.has(identifier));
      for (const identifier of entry.identifiers) seen.add(identifier);
      const listed = unseen.filter((identifier) => !entry.gist.includes(identifier)).slice(0, MAX_IDENTIFIERS);
      const ids = listed.length > 0 ? ` [${listed.join(", ")}]` : "";
      const strongUnseen = unseen.filter((identifier) => entry.identifiers.indexOf(identifier) < entry.strongCount).length;
      // What the user asked for matters most; then identifiers not seen earlier in the chunk, then errors.
      const role = entry.isUser ? 8 : entry.isConclusion ? 6 : 0;
      const weight = role + Math.min(strongUnseen, 3) * 2 + (entry.hasError ? 1 : 0);
      const text = `- ${entry.header}: ${entry.gist}${ids}`;
      return { entry, text, weight, tokens: this.deps.tokens.estimate(text) };
    });
    // The expand line and the "omitted" line are part of the target too: a quarter of it for the expand line.
    const expandBudget = Math.max(16, Math.floor(request.targetTokens / 4));
    const budget = Math.max(16, request.targetTokens - expandBudget - OMITTED_LINE_TOKENS);
    const kept = new Set(lines);
    let total = lines.reduce((sum, line) => sum + line.tokens, 0);
    // Drop the least informative lines (ties: the longest, then the oldest) until the summary fits its target.
    const byValue = [...lines].sort(
      (left, right) => left.weight - right.weight || right.tokens - left.tokens || left.entry.index - right.entry.index,
    );
    for (const line of byValue) {
      if (total <= budget || kept.size <= 1) break;
      kept.delete(line);
      total -= line.tokens;
    }
    const dropped = lines.filter((line) => !kept.has(line));
    const keptText = lines.filter((line) => kept.has(line)).map((line) => line.text).join("\n");
    const candidates = [...new Set(dropped.flatMap((line) => line.entry.identifiers))]
      .filter((identifier) => !keptText.includes(identifier))
      .slice(0, 8);
    const topics: string[] = [];
    for (const topic of candidates) {
      if (this.deps.tokens.estimate(`${EXPAND_LINE_PREFIX} ${[...topics, topic].join(", ")}`) > expandBudget) break;
      topics.push(topic);
    }
    const expand = topics.length > 0 ? topics.join(", ") : "the exact wording of these messages and tool outputs";
    const body = lines.filter((line) => kept.has(line)).map((line) => line.text);
    const omitted = dropped.length > 0 ? [`- (${dropped.length} less informative entries omitted)`] : [];
    return [...body, ...omitted, "", `${EXPAND_LINE_PREFIX} ${expand}`].join("\n");
  }
}

function parseEntries(sourceText: string, gistWords: number): Entry[] {
  const entries: { header: string; body: string[] }[] = [];
  let isInSummary = false;
  for (const line of sourceText.split("\n")) {
    const header = ENTRY_HEADER.exec(line);
    const bullet = isInSummary ? SUMMARY_BULLET.exec(line) : null;
    if (header) {
      // A source summary's own bullets become entries again, so a condensed summary re-ranks its sources' lines.
      isInSummary = header[2]!.startsWith("summary ");
      entries.push({ header: isInSummary ? header[1]! : `${header[1]} ${header[2]}`, body: [] });
    } else if (bullet) {
      entries.push({ header: bullet[1]!, body: [bullet[2]!] });
    } else if (entries.length === 0) {
      entries.push({ header: "earlier", body: [line] });
    } else if (!(isInSummary && (line.startsWith(EXPAND_LINE_PREFIX) || OMITTED_LINE.test(line)))) {
      entries.at(-1)!.body.push(line);
    }
  }
  return entries.filter((entry) => entry.body.some((line) => line.trim() !== "")).map((entry, index) => {
    const resultOf = entry.body.map((line) => TOOL_RESULT_LABEL.exec(line.trim())?.[1]).find(Boolean);
    const text = entry.body
      .map((line) => line.trim().replace(TOOL_CALL_LABEL, "called $1:"))
      .filter((line) => !LABEL_LINE.test(line))
      .join("\n");
    const { identifiers, strongCount, hasError } = identifiersOf(text);
    return {
      index,
      header: resultOf ? `${entry.header} (${resultOf})` : entry.header,
      gist: gistOf(text, resultOf ? Math.ceil(gistWords / 2) : gistWords),
      identifiers,
      strongCount,
      hasError,
      isUser: / user$/.test(entry.header),
      isConclusion: / assistant$/.test(entry.header) && !/^called /m.test(text),
    };
  });
}

/** The first sentence of the text (without summary markup), cut to `words` words. */
function gistOf(text: string, words: number): string {
  const plain = text
    .split("\n")
    .map((line) => line.replace(/^[-*•]\s+/, "").trim())
    .filter((line) => line !== "" && !line.startsWith(EXPAND_LINE_PREFIX))
    .join(" ");
  const sentence = /^.*?[.!?](?=\s|$)/.exec(plain)?.[0] ?? plain;
  const parts = sentence.split(/\s+/).filter(Boolean);
  return parts.length <= words ? parts.join(" ") : `${parts.slice(0, words).join(" ")} ...`;
}

function identifiersOf(text: string): { identifiers: string[]; strongCount: number; hasError: boolean } {
  const found: string[] = [];
  const add = (value: string) => {
    const clean = value.replace(/[.,;:?!]+$/, "");
    if (clean.length >= 3 && !found.some((known) => known.includes(clean))) found.push(clean);
  };
  const error = errorSentenceOf(text);
  if (error) add(error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS)}...` : error);
  for (const pattern of STRONG_PATTERNS) for (const match of text.matchAll(pattern)) add(match[0]);
  const strongCount = found.length;
  let numbers = 0;
  for (const match of text.matchAll(NUMBER_PATTERN)) {
    if (numbers >= MAX_NUMBERS) break;
    const before = found.length;
    add(match[0]);
    if (found.length > before) numbers++;
  }
  return { identifiers: found, strongCount, hasError: error !== undefined };
}

/**
 * The sentence (or line) around the first error word, if any. Found from the word outwards: a pattern that
 * matched the sentence as a whole (`[^.\n]*\berror\b[^.\n]*`) backtracked over every start position of a long
 * line without periods (JSON, logs): quadratic, 600 ms of a 600-turn run's CPU and blocks of 0.5 s per summary.
 */
export function errorSentenceOf(text: string): string | undefined {
  const word = ERROR_WORD.exec(text);
  if (!word) return undefined;
  const sentenceStart = Math.max(text.lastIndexOf(".", word.index - 1), text.lastIndexOf("\n", word.index - 1)) + 1;
  // A sentence longer than what is kept (a line of JSON) is quoted around its error word, not from its beginning.
  const start = Math.max(sentenceStart, word.index - ERROR_CONTEXT_BEFORE_CHARS);
  const end = Math.min(nextBoundary(text, word.index + word[0].length), start + MAX_ERROR_CHARS);
  return text.slice(start, end).trim();
}

function nextBoundary(text: string, from: number): number {
  const period = text.indexOf(".", from);
  const newline = text.indexOf("\n", from);
  const ends = [period, newline].filter((index) => index >= 0);
  return ends.length > 0 ? Math.min(...ends) : text.length;
}
