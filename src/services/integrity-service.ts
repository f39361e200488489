/**
 * Integrity checks as `lcm doctor` runs them, and the counting of what any check finds in the metrics
 * (lcm_integrity_failures_total, through the IntegrityChecker's onReport). `doctor` checks one conversation or all of them (with progress), plans the
 * repairs and applies the non-destructive ones when asked; the full-text index check is skipped on a connection
 * that cannot write (SQLite runs FTS5's check as a write statement).
 */
import type { RepairAction, RepairPlan, IntegrityReport } from "../integrity/findings.js";
import { access } from "node:fs/promises";
import type { Clock } from "../contracts.js";
import { IntegrityChecker } from "../integrity/integrity-checker.js";
import { type LcmMetrics, processMetrics } from "../metrics/lcm-metrics.js";
import type { IntegrityStore } from "../store/integrity-store.js";

export interface DoctorRequest {
  /** One conversation; every conversation when absent. */
  conversationId?: number;
  repair: boolean;
  /** Also check the full-text indexes (needs a writable database). */
  includeIndexes: boolean;
  deadlineMs?: number;
  onProgress?: (checked: number, total: number) => void;
}

export interface DoctorOutcome {
  report: IntegrityReport;
  plan: RepairPlan;
  applied: RepairAction[];
  /** After repairs: the findings a second check still reports (null when nothing was repaired). */
  remaining: IntegrityReport | null;
}

/** Counts a report's findings in lcm_integrity_failures_total (the IntegrityChecker's onReport). */
export function countIntegrityFindings(metrics: LcmMetrics): (scope: "recent" | "full", report: IntegrityReport) => void {
  return (scope, report) => metrics.integrityFailures.inc({ source: scope === "recent" ? "maintain" : "doctor" }, report.findings.length);
}

/** The integrity checker of the gateway and the CLI: stored files checked on disk, findings counted in the process's metrics. */
export function countedIntegrityChecker(store: IntegrityStore, clock: Clock): IntegrityChecker {
  return new IntegrityChecker({
    store, clock, fileExists: (path) => access(path).then(() => true, () => false), onReport: countIntegrityFindings(processMetrics()),
  });
}

export async function runDoctor(checker: IntegrityChecker, request: DoctorRequest): Promise<DoctorOutcome> {
  const options = {
    includeIndexes: request.includeIndexes,
    ...(request.conversationId !== undefined ? { conversationId: request.conversationId } : {}),
    ...(request.deadlineMs !== undefined ? { deadlineMs: request.deadlineMs } : {}),
    ...(request.onProgress ? { onProgress: request.onProgress } : {}),
  };
  const report = await checker.check(options);
  const plan = checker.planRepairs(report);
  if (!request.repair || plan.nonDestructive.length === 0) return { report, plan, applied: [], remaining: null };
  const applied = await checker.applyRepairs(plan);
  const remaining = await checker.check({ ...options, onProgress: undefined });
  return { report, plan, applied, remaining };
}
