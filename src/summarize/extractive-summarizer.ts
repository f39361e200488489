/**
 * A deterministic, model-free Summarizer: one line per source entry (time, who, the gist of what was said) plus
 * the exact identifiers found in it (paths, URLs, ids, hashes, versions, error codes and messages, numbers),
 * packed into the target size with the most informative lines kept first. It is what compaction uses when no
 * model is reachable, and what the demo runs on. Same input, same output. The entries are read by
 * source-entries.ts in time linear in the source; what is done here is linear in the number of entries.
 */
import type { Summarizer, SummaryRequest, TokenEstimator } from "../contracts.js";
import { EXPAND_LINE_PREFIX } from "../compaction/summary-output.js";
import { readSourceEntries } from "./source-entries.js";

const MAX_IDENTIFIERS = 6;
/** Identifiers of omitted entries offered on the expand line, at most. */
const MAX_EXPAND_TOPICS = 8;
const GIST_WORDS = { normal: 24, aggressive: 12 } as const;
/** "- (N less informative entries omitted)" */
const OMITTED_LINE_TOKENS = 12;

export class ExtractiveSummarizer implements Summarizer {
  constructor(private readonly deps: { tokens: TokenEstimator }) {}

  async summarize(request: SummaryRequest): Promise<string> {
    return this.summarizeNow(request);
  }

  /** The synchronous core (the summary is pure computation). */
  summarizeNow(request: SummaryRequest): string {
    const entries = readSourceEntries(request.sourceText, GIST_WORDS[request.mode]);
    const seen = new Set<string>();
    const lines = entries.map((entry) => {
      // An entry's identifiers are distinct, so marking them seen while walking them changes nothing for this entry.
      const listed: string[] = [];
      let strongUnseen = 0;
      for (let index = 0; index < entry.identifiers.length; index++) {
        const identifier = entry.identifiers[index]!;
        if (seen.has(identifier)) continue;
        seen.add(identifier);
        if (index < entry.strongCount) strongUnseen++;
        if (listed.length < MAX_IDENTIFIERS && !entry.gist.includes(identifier)) listed.push(identifier);
      }
      const ids = listed.length > 0 ? ` [${listed.join(", ")}]` : "";
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
    // The first identifiers of omitted entries that the kept lines do not show, in order, without duplicates.
    const candidates: string[] = [];
    const considered = new Set<string>();
    for (const identifier of dropped.flatMap((line) => line.entry.identifiers)) {
      if (candidates.length >= MAX_EXPAND_TOPICS) break;
      if (considered.has(identifier)) continue;
      considered.add(identifier);
      if (!keptText.includes(identifier)) candidates.push(identifier);
    }
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
