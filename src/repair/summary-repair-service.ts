/**
 * Repairs of the summary DAG, host-free (spec 027), for `lcm repair` and the inspector: re-summarize a summary with
 * a model (the host's or the standalone Anthropic client, through the same selection, spend guard and escalation as
 * compaction), rewrite one by hand, or dissolve a condensed summary back into its parents in the context. Each is
 * first a proposal (old and new side by side, nothing written), then one store transaction with its undo record;
 * the integrity checker runs on the conversation before and after, and a repair after which it finds something new
 * is undone at once. Undo restores the rows exactly.
 */
import { summaryContextTokens } from "../assembly/summary-message.js";
import { sharedCircuitBreaker } from "../compaction/circuit-breaker.js";
import { sourceCharsFor } from "../compaction/compaction-pass.js";
import { summarizeWithEscalation } from "../compaction/escalation.js";
import { renderMessageSources, renderSummarySources } from "../compaction/source-text.js";
import type { LcmConfig } from "../config.js";
import type { Clock, CompletionModel, Logger, TokenEstimator } from "../contracts.js";
import { LcmError } from "../errors.js";
import type { Finding } from "../integrity/findings.js";
import type { IntegrityChecker } from "../integrity/integrity-checker.js";
import { processMetrics } from "../metrics/lcm-metrics.js";
import type { SummaryLevel, SummaryRecord } from "../records.js";
import type { CompactionStore } from "../store/compaction-store.js";
import type { DissolvePlan, RepairRecord, RepairStore, RepairTarget, TextRepairPlan } from "../store/repair-store.js";
import type { MessageStore, SummaryReadStore } from "../store/store.js";
import { ExtractiveSummarizer } from "../summarize/extractive-summarizer.js";
import type { SummarizerSelector } from "../summarize/summarizer-selection.js";
import { type SpendGuard, sharedSpendGuard, spendKey, spendLimitsOf } from "../services/spend-guard.js";
import { SummarizationService } from "../services/summarization-service.js";

export interface SummaryRepairDeps {
  repairs: RepairStore;
  store: Pick<MessageStore, "getMessages"> & SummaryReadStore;
  compactionStore: Pick<CompactionStore, "getSummarySources">;
  integrity: Pick<IntegrityChecker, "check" | "checkRecent">;
  summarizers: SummarizerSelector;
  config: LcmConfig;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  /** The database file, naming the spend guard's key of each conversation. */
  databasePath: string;
  spendGuard?: SpendGuard;
}

export type RepairRequest =
  | { kind: "resummarize"; summaryId: string; model?: CompletionModel | undefined; instructions?: string; signal?: AbortSignal }
  | { kind: "rewrite"; summaryId: string; content: string }
  | { kind: "dissolve"; summaryId: string };

/** One side of a text repair: what the summary holds (old) or would hold (new). */
export interface SummaryText {
  content: string;
  tokenCount: number;
  /** What its context item costs (null when no context item shows it). */
  contextTokenCount: number | null;
  level: SummaryLevel;
  writtenBy: string | null;
}

/** What a repair would do, computed without writing: shown side by side, applied as is. */
export type RepairProposal =
  | { kind: "resummarize" | "rewrite"; summaryId: string; conversationId: number; old: SummaryText; new: SummaryText; summarizer: string | null; plan: TextRepairPlan }
  | {
      kind: "dissolve"; summaryId: string; conversationId: number; old: SummaryText;
      parents: { summaryId: string; contextTokenCount: number; content: string }[];
      contextTokens: { before: number; after: number };
      plan: DissolvePlan;
    };

export interface ApplyOptions {
  /**
   * What the integrity checker verifies before and after: the whole conversation with the full-text indexes
   * (default: an operator's repair), or its newest context only (maintain's automatic redo, which must stay bounded).
   */
  integrity?: "conversation" | "recent";
}

export interface RepairOutcome {
  repairId: number;
  kind: RepairProposal["kind"];
  summaryId: string;
  conversationId: number;
  /** Integrity findings of the conversation before and after (a repair that adds one is undone). */
  findings: { before: number; after: number };
}

export class SummaryRepairService {
  private readonly summarization: SummarizationService;

  constructor(private readonly deps: SummaryRepairDeps) {
    this.summarization = new SummarizationService({
      select: deps.summarizers,
      deterministic: new ExtractiveSummarizer({ tokens: deps.tokens }),
      guard: deps.spendGuard ?? sharedSpendGuard(),
      limits: spendLimitsOf(deps.config),
      metrics: processMetrics(),
      clock: deps.clock,
      logger: deps.logger,
    });
  }

  /** What the repair would write, side by side with what is there; writes nothing. Throws LcmError when it cannot be done. */
  async propose(request: RepairRequest): Promise<RepairProposal> {
    const target = await this.deps.repairs.repairTarget(request.summaryId);
    const record = target && await this.deps.store.getSummary(request.summaryId);
    if (!target || !record) {
      throw new LcmError("not_found", `No summary ${request.summaryId} is stored; the DAG view (lcm dag <conversation>) lists the ids.`);
    }
    if (request.kind === "dissolve") return this.proposeDissolve(target);
    const now = this.deps.clock.now();
    if (request.kind === "rewrite") {
      const content = request.content.trim();
      if (content === "") throw new LcmError("invalid_input", "The new text is empty: give the summary's new text (--text or --file).");
      const next = this.measure(record, content, "normal", "hand", target);
      if (next.tokenCount > record.sourceTokenCount) {
        throw new LcmError("invalid_input",
          `The new text costs ${next.tokenCount} tokens, more than the ${record.sourceTokenCount} tokens it summarizes: a summary must be smaller than its sources. Shorten it.`);
      }
      return this.textProposal("rewrite", target, record, next, null, { reason: "rewritten by hand" }, now);
    }
    const run = this.summarization.forRun({ spendKey: spendKey(this.deps.databasePath, target.conversationId), sessionModel: request.model });
    if (!run.usesModel) {
      throw new LcmError("summarizer",
        "No model to re-summarize with: run it under OpenClaw (`openclaw lcm repair …`, the host's model) or set ANTHROPIC_API_KEY and " +
          "summaryModel (LCM_SUMMARY_MODEL) for the standalone Anthropic summarizer. Rewriting by hand needs no model.", { noModel: true });
    }
    const sourceText = await this.sourceText(target, record);
    const escalation = await summarizeWithEscalation({
      request: { sourceText, depth: record.depth, ...(request.instructions ? { customInstructions: request.instructions } : {}) },
      targetTokens: record.kind === "leaf" ? this.deps.config.leafTargetTokens : this.deps.config.condensedTargetTokens,
      sourceTokens: Math.max(record.sourceTokenCount, (target.contextTokenCount ?? 0) + 1),
      measure: (text) => summaryContextTokens({ ...record, content: text }, this.deps.tokens),
      summarizer: run.summarizer, breaker: sharedCircuitBreaker(run.key), tokens: this.deps.tokens,
      timeoutMs: this.deps.config.summaryTimeoutMs, logger: this.deps.logger,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (escalation.kind !== "summarized" || escalation.level === "fallback" || run.divertedCalls() > 0) {
      const why = run.divertedCalls() > 0
        ? "the spend guard refused the model call (maxSummaryCallsPerWindow); try again when the window frees calls"
        : escalation.attempts.map((attempt) => `${attempt.mode}: ${attempt.outcome}${attempt.detail ? ` (${attempt.detail})` : ""}`).join("; ");
      throw new LcmError("summarizer", `The model gave no usable summary for ${target.summaryId}, so nothing changes: ${why || escalation.kind}.`);
    }
    const next = this.measure(record, escalation.text, escalation.level, `model:${run.key}`, target);
    return this.textProposal("resummarize", target, record, next, run.key, { summarizer: run.key, attempts: escalation.attempts }, now);
  }

  /** Applies a proposal in one transaction (undo record first); undoes it at once if the integrity check then finds something new. */
  async apply(proposal: RepairProposal, options: ApplyOptions = {}): Promise<RepairOutcome> {
    const conversationId = proposal.conversationId;
    const scope = options.integrity ?? "conversation";
    const before = await this.findings(conversationId, scope);
    const written = proposal.kind === "dissolve"
      ? await this.deps.repairs.applyDissolve(proposal.plan)
      : await this.deps.repairs.applyText(proposal.plan);
    if (written.kind === "stale") throw new LcmError("aborted", `Nothing was changed: ${written.reason}.`);
    const after = await this.findings(conversationId, scope);
    const known = new Set(before.map(findingKey));
    const added = after.filter((finding) => !known.has(findingKey(finding)));
    if (added.length > 0) {
      await this.deps.repairs.undo(written.repairId, this.deps.clock.now());
      throw new LcmError("storage",
        `The integrity check found ${added.map((finding) => `${finding.kind} (${finding.detail})`).join("; ")} after repair ${written.repairId}, so it was undone.`);
    }
    this.deps.logger.info(`repair ${written.repairId}: ${proposal.kind} of ${proposal.summaryId}`, {
      conversation_id: conversationId, summary_id: proposal.summaryId,
    });
    return { repairId: written.repairId, kind: proposal.kind, summaryId: proposal.summaryId, conversationId, findings: { before: before.length, after: after.length } };
  }

  /** Restores what a repair replaced, exactly; throws LcmError when the rows changed since. */
  async undo(repairId: number): Promise<RepairRecord> {
    const result = await this.deps.repairs.undo(repairId, this.deps.clock.now());
    if (result.kind === "refused") throw new LcmError(result.reason.startsWith("no repair") ? "not_found" : "invalid_input", `Nothing was undone: ${result.reason}.`);
    return result.repair;
  }

  private async proposeDissolve(target: RepairTarget): Promise<RepairProposal> {
    if (target.kind !== "condensed") {
      throw new LcmError("invalid_input", `${target.summaryId} is a leaf summary: only a condensed summary can be dissolved into its parents.`);
    }
    if (target.contextOrdinals.length !== 1 || target.contextTokenCount === null) {
      throw new LcmError("invalid_input",
        `${target.summaryId} is not in the context (it was condensed into another summary): dissolve the summary the context shows instead.`);
    }
    const sources = await this.deps.compactionStore.getSummarySources(target.rowId);
    const parents = await this.deps.store.getSummariesByRowIds(sources.parentRowIds);
    const placed = parents.map((parent, index) => ({
      rowId: sources.parentRowIds[index]!, summaryId: parent.summaryId,
      contextTokenCount: summaryContextTokens(parent, this.deps.tokens), content: parent.content,
    }));
    const after = placed.reduce((total, parent) => total + parent.contextTokenCount, 0);
    return {
      kind: "dissolve", summaryId: target.summaryId, conversationId: target.conversationId, old: textOf(target),
      parents: placed.map(({ summaryId, contextTokenCount, content }) => ({ summaryId, contextTokenCount, content })),
      contextTokens: { before: target.contextTokenCount, after },
      plan: {
        target, parents: placed.map(({ rowId, summaryId, contextTokenCount }) => ({ rowId, summaryId, contextTokenCount })),
        detail: { parents: placed.length, reason: "dissolved into its parents" }, now: this.deps.clock.now(),
      },
    };
  }

  private textProposal(
    kind: "resummarize" | "rewrite", target: RepairTarget, record: SummaryRecord, next: SummaryText, summarizer: string | null,
    detail: Record<string, unknown>, now: number,
  ): RepairProposal {
    const plan: TextRepairPlan = {
      kind, target, content: next.content, tokenCount: next.tokenCount,
      contextTokenCount: next.contextTokenCount ?? summaryContextTokens({ ...record, content: next.content }, this.deps.tokens),
      level: next.level, writtenBy: next.writtenBy ?? "hand", detail, now,
    };
    return { kind, summaryId: target.summaryId, conversationId: target.conversationId, old: textOf(target), new: next, summarizer, plan };
  }

  private measure(record: SummaryRecord, content: string, level: SummaryLevel, writtenBy: string, target: RepairTarget): SummaryText {
    return {
      content, tokenCount: this.deps.tokens.estimate(content), level, writtenBy,
      contextTokenCount: target.contextOrdinals.length > 0 ? summaryContextTokens({ ...record, content }, this.deps.tokens) : null,
    };
  }

  private async sourceText(target: RepairTarget, record: SummaryRecord): Promise<string> {
    const sources = await this.deps.compactionStore.getSummarySources(target.rowId);
    if (record.kind === "leaf") {
      const messages = await this.deps.store.getMessages(sources.messageIds);
      return renderMessageSources(messages, sourceCharsFor(this.deps.config.leafChunkTokens));
    }
    return renderSummarySources(await this.deps.store.getSummariesByRowIds(sources.parentRowIds));
  }

  private async findings(conversationId: number, scope: "conversation" | "recent"): Promise<Finding[]> {
    const report = scope === "recent"
      ? await this.deps.integrity.checkRecent(conversationId)
      : await this.deps.integrity.check({ conversationId, includeIndexes: true });
    return report.findings;
  }
}

function textOf(target: RepairTarget): SummaryText {
  return { content: target.content, tokenCount: target.tokenCount, contextTokenCount: target.contextTokenCount, level: target.level, writtenBy: target.writtenBy };
}

function findingKey(finding: Finding): string {
  return `${finding.kind}|${finding.conversationId}|${finding.subject}`;
}
