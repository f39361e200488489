/**
 * Fallback summaries redone when a model is available again (spec 027). A fallback summary is a truncation written
 * when every model attempt failed; once a model answers again, `maintain` re-summarizes a few of them per turn
 * (FALLBACK_REDO_PER_TURN) through the repair service, so each redo is previewed, recorded with its undo, spend-
 * guarded like compaction and checked; `lcm repair fallbacks --apply` does the same on demand.
 */
import type { CompletionModel } from "../contracts.js";
import { describeError, isLcmError } from "../errors.js";
import type { RepairStore } from "../store/repair-store.js";
import type { ApplyOptions, RepairOutcome, SummaryRepairService } from "./summary-repair-service.js";

/** How many fallback summaries one `maintain` redoes at most: each is one model call after the turn. */
export const FALLBACK_REDO_PER_TURN = 2;

export interface FallbackRedoRequest {
  /** One conversation (maintain's), or all. */
  conversationId?: number;
  /** Most summaries redone. */
  limit: number;
  /** The session's model, when the caller has one. */
  model?: CompletionModel | undefined;
  signal?: AbortSignal | undefined;
  integrity?: ApplyOptions["integrity"];
}

export interface FallbackRedoOutcome {
  redone: RepairOutcome[];
  /** Fallback summaries found (at most `limit`). */
  found: number;
  /** Why it stopped before redoing all it found (no model, the model failed, the spend guard). */
  stopped: string | null;
}

export async function redoFallbackSummaries(
  service: SummaryRepairService, repairs: Pick<RepairStore, "fallbackSummaries">, request: FallbackRedoRequest,
): Promise<FallbackRedoOutcome> {
  const found = await repairs.fallbackSummaries({ limit: request.limit, ...(request.conversationId !== undefined ? { conversationId: request.conversationId } : {}) });
  const redone: RepairOutcome[] = [];
  for (const summary of found) {
    if (request.signal?.aborted) return { redone, found: found.length, stopped: "aborted" };
    try {
      const proposal = await service.propose({
        kind: "resummarize", summaryId: summary.summaryId, model: request.model, ...(request.signal ? { signal: request.signal } : {}),
      });
      redone.push(await service.apply(proposal, { integrity: request.integrity ?? "conversation" }));
    } catch (error) {
      // No model, a failing model or the spend guard: the next summaries would fail the same way; the rest wait.
      return { redone, found: found.length, stopped: isLcmError(error) ? error.message : describeError(error) };
    }
  }
  return { redone, found: found.length, stopped: null };
}
