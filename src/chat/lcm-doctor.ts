/**
 * `/lcm doctor`: runs the doctor of services/integrity-service.ts (as `lcm doctor` does) and reports in words.
 * `doctor` checks this conversation and the full-text indexes; `doctor all` checks every conversation (bounded by a
 * deadline; the reply says when it stopped early); `repair` after either also applies the non-destructive repairs
 * (recount, re-index, stored times brought into range) and checks again. Repairs that could lose information are
 * only described.
 */
import type { IntegrityReport, RepairAction, RepairPlan } from "../integrity/findings.js";
import type { IntegrityChecker } from "../integrity/integrity-checker.js";
import type { ConversationId } from "../records.js";
import { runDoctor } from "../services/integrity-service.js";

/** `/lcm doctor all` stops starting new conversations after this long. */
export const DOCTOR_DEADLINE_MS = 20_000;
const LISTED_FINDINGS = 20;

/** The reply to `/lcm doctor` with `args` (the words after "doctor") for the session's conversation (null: none stored). */
export async function doctorReply(
  checker: IntegrityChecker,
  conversationId: ConversationId | null,
  args: string[],
): Promise<string> {
  const everything = args.includes("all");
  if (!everything && conversationId === null) {
    return "No stored conversation for this session yet. Use /lcm doctor all to check every conversation.";
  }
  const { report, plan, applied, remaining } = await runDoctor(checker, {
    ...(everything ? { deadlineMs: DOCTOR_DEADLINE_MS } : { conversationId: conversationId! }),
    repair: args.includes("repair"),
    includeIndexes: true,
  });
  return render(report, plan, applied, remaining, everything ? "all conversations" : "this conversation");
}

function render(report: IntegrityReport, plan: RepairPlan, applied: RepairAction[], remaining: IntegrityReport | null, scope: string): string {
  const lines = [
    `LCM doctor (${scope}): ${report.checksRun} checks over ${plural(report.conversationsChecked, "conversation")} and the ` +
      `full-text indexes in ${report.durationMs} ms${report.complete ? "" : " — stopped at the deadline, run again to continue"}.`,
  ];
  if (report.findings.length === 0) {
    lines.push("No problems found: every summary links to its sources, context items point to stored rows in order, no message is missing, counters and indexes agree.");
    return lines.join("\n");
  }
  lines.push(`${plural(report.findings.length, "problem")}:`);
  for (const finding of report.findings.slice(0, LISTED_FINDINGS)) {
    const where = finding.conversationId === null ? "" : ` [conversation ${finding.conversationId}]`;
    lines.push(`- ${finding.kind}${where} ${finding.subject}: ${finding.detail}`);
  }
  if (report.findings.length > LISTED_FINDINGS) lines.push(`- … and ${report.findings.length - LISTED_FINDINGS} more`);
  if (applied.length > 0) {
    const left = remaining?.findings.length ?? 0;
    lines.push(`Applied ${plural(applied.length, "safe repair")}: ${applied.map(describeAction).join("; ")}. ` +
      `A second check finds ${left === 0 ? "no problems left" : `${plural(left, "problem")} left`}.`);
  }
  else if (plan.nonDestructive.length > 0) {
    lines.push(`Safe repairs available (${plan.nonDestructive.map(describeAction).join("; ")}): run /lcm doctor${scope === "all conversations" ? " all" : ""} repair.`);
  }
  const manual = plan.destructive.filter((action) => action.kind === "manual");
  if (manual.length > 0) {
    lines.push("Needs an operator (never applied automatically):");
    for (const action of manual.slice(0, LISTED_FINDINGS)) lines.push(`- ${action.finding.kind} ${action.finding.subject}: ${action.advice}`);
  }
  return lines.join("\n");
}

/** "1 problem", "2 problems". */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function describeAction(action: RepairAction): string {
  switch (action.kind) {
    case "recount_conversation":
      return `recount conversation ${action.conversationId}`;
    case "rebuild_fts":
      return `rebuild ${action.table}`;
    case "normalize_timestamps":
      return `normalize the stored times of conversation ${action.conversationId}`;
    case "clear_unreadable_columns":
      return `clear the unreadable bootstrap cursor or last compaction of conversation ${action.conversationId}`;
    case "manual":
      return `${action.finding.kind}: ${action.advice}`;
  }
}
