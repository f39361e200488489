/**
 * `lcm doctor [--conversation N] [--repair]`: the IntegrityChecker over every conversation (or one), with a progress
 * bar; `--repair` applies the repairs that cannot lose anything (recount, re-index, times brought into range) and
 * checks again. The full-text index check writes (SQLite runs FTS5's check as a write statement, and waiting
 * messages are indexed first), so it runs when the file is writable and is skipped, with a note, when it is not.
 * Exits 7 when problems remain.
 */
import type { Finding, RepairAction } from "../../integrity/findings.js";
import { type DoctorOutcome, runDoctor } from "../../services/integrity-service.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { EXIT } from "../exit-codes.js";
import { count, counted } from "../format.js";
import { requireConversation } from "./context-command.js";

export interface DoctorOutput {
  databasePath: string;
  indexesChecked: boolean;
  conversationsChecked: number;
  checksRun: number;
  durationMs: number;
  complete: boolean;
  findings: Finding[];
  repairsAvailable: RepairAction[];
  needsOperator: { kind: string; subject: string; advice: string }[];
  applied: RepairAction[];
  /** Findings left after the repairs (null when none were applied). */
  remaining: Finding[] | null;
  healthy: boolean;
}

export async function doctorCommand(runtime: CliRuntime, options: { conversation?: number; repair: boolean }): Promise<CommandOutput<DoctorOutput>> {
  const stores = runtime.open(options.repair ? "write" : "prefer-write");
  if (options.conversation !== undefined) await requireConversation(stores, options.conversation);
  const progress = runtime.progress("Checking");
  let outcome: DoctorOutcome;
  try {
    outcome = await runDoctor(stores.integrity, {
      ...(options.conversation !== undefined ? { conversationId: options.conversation } : {}),
      repair: options.repair,
      includeIndexes: !stores.readOnly,
      onProgress: (checked, total) => progress.update(checked, total, "conversations"),
    });
  } finally {
    progress.stop();
  }
  const { report, plan, applied, remaining } = outcome;
  const left = remaining ? remaining.findings : report.findings;
  const data: DoctorOutput = {
    databasePath: runtime.databaseLabel,
    indexesChecked: !stores.readOnly,
    conversationsChecked: report.conversationsChecked,
    checksRun: report.checksRun,
    durationMs: report.durationMs,
    complete: report.complete,
    findings: report.findings,
    repairsAvailable: plan.nonDestructive,
    needsOperator: plan.destructive.flatMap((action) => action.kind === "manual" ? [{ kind: action.finding.kind, subject: action.finding.subject, advice: action.advice }] : []),
    applied,
    remaining: remaining ? remaining.findings : null,
    healthy: left.length === 0,
  };
  const lines = [
    `LCM doctor: ${counted(report.checksRun, "check")} over ${counted(report.conversationsChecked, "conversation")}` +
      `${data.indexesChecked ? " and the full-text indexes" : ` (full-text indexes not checked: ${notChecked(stores.readOnlyNotice)})`} in ${count(report.durationMs)} ms.`,
  ];
  if (report.findings.length === 0) lines.push("No problems found.");
  for (const finding of report.findings.slice(0, 50)) {
    lines.push(`- ${finding.kind}${finding.conversationId === null ? "" : ` [conversation ${finding.conversationId}]`} ${finding.subject}: ${finding.detail}`);
  }
  if (report.findings.length > 50) lines.push(`- … and ${report.findings.length - 50} more (--json lists all)`);
  if (applied.length > 0) {
    const left = remaining?.findings.length ?? 0;
    lines.push(`Applied ${counted(applied.length, "safe repair")}; ${left > 0 ? `${counted(left, "problem")} remain${left === 1 ? "s" : ""}` : "no problems remain"}.`);
  } else if (plan.nonDestructive.length > 0) {
    lines.push(`${counted(plan.nonDestructive.length, "safe repair")} available: run lcm doctor --repair.`);
  }
  for (const manual of data.needsOperator.slice(0, 20)) lines.push(`Needs an operator: ${manual.kind} ${manual.subject}: ${manual.advice}`);
  return { data, text: lines.join("\n"), exitCode: data.healthy ? EXIT.ok : EXIT.problemsFound };
}

/** Why the index check was skipped, from the opening's note ("opened read-only: the file is read-only (mode …)"). */
function notChecked(notice: string | null): string {
  if (notice === null) return "the file is open read-only";
  return notice.replace(/^opened read-only: /, "").replace(/: reading without writing;.*$/, "");
}
