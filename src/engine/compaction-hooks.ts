/**
 * The compact and maintain hooks: adapters between OpenClaw's hook parameters and the host-free CompactionService
 * (services/compaction-service.ts), which decides and runs the compaction (spec 011). They translate: the session's
 * key, the window the host states now, its model (runtimeContext.llm), its abort signal and compact's options go
 * in; the service's outcome comes back as the result the host expects.
 */
import type { CompactParams, CompactResult, MaintainParams, MaintenanceResult } from "../host/openclaw-types.js";
import { positiveNumber } from "../runtime/numbers.js";
import { CompactionService, type CompactionServiceDeps } from "../services/compaction-service.js";
import { conversationKeyOf } from "../sessions/session-identity.js";

export async function runMaintain(params: MaintainParams, deps: CompactionServiceDeps): Promise<MaintenanceResult> {
  const outcome = await new CompactionService(deps).maintain({
    target: { key: conversationKeyOf(params) },
    windowTokens: params.runtimeContext?.tokenBudget,
    model: params.runtimeContext?.llm,
    signal: params.abortSignal,
  });
  return { changed: outcome.changed, bytesFreed: 0, rewrittenEntries: 0, reason: outcome.reason };
}

/**
 * `pending`: the current turn as its assembles saw it (overflow recovery needs it): the prompt, and how far the pending
 * turn went past what the first budget left history (TurnBudgets.pendingOf).
 */
export async function runCompact(
  params: CompactParams, deps: CompactionServiceDeps, pending: { promptTokens?: number; overdraftTokens: number } = { overdraftTokens: 0 },
): Promise<CompactResult> {
  const outcome = await new CompactionService(deps).compact({
    target: { key: conversationKeyOf(params) },
    force: params.force === true,
    targetKind: params.compactionTarget === "threshold" ? "threshold" : "budget",
    preflight: params.runtimeContext?.forceReason === "preflight_required",
    windowTokens: positiveNumber(params.tokenBudget) ?? params.runtimeContext?.tokenBudget,
    currentTokenCount: params.currentTokenCount ?? params.runtimeContext?.currentTokenCount,
    promptTokens: pending.promptTokens,
    pendingOverdraftTokens: pending.overdraftTokens,
    customInstructions: params.customInstructions,
    model: params.runtimeContext?.llm,
    signal: params.abortSignal,
  });
  const { ok, compacted, reason, tokensBefore, tokensAfter, details } = outcome;
  if (tokensBefore === undefined) return { ok, compacted, reason };
  return { ok, compacted, reason, result: { tokensBefore, tokensAfter: tokensAfter ?? tokensBefore, ...(details ? { details } : {}) } };
}
