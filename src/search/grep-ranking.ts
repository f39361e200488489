/**
 * Sources before copies. Summaries keep the details of what they cover (an extractive summary keeps identifiers
 * word for word, and every level of the DAG above it again), so a detail said once matches its message and every
 * summary above it; listed newest first, or by score, the copies crowded the source out of a short result (the one
 * message holding a unique id ranked 6th to 10th, behind the summaries at every depth). Here a summary that covers
 * a matching message (its seq range holds the message's seq) is folded under that message (`alsoIn`), and the
 * message takes the place of the best-ranked of them. A summary whose sources did not match stays on its own.
 * Of several hits in one stored file, the best-ranked stands for the file.
 */
import type { SummaryId } from "../records.js";
import type { GrepMatch, MessageMatch } from "./grep-matches.js";
import type { DocumentScore } from "./text-ranking.js";

/** A match before ordering: when (for recency), how well (full text), and what it covers (summaries). */
export interface Candidate {
  match: GrepMatch;
  time: number;
  score?: DocumentScore;
  /** Summaries: the message seqs they cover, [from, to]. */
  covers?: { from: number; to: number };
  /** Hits in stored content: the file (one hit stands for each file). */
  fileId?: string;
}

/** `candidates` (best first) as matches, each summary that repeats a listed message folded under it. */
export function orderSourcesFirst(candidates: readonly Candidate[]): GrepMatch[] {
  const seenFiles = new Set<string>();
  const kept = candidates.filter((candidate) => {
    if (candidate.fileId === undefined) return true;
    if (seenFiles.has(candidate.fileId)) return false;
    seenFiles.add(candidate.fileId);
    return true;
  });
  const sources = kept.filter((candidate) => candidate.match.type === "message").map((candidate) => candidate.match as MessageMatch);
  const ordered: GrepMatch[] = [];
  const placed = new Set<GrepMatch>();
  const place = (match: GrepMatch) => {
    if (placed.has(match)) return;
    placed.add(match);
    ordered.push(match);
  };
  for (const candidate of kept) {
    const covers = candidate.covers;
    if (candidate.match.type === "summary" && covers) {
      const summary = candidate.match;
      const covered = sources.filter((source) => source.conversationId === summary.conversationId && source.seq >= covers.from && source.seq <= covers.to);
      if (covered.length > 0) {
        for (const source of covered) addCopy(source, summary.summaryId);
        place(covered[0]!);
        continue;
      }
    }
    place(candidate.match);
  }
  return ordered;
}

function addCopy(source: MessageMatch, summaryId: SummaryId): void {
  if (!source.alsoIn) source.alsoIn = [];
  if (!source.alsoIn.includes(summaryId)) source.alsoIn.push(summaryId);
}
