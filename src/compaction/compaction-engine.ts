/**
 * CompactionEngine: the loops around single passes. Incremental (after a turn: one leaf pass, then condensation
 * up to incrementalMaxDepth), full sweep (leaf passes until none is eligible, then condensation depth by depth)
 * and budget-targeted (sweeps until under a target, reaching step by step into the fresh tail when the tail
 * itself is what does not fit). Every loop is bounded by a pass cap, a round cap, a deadline and the abort
 * signal; a chunk that cannot be shrunk is skipped, never planned again in the same phase.
 *
 * Planning is linear: a phase finds the fresh tail once (walking back from the newest item), plans each pass from
 * where the last one ended, and rebuilds the item list once, so a sweep over n items costs O(n) planning, not O(n)
 * per pass. Nothing in it walks the whole list in one synchronous stretch but one native copy and one sum that
 * allocates nothing (a few ms each at a million items), so a huge backlog never holds the event loop. Before each
 * pass the run takes a turn of the event loop (event-loop-pacer.ts): a summarizer that answers without I/O (the
 * deterministic summary) would otherwise make the whole run one block.
 * Results are measured from the store before and after, so they are the truth whatever happened in between.
 */
import type { Clock, Logger, Summarizer, TokenEstimator } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import type { ConversationId, SummaryLevel } from "../records.js";
import type { CompactionItem, CompactionStore } from "../store/compaction-store.js";
import type { ConversationStore } from "../store/store.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import { type PassOutcome, type PassReadStore, executePass, summaryWrapperTokens } from "./compaction-pass.js";
import type { ScaledSettings } from "./compaction-targets.js";
import { type CondensedPlan, planCondensedPasses, summaryDepths } from "./condensed-planner.js";
import { type TailPolicy, findFreshTail, rawTokensOutsideTail } from "./context-units.js";
import { EventLoopPacer } from "./event-loop-pacer.js";
import { type LeafPlan, planLeafPass } from "./leaf-planner.js";

/** Sweeps one budget-targeted run may make, over all levels of the tail ladder. */
export const MAX_ROUNDS = 24;
/** Passes of one run beyond twice its item count (every pass removes an item or shrinks a single one). */
export const BASE_PASSES_PER_RUN = 400;
/** Re-plans after a concurrent writer changed a planned range, before giving up on the phase. */
const MAX_STALE_RETRIES = 3;
/** A chunk must exceed the summary wrapper by this much to be worth summarizing. */
const MINIMUM_CONTENT_TOKENS = 32;
/** The tail ladder halves what the tail holds down to this, then protects nothing. */
const SMALLEST_TAIL_TOKENS = 64;

export type CompactionSettings = Pick<
  LcmConfig,
  "leafMinFanout" | "condensedMinFanout" | "condensedMinFanoutHard" | "incrementalMaxDepth" | "summaryTimeoutMs"
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
  /** Chunk sizes, summary targets and the fresh tail for the budget this run works toward. */
  sizes: ScaledSettings;
  signal?: AbortSignal;
  customInstructions?: string;
}

export type StopReason =
  | "nothing-to-do" | "done" | "under-target" | "cannot-fit" | "max-rounds" | "max-passes" | "deadline"
  | "aborted" | "summarizer-unavailable" | "elsewhere" | "superseded";

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
  /** Tokens of the fresh tail under the run's tail policy, at the start. */
  freshTailTokens: number;
  /** Whether the run had to compact messages of the fresh tail to reach its target. */
  reachedIntoTail: boolean;
}

export class CompactionEngine {
  private readonly monotonicNow: () => number;
  private readonly minimumSourceTokens: number;

  constructor(private readonly deps: CompactionEngineDeps) {
    this.monotonicNow = deps.monotonicNow ?? (() => performance.now());
    this.minimumSourceTokens = summaryWrapperTokens(deps.tokens) + MINIMUM_CONTENT_TOKENS;
  }

  /** After a committed turn: one leaf pass when the raw backlog passes the leaf chunk, then shallow condensation. */
  async runIncremental(conversationId: ConversationId, options: RunOptions): Promise<CompactionRun> {
    const run = await this.start(conversationId, options);
    const backlog = rawTokensOutsideTail(run.items, findFreshTail(run.items, options.sizes.tail));
    if (backlog <= options.sizes.leafChunkTokens) return this.finish(run, "nothing-to-do");
    if (!this.deps.breaker.allowsCall()) return this.finish(run, "summarizer-unavailable");
    const leaf = await this.leafPhase(run, false, options.sizes.tail, null, 1);
    if (leaf !== "done") return this.finish(run, leaf);
    return this.finish(run, await this.condensePhase(run, false, this.deps.config.incrementalMaxDepth - 1, null));
  }

  /** One full sweep: every eligible leaf pass, then condensation depth by depth. */
  async sweep(conversationId: ConversationId, options: RunOptions & { hard: boolean }): Promise<CompactionRun> {
    const run = await this.start(conversationId, options);
    run.rounds = 1;
    return this.finish(run, await this.sweepRound(run, options.hard, null, options.sizes.tail));
  }

  /**
   * Sweeps until the context is at or under `targetTokens`: at most MAX_ROUNDS in all. When a sweep makes no more
   * progress and the context is still over the target, the fresh tail's token share is halved and the sweep
   * repeats, down to protecting nothing: what does not fit is compacted like any other message. With
   * `fullFirstRound`, the first sweep runs to completion even below the target (an explicit /compact).
   */
  async compactUntilUnder(
    conversationId: ConversationId,
    targetTokens: number,
    options: RunOptions & { hard: boolean; fullFirstRound: boolean },
  ): Promise<CompactionRun> {
    const run = await this.start(conversationId, options);
    for (let tail: TailPolicy | null = options.sizes.tail; tail !== null; tail = this.lessProtection(run, tail)) {
      for (;;) {
        const isFullRound = options.fullFirstRound && run.rounds === 0;
        if (!isFullRound && run.contextTokens <= targetTokens) return this.finish(run, "under-target");
        if (run.rounds >= MAX_ROUNDS) return this.finish(run, "max-rounds");
        run.rounds++;
        const passesBefore = run.passes.length;
        const stop = await this.sweepRound(run, options.hard, isFullRound ? null : targetTokens, tail);
        if (stop !== "done" && stop !== "under-target") return this.finish(run, stop);
        if (run.passes.length === passesBefore) break; // nothing more at this level: protect less
        if (tail !== options.sizes.tail) run.reachedIntoTail = true;
      }
    }
    return this.finish(run, run.contextTokens <= targetTokens ? "under-target" : "cannot-fit");
  }

  /**
   * The next rung of the tail ladder: half the tokens the tail holds now, then nothing; null when the tail
   * already protects nothing.
   */
  private lessProtection(run: RunState, tail: TailPolicy): TailPolicy | null {
    const held = findFreshTail(run.items, tail).tokens;
    if (held === 0) return null;
    const maxTokens = Math.floor(held / 2);
    return maxTokens >= SMALLEST_TAIL_TOKENS ? { count: tail.count, maxTokens } : { count: 0, maxTokens: 0 };
  }

  private async sweepRound(run: RunState, hard: boolean, stopBelow: number | null, tail: TailPolicy): Promise<StopReason> {
    const leaf = await this.leafPhase(run, hard, tail, stopBelow, Number.POSITIVE_INFINITY);
    if (leaf !== "done") return leaf;
    return this.condensePhase(run, hard, Number.POSITIVE_INFINITY, stopBelow);
  }

  /**
   * Leaf passes from the oldest raw run to the fresh tail, at most `maxPasses`. The tail is found once; each plan
   * starts where the last one ended; the item list is rebuilt as passes apply, once over.
   */
  private async leafPhase(
    run: RunState, hard: boolean, tail: TailPolicy, stopBelow: number | null, maxPasses: number,
  ): Promise<StopReason> {
    const items = run.items;
    const freshTail = findFreshTail(items, tail);
    const rebuilt = new ItemListBuilder(items);
    const options = {
      minFanout: hard ? 1 : this.deps.config.leafMinFanout,
      chunkTokens: run.sizes.leafChunkTokens,
      minimumSourceTokens: this.minimumSourceTokens,
    };
    let cursor = 0;
    let previous: number | null = null;
    let applied = 0;
    let stop: StopReason = "done";
    while (applied < maxPasses) {
      if (stopBelow !== null && run.contextTokens <= stopBelow) {
        stop = "under-target";
        break;
      }
      const plan = planLeafPass(items, freshTail, cursor, options, previous);
      if (!plan) break;
      const step = await this.step(run, plan);
      if (step.kind === "stale") return this.restartAfterStale(run, () => this.leafPhase(run, hard, tail, stopBelow, maxPasses - applied));
      if (step.kind === "stop") {
        stop = step.reason;
        break;
      }
      cursor = plan.end;
      if (step.kind === "skipped") continue;
      rebuilt.replace(plan.start, plan.end - plan.start, step.item);
      previous = step.item.summaryRowId;
      applied++;
    }
    run.items = rebuilt.finish();
    return stop;
  }

  /** Condensation depth by depth, shallowest first, up to `maxSourceDepth` as the source depth. */
  private async condensePhase(run: RunState, hard: boolean, maxSourceDepth: number, stopBelow: number | null): Promise<StopReason> {
    const options = {
      minFanout: hard ? this.deps.config.condensedMinFanoutHard : this.deps.config.condensedMinFanout,
      chunkTokens: run.sizes.leafChunkTokens,
      minimumSourceTokens: this.minimumSourceTokens,
    };
    const depths = summaryDepths(run.items, run.items.length);
    if (depths.length === 0) return "done";
    for (let depth = depths[0]!; depth <= maxSourceDepth; depth++) {
      const items = run.items;
      if (!items.some((item) => item.summaryRowId !== null && item.depth !== null && item.depth >= depth)) return "done";
      const plans = planCondensedPasses(items, items.length, depth, options);
      const rebuilt = new ItemListBuilder(items);
      let lastApplied: { end: number; summaryRowId: number } | null = null;
      let stop: StopReason = "done";
      for (const planned of plans) {
        if (stopBelow !== null && run.contextTokens <= stopBelow) {
          stop = "under-target";
          break;
        }
        const follows = lastApplied !== null && lastApplied.end === planned.start;
        const plan: CondensedPlan = follows ? { ...planned, previousSummaryRowId: lastApplied!.summaryRowId } : planned;
        const step = await this.step(run, plan);
        if (step.kind === "stale") {
          run.items = rebuilt.finish();
          return this.restartAfterStale(run, () => this.condensePhase(run, hard, maxSourceDepth, stopBelow));
        }
        if (step.kind === "stop") {
          stop = step.reason;
          break;
        }
        if (step.kind === "skipped") continue;
        rebuilt.replace(plan.start, plan.end - plan.start, step.item);
        lastApplied = { end: plan.end, summaryRowId: step.item.summaryRowId! };
      }
      run.items = rebuilt.finish();
      if (stop !== "done") return stop;
    }
    return "done";
  }

  /** The context changed under us (another writer): re-read it and plan the phase again, a few times at most. */
  private async restartAfterStale(run: RunState, again: () => Promise<StopReason>): Promise<StopReason> {
    run.staleCount++;
    run.items = await this.deps.compactionStore.listCompactionItems(run.conversationId);
    run.contextTokens = (await this.deps.store.getConversation(run.conversationId))?.contextTokens ?? run.contextTokens;
    return run.staleCount > MAX_STALE_RETRIES ? "done" : again();
  }

  /** Runs one pass if the bounds allow it (after a turn of the event loop, when one is due) and folds the outcome in. */
  private async step(run: RunState, plan: LeafPlan | CondensedPlan): Promise<Step> {
    await run.pacer.yieldIfDue();
    if (run.signal?.aborted) return { kind: "stop", reason: "aborted" };
    const remaining = run.deadline - this.monotonicNow();
    if (remaining <= 0) return { kind: "stop", reason: "deadline" };
    if (run.passes.length >= run.maxPasses) return { kind: "stop", reason: "max-passes" };
    const outcome = await executePass(
      plan,
      {
        conversationId: run.conversationId,
        timeoutMs: Math.max(1, Math.min(this.deps.config.summaryTimeoutMs, Math.floor(remaining))),
        sizes: run.sizes,
        ...(run.signal ? { signal: run.signal } : {}),
        ...(run.customInstructions ? { customInstructions: run.customInstructions } : {}),
      },
      this.deps,
    );
    return this.record(run, plan, outcome);
  }

  private record(run: RunState, plan: LeafPlan | CondensedPlan, outcome: PassOutcome): Step {
    switch (outcome.kind) {
      case "aborted":
        return { kind: "stop", reason: "aborted" };
      case "not-reducible":
        this.deps.logger.info("compaction pass could not shrink its sources; skipping this chunk", { kind: plan.kind });
        return { kind: "skipped" };
      case "stale":
        this.deps.logger.info("compaction pass skipped: the planned range changed", { reason: outcome.reason });
        return { kind: "stale" };
      case "superseded":
        this.deps.logger.warn(`compaction run ended: ${outcome.reason}`);
        return { kind: "stop", reason: "superseded" };
      case "applied": {
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
        const item: CompactionItem = {
          ordinal: plan.items[0]!.ordinal, messageId: null, summaryRowId: outcome.summaryRowId,
          tokenCount: outcome.tokensAdded, flags: 0, depth: outcome.depth,
        };
        return { kind: "applied", item };
      }
    }
  }

  private async start(conversationId: ConversationId, options: RunOptions): Promise<RunState> {
    const conversation = await this.deps.store.getConversation(conversationId);
    const items = await this.deps.compactionStore.listCompactionItems(conversationId);
    return {
      conversationId,
      items,
      sizes: options.sizes,
      tokensBefore: conversation?.contextTokens ?? 0,
      contextTokens: conversation?.contextTokens ?? 0,
      freshTailTokens: findFreshTail(items, options.sizes.tail).tokens,
      passes: [],
      rounds: 0,
      staleCount: 0,
      reachedIntoTail: false,
      maxPasses: BASE_PASSES_PER_RUN + 2 * items.length,
      deadline: this.monotonicNow() + options.deadlineMs,
      pacer: new EventLoopPacer(this.monotonicNow),
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
      reachedIntoTail: run.reachedIntoTail,
    };
  }
}

/**
 * Builds the item list after a phase without splicing the old one per pass: items before a replaced range are
 * copied once, the range becomes its summary item, and what follows the last range is appended in one native
 * copy (a phase that stops early in a backlog of a million items leaves most of them: copied one by one, 35-140
 * ms of the event loop; by `concat`, about 12).
 */
class ItemListBuilder {
  private output: CompactionItem[] = [];
  private copiedUpTo = 0;
  private changed = false;

  constructor(private readonly items: readonly CompactionItem[]) {}

  replace(start: number, length: number, item: CompactionItem): void {
    for (let index = this.copiedUpTo; index < start; index++) this.output.push(this.items[index]!);
    this.output.push(item);
    this.copiedUpTo = start + length;
    this.changed = true;
  }

  finish(): CompactionItem[] {
    if (!this.changed) return this.items as CompactionItem[];
    if (this.copiedUpTo < this.items.length) this.output = this.output.concat(this.items.slice(this.copiedUpTo));
    this.copiedUpTo = this.items.length;
    return this.output;
  }
}

type Step =
  | { kind: "applied"; item: CompactionItem }
  | { kind: "skipped" }
  | { kind: "stale" }
  | { kind: "stop"; reason: StopReason };

interface RunState {
  conversationId: ConversationId;
  items: CompactionItem[];
  sizes: ScaledSettings;
  tokensBefore: number;
  contextTokens: number;
  freshTailTokens: number;
  passes: PassRecord[];
  rounds: number;
  staleCount: number;
  reachedIntoTail: boolean;
  maxPasses: number;
  deadline: number;
  pacer: EventLoopPacer;
  signal?: AbortSignal;
  customInstructions?: string;
}
