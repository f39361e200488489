/**
 * CompactionEngine: the loops around single passes. Incremental (after a turn: one leaf pass, then condensation
 * up to incrementalMaxDepth), full sweep (leaf passes until none is eligible, then condensation depth by depth)
 * and budget-targeted (sweeps, at most MAX_ROUNDS, until under a target). Every loop is bounded by a pass cap, a
 * deadline and the abort signal; a pass that cannot shrink its sources ends the phase instead of repeating.
 * Results are measured from the store before and after, so they are the truth whatever happened in between.
 * The context is read once per run and kept up to date in memory after each applied pass.
 */
import type { Clock, Logger, Summarizer, TokenEstimator } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import type { ConversationId, SummaryLevel } from "../records.js";
import type { CompactionItem, CompactionStore } from "../store/compaction-store.js";
import type { ConversationStore } from "../store/store.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import { type PassOutcome, type PassReadStore, executePass, summaryWrapperTokens } from "./compaction-pass.js";
import { type CondensedPlan, planCondensedPass } from "./condensed-planner.js";
import { type LeafPlan, freshTailTokens, planLeafPass, rawTokensOutsideFreshTail } from "./leaf-planner.js";

export const MAX_ROUNDS = 10;
export const MAX_PASSES_PER_RUN = 400;
/** Re-plans after a concurrent writer changed a planned range, before giving up on the phase. */
const MAX_STALE_RETRIES = 3;
/** A chunk must exceed the summary wrapper by this much to be worth summarizing. */
const MINIMUM_CONTENT_TOKENS = 32;

export type CompactionSettings = Pick<
  LcmConfig,
  | "freshTailCount" | "leafMinFanout" | "condensedMinFanout" | "condensedMinFanoutHard" | "incrementalMaxDepth"
  | "leafChunkTokens" | "leafTargetTokens" | "condensedTargetTokens" | "summaryTimeoutMs"
>;

export interface CompactionEngineDeps {
  store: PassReadStore & Pick<ConversationStore, "getConversation">;
  compactionStore: CompactionStore;
  summarizer: Summarizer;
  breaker: CircuitBreaker;
  tokens: TokenEstimator;
  clock: Clock;
  config: CompactionSettings;
  logger: Logger;
  /** Monotonic milliseconds for deadlines (default performance.now), kept apart from the record clock. */
  monotonicNow?: () => number;
}

export interface RunOptions {
  /** Wall-clock budget of the whole run, in milliseconds. */
  deadlineMs: number;
  signal?: AbortSignal;
  customInstructions?: string;
}

export type StopReason =
  | "nothing-to-do" | "done" | "under-target" | "fresh-tail-exceeds-target" | "no-progress" | "max-rounds"
  | "max-passes" | "deadline" | "aborted" | "summarizer-unavailable";

export interface PassRecord {
  kind: "leaf" | "condensed";
  summaryId: string;
  depth: number;
  level: SummaryLevel;
  tokensRemoved: number;
  tokensAdded: number;
}

export interface CompactionRun {
  tokensBefore: number;
  tokensAfter: number;
  passes: PassRecord[];
  rounds: number;
  stopReason: StopReason;
  freshTailTokens: number;
}

export class CompactionEngine {
  private readonly monotonicNow: () => number;
  private readonly minimumSourceTokens: number;

  constructor(private readonly deps: CompactionEngineDeps) {
    this.monotonicNow = deps.monotonicNow ?? (() => performance.now());
    this.minimumSourceTokens = summaryWrapperTokens(deps.tokens) + MINIMUM_CONTENT_TOKENS;
  }

  /** After a committed turn: one leaf pass when the raw backlog passes leafChunkTokens, then shallow condensation. */
  async runIncremental(conversationId: ConversationId, options: RunOptions): Promise<CompactionRun> {
    const run = await this.start(conversationId, options);
    const backlog = rawTokensOutsideFreshTail(run.items, this.deps.config.freshTailCount);
    if (backlog <= this.deps.config.leafChunkTokens) return this.finish(run, "nothing-to-do");
    if (!this.deps.breaker.allowsCall()) return this.finish(run, "summarizer-unavailable");
    const leaf = await this.step(run, this.planLeaf(run, false));
    if (leaf !== "continue") return this.finish(run, leaf === "phase-over" ? "no-progress" : leaf);
    const condensed = await this.condense(run, false, this.deps.config.incrementalMaxDepth - 1);
    return this.finish(run, condensed);
  }

  /** One full sweep: every eligible leaf pass, then condensation depth by depth. */
  async sweep(conversationId: ConversationId, options: RunOptions & { hard: boolean }): Promise<CompactionRun> {
    const run = await this.start(conversationId, options);
    run.rounds = 1;
    return this.finish(run, await this.sweepRound(run, options.hard, null));
  }

  /**
   * Sweeps (at most MAX_ROUNDS) until the context is at or under `targetTokens`. With `fullFirstRound`, the first
   * sweep runs to completion even below the target (an explicit /compact). When the fresh tail alone exceeds the
   * target, one complete sweep compacts everything else and the result says why the target was missed.
   */
  async compactUntilUnder(
    conversationId: ConversationId,
    targetTokens: number,
    options: RunOptions & { hard: boolean; fullFirstRound: boolean },
  ): Promise<CompactionRun> {
    const run = await this.start(conversationId, options);
    if (run.freshTailTokens > targetTokens) {
      run.rounds = 1;
      const stop = await this.sweepRound(run, options.hard, null);
      return this.finish(run, stop === "done" || stop === "no-progress" ? "fresh-tail-exceeds-target" : stop);
    }
    while (run.rounds < MAX_ROUNDS) {
      const isFullRound = options.fullFirstRound && run.rounds === 0;
      if (!isFullRound && run.contextTokens <= targetTokens) return this.finish(run, "under-target");
      run.rounds++;
      const passesBefore = run.passes.length;
      const stop = await this.sweepRound(run, options.hard, isFullRound ? null : targetTokens);
      if (stop !== "done" && stop !== "under-target") return this.finish(run, stop);
      if (run.passes.length === passesBefore) {
        return this.finish(run, run.contextTokens <= targetTokens ? "under-target" : "no-progress");
      }
    }
    return this.finish(run, run.contextTokens <= targetTokens ? "under-target" : "max-rounds");
  }

  private async sweepRound(run: RunState, hard: boolean, stopBelow: number | null): Promise<StopReason> {
    for (;;) {
      if (stopBelow !== null && run.contextTokens <= stopBelow) return "under-target";
      const plan = this.planLeaf(run, hard);
      if (!plan) break;
      const outcome = await this.step(run, plan);
      if (outcome === "phase-over") break;
      if (outcome !== "continue") return outcome;
    }
    return this.condense(run, hard, Number.POSITIVE_INFINITY, stopBelow);
  }

  private async condense(run: RunState, hard: boolean, maxSourceDepth: number, stopBelow: number | null = null): Promise<StopReason> {
    for (;;) {
      if (stopBelow !== null && run.contextTokens <= stopBelow) return "under-target";
      const plan = planCondensedPass(run.items, {
        freshTailCount: this.deps.config.freshTailCount,
        minFanout: hard ? this.deps.config.condensedMinFanoutHard : this.deps.config.condensedMinFanout,
        chunkTokens: this.deps.config.leafChunkTokens,
        maxSourceDepth,
        minimumSourceTokens: this.minimumSourceTokens,
      });
      if (!plan) return "done";
      const outcome = await this.step(run, plan);
      if (outcome === "phase-over") return "done";
      if (outcome !== "continue") return outcome;
    }
  }

  private planLeaf(run: RunState, hard: boolean): LeafPlan | null {
    return planLeafPass(run.items, {
      freshTailCount: this.deps.config.freshTailCount,
      minFanout: hard ? 1 : this.deps.config.leafMinFanout,
      chunkTokens: this.deps.config.leafChunkTokens,
      minimumSourceTokens: this.minimumSourceTokens,
    });
  }

  /**
   * Runs one pass if the bounds allow it and folds the outcome into the run: "continue" (plan the next pass),
   * "phase-over" (this pass could not shrink its sources; planning it again would loop) or why the run stops.
   */
  private async step(run: RunState, plan: LeafPlan | CondensedPlan | null): Promise<StepResult> {
    if (!plan) return "nothing-to-do";
    if (run.signal?.aborted) return "aborted";
    const remaining = run.deadline - this.monotonicNow();
    if (remaining <= 0) return "deadline";
    if (run.passes.length >= MAX_PASSES_PER_RUN) return "max-passes";
    const outcome = await executePass(
      plan,
      {
        conversationId: run.conversationId,
        timeoutMs: Math.max(1, Math.min(this.deps.config.summaryTimeoutMs, Math.floor(remaining))),
        ...(run.signal ? { signal: run.signal } : {}),
        ...(run.customInstructions ? { customInstructions: run.customInstructions } : {}),
      },
      this.deps,
    );
    return this.record(run, plan, outcome);
  }

  private async record(run: RunState, plan: LeafPlan | CondensedPlan, outcome: PassOutcome): Promise<StepResult> {
    switch (outcome.kind) {
      case "aborted":
        return "aborted";
      case "not-reducible":
        this.deps.logger.info("compaction pass could not shrink its sources; stopping this phase", { kind: plan.kind });
        return "phase-over";
      case "stale":
        // The context changed under us (another writer). Re-read it and let the loop plan again.
        this.deps.logger.info("compaction pass skipped: the planned range changed", { reason: outcome.reason });
        run.items = await this.deps.compactionStore.listCompactionItems(run.conversationId);
        run.contextTokens = (await this.deps.store.getConversation(run.conversationId))?.contextTokens ?? run.contextTokens;
        run.staleCount++;
        return run.staleCount > MAX_STALE_RETRIES ? "phase-over" : "continue";
      case "applied": {
        const first = plan.items[0]!;
        const index = run.items.findIndex((item) => item.ordinal === first.ordinal);
        run.items.splice(index, plan.items.length, {
          ordinal: first.ordinal, messageId: null, summaryRowId: outcome.summaryRowId,
          tokenCount: outcome.tokensAdded, flags: 0, depth: outcome.depth,
        });
        run.contextTokens += outcome.tokensAdded - outcome.tokensRemoved;
        const record: PassRecord = {
          kind: plan.kind, summaryId: outcome.summaryId, depth: outcome.depth, level: outcome.level,
          tokensRemoved: outcome.tokensRemoved, tokensAdded: outcome.tokensAdded,
        };
        run.passes.push(record);
        this.deps.logger.info(
          `compaction pass: ${record.kind} d${record.depth} level=${record.level} ${record.tokensRemoved} -> ${record.tokensAdded} tokens`,
          { summaryId: record.summaryId },
        );
        return "continue";
      }
    }
  }

  private async start(conversationId: ConversationId, options: RunOptions): Promise<RunState> {
    const conversation = await this.deps.store.getConversation(conversationId);
    const items = await this.deps.compactionStore.listCompactionItems(conversationId);
    return {
      conversationId,
      items,
      tokensBefore: conversation?.contextTokens ?? 0,
      contextTokens: conversation?.contextTokens ?? 0,
      freshTailTokens: freshTailTokens(items, this.deps.config.freshTailCount),
      passes: [],
      rounds: 0,
      staleCount: 0,
      deadline: this.monotonicNow() + options.deadlineMs,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.customInstructions ? { customInstructions: options.customInstructions } : {}),
    };
  }

  private async finish(run: RunState, stopReason: StopReason): Promise<CompactionRun> {
    const conversation = await this.deps.store.getConversation(run.conversationId);
    return {
      tokensBefore: run.tokensBefore,
      tokensAfter: conversation?.contextTokens ?? run.contextTokens,
      passes: run.passes,
      rounds: run.rounds,
      stopReason,
      freshTailTokens: run.freshTailTokens,
    };
  }
}

type StepResult = "continue" | "phase-over" | StopReason;

interface RunState {
  conversationId: ConversationId;
  items: CompactionItem[];
  tokensBefore: number;
  contextTokens: number;
  freshTailTokens: number;
  passes: PassRecord[];
  rounds: number;
  staleCount: number;
  deadline: number;
  signal?: AbortSignal;
  customInstructions?: string;
}
