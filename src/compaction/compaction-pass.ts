/**
 * Runs one planned pass: load the sources, summarize them with escalation (async, no transaction open), build
 * the summary row, and apply it in one store transaction that re-checks the planned range. The plan came from a
 * pure planner; this is the only place a pass touches the model and the store.
 */
import { summaryContextTokens } from "../assembly/summary-message.js";
import type { Clock, Logger, Summarizer, TokenEstimator } from "../contracts.js";
import type { ConversationId, MessageRecord, SummaryLevel, SummaryRecord } from "../records.js";
import type { CompactionStore, SummaryDraft } from "../store/compaction-store.js";
import type { MessageStore, SummaryReadStore } from "../store/store.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import type { ScaledSettings } from "./compaction-targets.js";
import type { CondensedPlan } from "./condensed-planner.js";
import { type Attempt, summarizeWithEscalation } from "./escalation.js";
import type { LeafPlan } from "./leaf-planner.js";
import { renderMessageSources, renderSummarySources } from "./source-text.js";
import { condensedSourceFacts, draftOf, leafSourceFacts } from "./summary-draft.js";

/** The reads a pass needs from the conversation store. */
export type PassReadStore = Pick<MessageStore, "getMessages"> & Pick<SummaryReadStore, "getSummariesByRowIds">;

export interface PassDeps {
  store: PassReadStore;
  compactionStore: CompactionStore;
  summarizer: Summarizer;
  breaker: CircuitBreaker;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
}

export interface PassContext {
  conversationId: ConversationId;
  timeoutMs: number;
  /** Summary targets, fallback size and the largest source, for the budget the run works toward. */
  sizes: Pick<ScaledSettings, "leafTargetTokens" | "condensedTargetTokens" | "fallbackTokens" | "leafChunkTokens">;
  signal?: AbortSignal;
  customInstructions?: string;
}

export type PassOutcome =
  | {
      kind: "applied";
      summaryRowId: number;
      summaryId: string;
      depth: number;
      level: SummaryLevel;
      tokensRemoved: number;
      tokensAdded: number;
      attempts: Attempt[];
    }
  | { kind: "stale"; reason: string }
  | { kind: "superseded"; reason: string }
  | { kind: "aborted" }
  | { kind: "not-reducible"; attempts: Attempt[] };

const PLACEHOLDER_SUMMARY_ID = "sum_0000000000000000";

export async function executePass(plan: LeafPlan | CondensedPlan, context: PassContext, deps: PassDeps): Promise<PassOutcome> {
  const sources = await loadSources(plan, deps.store);
  if (!sources) return { kind: "stale", reason: "a source of the planned pass is no longer stored" };
  const previousContext = plan.previousSummaryRowId === null
    ? undefined
    : (await deps.store.getSummariesByRowIds([plan.previousSummaryRowId]))[0]?.content;

  // What the row takes from the sources is found once; each attempt's text is measured against it.
  const facts = sources.kind === "leaf" ? leafSourceFacts(sources.messages) : condensedSourceFacts(sources.summaries);
  const parentSummaryIds = sources.kind === "leaf" ? [] : sources.summaries.map((summary) => summary.summaryId);
  const contextTokensOf = (summary: Pick<SummaryDraft, "summaryId" | "content">) =>
    summaryContextTokens({ ...facts, ...summary, parentSummaryIds }, deps.tokens);

  const escalation = await summarizeWithEscalation({
    request: {
      sourceText: sources.kind === "leaf"
        ? renderMessageSources(sources.messages, sourceCharsFor(context.sizes.leafChunkTokens))
        : renderSummarySources(sources.summaries),
      depth: facts.depth,
      ...(previousContext ? { previousContext } : {}),
      ...(context.customInstructions ? { customInstructions: context.customInstructions } : {}),
    },
    targetTokens: sources.kind === "leaf" ? context.sizes.leafTargetTokens : context.sizes.condensedTargetTokens,
    fallbackTokens: context.sizes.fallbackTokens,
    sourceTokens: plan.sourceTokens,
    measure: (text) => contextTokensOf({ summaryId: PLACEHOLDER_SUMMARY_ID, content: text }),
    summarizer: deps.summarizer,
    breaker: deps.breaker,
    tokens: deps.tokens,
    timeoutMs: context.timeoutMs,
    ...(context.signal ? { signal: context.signal } : {}),
    logger: deps.logger,
  });
  if (escalation.kind !== "summarized") return escalation;

  const draft = draftOf(facts, { content: escalation.text, level: escalation.level, createdAt: deps.clock.now(), tokens: deps.tokens });
  const contextTokens = contextTokensOf(draft);
  if (contextTokens >= plan.sourceTokens) return { kind: "not-reducible", attempts: escalation.attempts };
  const range = { conversationId: context.conversationId, items: plan.items };
  const applied = plan.kind === "leaf"
    ? await deps.compactionStore.applyLeafSummary(range, draft, contextTokens)
    : await deps.compactionStore.applyCondensedSummary(range, draft, contextTokens);
  if (applied.kind !== "applied") return applied;
  return {
    kind: "applied",
    summaryRowId: applied.summaryRowId,
    summaryId: draft.summaryId,
    depth: draft.depth,
    level: draft.level,
    tokensRemoved: applied.tokensRemoved,
    tokensAdded: applied.tokensAdded,
    attempts: escalation.attempts,
  };
}

type Sources = { kind: "leaf"; messages: MessageRecord[] } | { kind: "condensed"; summaries: SummaryRecord[] };

async function loadSources(plan: LeafPlan | CondensedPlan, store: PassReadStore): Promise<Sources | null> {
  if (plan.kind === "leaf") {
    const messages = await store.getMessages(plan.items.map((item) => item.messageId!));
    return messages.length === plan.items.length ? { kind: "leaf", messages } : null;
  }
  const summaries = await store.getSummariesByRowIds(plan.items.map((item) => item.summaryRowId!));
  return summaries.length === plan.items.length ? { kind: "condensed", summaries } : null;
}

/**
 * Longest text of one source message the summarizer reads whole: about the chunk's tokens in characters of
 * English (four per token). Longer messages keep their head and tail (source-text.ts), so the summarizer's input
 * stays within what a chunk may be, whatever one message holds.
 */
export function sourceCharsFor(chunkTokens: number): number {
  return Math.max(2_000, chunkTokens * 4);
}

/**
 * Context tokens of an empty summary's wrapper: a chunk must be clearly larger than this to be worth a pass.
 * Measured with the estimator in use, so the threshold means the same thing whatever the tokenizer.
 */
export function summaryWrapperTokens(tokens: TokenEstimator): number {
  return summaryContextTokens(
    {
      summaryId: PLACEHOLDER_SUMMARY_ID,
      kind: "condensed",
      depth: 9,
      descendantCount: 9_999,
      earliestAt: 0,
      latestAt: 0,
      content: "",
      parentSummaryIds: [],
    },
    tokens,
  );
}
