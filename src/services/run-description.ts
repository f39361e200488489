/**
 * One line describing a compaction run: passes by level, tokens before and after, why it stopped. Shown in the
 * log, in compact's answer to the host, in `/lcm status` (the recorded outcome) and by `lcm compact`.
 */
import type { CompactionRun } from "../compaction/compaction-engine.js";

export const STOP_REASON_TEXT: Record<CompactionRun["stopReason"], string> = {
  "nothing-to-do": "nothing eligible to compact",
  done: "done",
  "under-target": "under target",
  "cannot-fit": "no further reduction possible",
  "max-rounds": "stopped after the maximum number of rounds",
  "max-passes": "stopped after the maximum number of passes",
  deadline: "stopped at the deadline",
  aborted: "aborted by the host",
  "summarizer-unavailable": "summarizer circuit open; deferred",
  elsewhere: "another compaction of this conversation is running (on this gateway or another); left to it",
  superseded: "another gateway took over this conversation's compaction (this run's lease had expired)",
};

export function describeRun(run: CompactionRun): string {
  const counts = new Map<string, number>();
  for (const pass of run.passes) counts.set(pass.level, (counts.get(pass.level) ?? 0) + 1);
  const levels = [...counts].map(([level, count]) => `${count} ${level}`).join(", ");
  const passes = run.passes.length === 0 ? "no passes" : `${run.passes.length} passes (${levels})`;
  const tail = run.reachedIntoTail ? "; reached into the fresh tail" : "";
  return `${passes}, ${run.tokensBefore} -> ${run.tokensAfter} tokens: ${STOP_REASON_TEXT[run.stopReason]}${tail}`;
}
