/**
 * The bounded direct expansion used when no helper sub-agent can run: gather excerpts under the candidate
 * summaries within a token budget — first the source messages that best match the question (full-text index,
 * restricted to each summary's seq range), then the summaries themselves, then a shallow walk down the DAG —
 * and present them in time order for one model call (or, with no model, to the agent itself). Excerpts are kept
 * in the order they were collected, best first, so a smaller budget keeps the best of them (`bestWithin`).
 */
import type { TokenEstimator } from "../contracts.js";
import type { SummaryId, SummaryRecord } from "../records.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import { isoTime } from "./iso-time.js";
import type { RetrievalEngine } from "./retrieval-engine.js";
import { fitToTokens } from "./text-budget.js";

/** Best-matching source messages taken per candidate summary in the first pass. */
const MATCHED_MESSAGES_PER_SUMMARY = 8;

export interface Excerpt {
  /** The candidate summary this excerpt was found under. */
  summaryId: SummaryId;
  time: number;
  header: string;
  text: string;
  tokenCount: number;
}

export interface ExcerptSet {
  /** Best first: matched messages, then the candidate summaries, then what lies below them. */
  excerpts: Excerpt[];
  sourceTokens: number;
  /** The budget stopped collection before everything under the candidates was read. */
  truncated: boolean;
  /** Candidates that contributed at least one excerpt. */
  expandedSummaryIds: SummaryId[];
}

export interface ExcerptDeps {
  store: Pick<RetrievalStore, "searchMessages" | "getMessageTexts">;
  retrieval: Pick<RetrievalEngine, "expand">;
  tokens: TokenEstimator;
}

export async function collectExcerpts(
  deps: ExcerptDeps,
  candidates: readonly SummaryRecord[],
  match: string | null,
  budget: number,
): Promise<ExcerptSet> {
  const excerpts: Excerpt[] = [];
  const seen = new Set<string>();
  let used = 0;
  let truncated = false;
  const add = (key: string, excerpt: Omit<Excerpt, "tokenCount">): boolean => {
    if (seen.has(key)) return true;
    const left = budget - used;
    if (left <= 0) {
      truncated = true;
      return false;
    }
    const fitted = fitToTokens(excerpt.text, left, deps.tokens);
    if (fitted.text === "") {
      truncated = true;
      return false;
    }
    seen.add(key);
    excerpts.push({ ...excerpt, text: fitted.text, tokenCount: fitted.tokenCount });
    used += fitted.tokenCount;
    if (fitted.cut) truncated = true;
    return !fitted.cut;
  };

  if (match) {
    for (const summary of candidates) {
      const hits = await deps.store.searchMessages({
        conversationIds: [summary.conversationId], since: null, before: null, match, sort: "relevance",
        limit: MATCHED_MESSAGES_PER_SUMMARY, seqRange: { from: summary.seqStart, to: summary.seqEnd },
      });
      for (const message of await deps.store.getMessageTexts(hits.map((hit) => hit.messageId))) {
        const header = `[message ${message.messageId} · ${message.role} · ${isoTime(message.createdAt)} · under ${summary.summaryId}]`;
        if (!add(`m${message.messageId}`, { summaryId: summary.summaryId, time: message.createdAt, header, text: message.content })) break;
      }
    }
  }
  for (const summary of candidates) {
    const header = `[${summary.summaryId} · ${summary.kind} summary · ${isoTime(summary.earliestAt)} to ${isoTime(summary.latestAt)}]`;
    if (!add(`s${summary.summaryId}`, { summaryId: summary.summaryId, time: summary.earliestAt, header, text: summary.content })) break;
  }
  for (const summary of candidates) {
    if (used >= budget) break;
    const expanded = await deps.retrieval.expand(summary, { depth: 2, includeMessages: true, tokenCap: budget - used });
    for (const item of expanded.items) {
      const added = item.type === "message"
        ? add(`m${item.messageId}`, {
            summaryId: summary.summaryId, time: Date.parse(item.createdAt),
            header: `[message ${item.messageId} · ${item.role} · ${item.createdAt} · under ${item.summaryId}]`, text: item.content,
          })
        : add(`s${item.summaryId}`, {
            summaryId: summary.summaryId, time: Date.parse(item.earliestAt),
            header: `[${item.summaryId} · ${item.kind} summary · ${item.earliestAt} to ${item.latestAt}]`, text: item.content,
          });
      if (!added) break;
    }
    if (expanded.truncated) truncated = true;
  }
  return {
    excerpts,
    sourceTokens: used,
    truncated,
    expandedSummaryIds: candidates.map((summary) => summary.summaryId).filter((id) => excerpts.some((excerpt) => excerpt.summaryId === id)),
  };
}

/** The excerpts in time order, each under its header. */
export function formatExcerpts(excerpts: readonly Excerpt[]): string {
  return [...excerpts].sort((left, right) => left.time - right.time)
    .map((excerpt) => `${excerpt.header}\n${excerpt.text}`).join("\n\n");
}

/** The best excerpts (in collection order) whose headers and texts fit `budget` tokens together. */
export function bestWithin(excerpts: readonly Excerpt[], budget: number, tokens: TokenEstimator): Excerpt[] {
  const kept: Excerpt[] = [];
  let used = 0;
  for (const excerpt of excerpts) {
    const cost = excerpt.tokenCount + tokens.estimate(excerpt.header) + 2;
    if (used + cost > budget) continue;
    kept.push(excerpt);
    used += cost;
  }
  return kept;
}
