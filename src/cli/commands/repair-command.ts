/**
 * `lcm repair …`: repairs of the summary DAG (spec 027) through the repair service, each previewed (old and new side by
 * side) and written only with --apply, in one transaction with its undo record, the integrity checker run before and
 * after; `undo` restores a repair exactly; `fallbacks` redoes the fallback summaries with a model. The model: the
 * host's under `openclaw lcm`, else the standalone Anthropic client (ANTHROPIC_API_KEY and summaryModel).
 */
import { readFileSync } from "node:fs";
import { isLcmError } from "../../errors.js";
import { type FallbackRedoOutcome, redoFallbackSummaries } from "../../repair/fallback-redo.js";
import { repairServiceOn } from "../../repair/repair-wiring.js";
import type { RepairOutcome, RepairProposal, RepairRequest } from "../../repair/summary-repair-service.js";
import type { RepairRecord } from "../../store/repair-store.js";
import { createSummarizerSelector } from "../../summarize/summarizer-selection.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { count, preview } from "../format.js";
import { isoOrNever } from "../../search/iso-time.js";
import { sideBySide } from "../side-by-side.js";

/** A proposal as printed with --json: what would change (the store's plan stays inside). */
export type ProposalView = RepairProposal extends infer Proposal ? Proposal extends RepairProposal ? Omit<Proposal, "plan"> : never : never;

export function proposalView(proposal: RepairProposal): ProposalView {
  const { plan: _plan, ...view } = proposal;
  return view as ProposalView;
}

export interface RepairOutput {
  applied: boolean;
  proposal: ProposalView;
  outcome: RepairOutcome | null;
}

export function repairService(runtime: CliRuntime, write: boolean) {
  const { config } = runtime.settings;
  const stores = runtime.open(write ? "write" : "read");
  const { logger } = runtime;
  return repairServiceOn({
    backend: stores.backend, config, tokens: runtime.tokens, clock: runtime.clock, logger, integrity: stores.integrity,
    summarizers: createSummarizerSelector({ config, tokens: runtime.tokens, pluginLlm: runtime.environment.model, env: runtime.environment.env }),
  });
}

export async function repairCommand(runtime: CliRuntime, request: RepairRequest, options: { apply: boolean }): Promise<CommandOutput<RepairOutput>> {
  const { service } = repairService(runtime, options.apply);
  const proposal = await reported(service.propose(request.kind === "resummarize" ? { ...request, model: runtime.environment.model } : request));
  const outcome = options.apply ? await reported(service.apply(proposal)) : null;
  const view = proposalView(proposal);
  const lines = [describeProposal(view), ""];
  lines.push(outcome
    ? `Applied as repair ${outcome.repairId} (integrity findings in conversation ${outcome.conversationId}: ${outcome.findings.before} before, ${outcome.findings.after} after). ` +
        `Undo with: lcm repair undo ${outcome.repairId}`
    : "Preview only: nothing was written. Add --apply to make this change (it can be undone).");
  return { data: { applied: outcome !== null, proposal: view, outcome }, text: lines.join("\n") };
}

export async function undoCommand(runtime: CliRuntime, repairId: number): Promise<CommandOutput<{ undone: RepairRecord }>> {
  const { service } = repairService(runtime, true);
  const undone = await service.undo(repairId);
  return { data: { undone }, text: `Undid repair ${repairId} (${undone.kind} of ${undone.summaryId}): the rows hold what they held before it.` };
}

export async function listRepairsCommand(runtime: CliRuntime, options: { conversation?: number; limit: number }): Promise<CommandOutput<{ repairs: RepairRecord[] }>> {
  const { repairs } = repairService(runtime, false);
  const list = await repairs.listRepairs({ limit: options.limit, ...(options.conversation !== undefined ? { conversationId: options.conversation } : {}) });
  const lines = list.length === 0 ? ["No repairs recorded."] : list.map((repair) =>
    `#${repair.repairId} ${repair.kind} ${repair.summaryId} · conversation ${repair.conversationId} · ${isoOrNever(repair.createdAt)}` +
      (repair.undoneAt === null ? "" : ` · undone ${isoOrNever(repair.undoneAt)}`));
  return { data: { repairs: list }, text: lines.join("\n") };
}

export async function fallbacksCommand(
  runtime: CliRuntime, options: { conversation?: number; limit: number; apply: boolean },
): Promise<CommandOutput<{ applied: boolean; fallbacks: { summaryId: string; conversationId: number; depth: number }[]; redo: FallbackRedoOutcome | null }>> {
  const { service, repairs } = repairService(runtime, options.apply);
  const filter = { limit: options.limit, ...(options.conversation !== undefined ? { conversationId: options.conversation } : {}) };
  const fallbacks = await repairs.fallbackSummaries(filter);
  if (!options.apply) {
    const text = fallbacks.length === 0
      ? "No fallback summaries: every summary was written by a summarizer."
      : [`${count(fallbacks.length)} fallback summaries (truncations written while no model answered):`,
        ...fallbacks.map((summary) => `  ${summary.summaryId} · conversation ${summary.conversationId} · depth ${summary.depth}`),
        "Add --apply to re-summarize them with the model (each one is recorded and can be undone)."].join("\n");
    return { data: { applied: false, fallbacks, redo: null }, text };
  }
  const redo = await redoFallbackSummaries(service, repairs, { ...filter, model: runtime.environment.model });
  const lines = [`Redid ${count(redo.redone.length)} of ${count(redo.found)} fallback summaries.`,
    ...redo.redone.map((outcome) => `  repair ${outcome.repairId}: ${outcome.summaryId}`)];
  if (redo.stopped) lines.push(`Stopped: ${redo.stopped}`);
  const exitCode = redo.stopped && redo.redone.length < redo.found ? EXIT.internal : EXIT.ok;
  return { data: { applied: true, fallbacks, redo }, text: lines.join("\n"), exitCode };
}

/** A repair that could not be done (no model, a model that failed, rows changed meanwhile) exits 1 with its own message. */
async function reported<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isLcmError(error) && (error.code === "summarizer" || error.code === "aborted" || error.code === "storage")) {
      throw new CliError(EXIT.internal, error.message, error.code);
    }
    throw error;
  }
}

/** The --text or --file of `repair rewrite`, exactly one. */
export function rewriteText(options: { text?: string; file?: string }): string {
  if ((options.text === undefined) === (options.file === undefined)) {
    throw new CliError(EXIT.usage, "Give the new text with exactly one of --text <text> or --file <path>.");
  }
  if (options.text !== undefined) return options.text;
  try {
    return readFileSync(options.file!, "utf8");
  } catch (error) {
    throw new CliError(EXIT.usage, `Cannot read --file ${options.file}: ${(error as Error).message}`);
  }
}

function describeProposal(proposal: ProposalView): string {
  const head = `${proposal.kind} ${proposal.summaryId} (conversation ${proposal.conversationId})`;
  if (proposal.kind === "dissolve") {
    return [
      `${head}: the context shows its ${proposal.parents.length} parents instead ` +
        `(${count(proposal.contextTokens.before)} → ${count(proposal.contextTokens.after)} context tokens)`,
      ...proposal.parents.map((parent) => `  ${parent.summaryId} · ${count(parent.contextTokenCount)} tokens · “${preview(parent.content, 90)}”`),
    ].join("\n");
  }
  const side = (label: string, text: RepairProposal["old"]) =>
    `${label} · ${text.level} · ${count(text.tokenCount)} tokens${text.writtenBy ? ` · ${text.writtenBy}` : ""}`;
  return `${head}${proposal.summarizer ? ` with ${proposal.summarizer}` : ""}\n` +
    sideBySide({ title: side("now", proposal.old), text: proposal.old.content }, { title: side("new", proposal.new), text: proposal.new.content });
}
