/**
 * Fallback summaries redone when a model is available again (spec 027). A fallback summary is a truncation written
 * when every model attempt failed; once a model answers again, `maintain` re-summarizes a few of them per turn
 * (FALLBACK_REDO_PER_TURN) through the repair service, so each redo is previewed, recorded with its undo, spend-
 * guarded like compaction and checked; `lcm repair fallbacks --apply` does the same on demand. A model that answered
 * but gave no usable summary (or the spend guard) makes the conversation wait before the next try (RedoBackoff): a
 * model that keeps failing would otherwise cost two calls every turn.
 */
import type { CompletionModel } from "../contracts.js";
import { describeError, isLcmError } from "../errors.js";
import type { RepairStore } from "../store/repair-store.js";
import type { ApplyOptions, RepairOutcome, SummaryRepairService } from "./summary-repair-service.js";

/** How many fallback summaries one `maintain` redoes at most: each is one model call after the turn. */
export const FALLBACK_REDO_PER_TURN = 2;
/** The first wait after a redo the model could not do, doubled after each further failure up to the longest. */
export const REDO_FIRST_WAIT_MS = 10 * 60_000;
export const REDO_LONGEST_WAIT_MS = 6 * 60 * 60_000;

/** Per conversation (by a caller's key): when the next redo may be tried after the model failed at one. */
export class RedoBackoff {
  private readonly waits = new Map<string, { until: number; waitMs: number }>();

  allows(key: string, now: number): boolean {
    const entry = this.waits.get(key);
    return entry === undefined || now >= entry.until;
  }

  failed(key: string, now: number): void {
    const previous = this.waits.get(key)?.waitMs;
    const waitMs = previous === undefined ? REDO_FIRST_WAIT_MS : Math.min(REDO_LONGEST_WAIT_MS, previous * 2);
    this.waits.set(key, { until: now + waitMs, waitMs });
  }

  succeeded(key: string): void {
    this.waits.delete(key);
  }
}

const sharedBackoff = new RedoBackoff();

/** The process's backoff: every engine of a gateway shares it, as they share the spend guard. */
export function sharedRedoBackoff(): RedoBackoff {
  return sharedBackoff;
}

export interface FallbackRedoRequest {
  /** One conversation (maintain's), or all. */
  conversationId?: number;
  /** Most summaries redone. */
  limit: number;
  /** The session's model, when the caller has one. */
  model?: CompletionModel | undefined;
  signal?: AbortSignal | undefined;
  integrity?: ApplyOptions["integrity"];
  /** Wait after a failed redo: the backoff, this conversation's key in it, and now. */
  backoff?: { backoff: RedoBackoff; key: string; now: number };
}

export interface FallbackRedoOutcome {
  redone: RepairOutcome[];
  /** Fallback summaries found (at most `limit`). */
  found: number;
  /** Why it stopped before redoing all it found (no model, the model failed, the spend guard, waiting after a failure). */
  stopped: string | null;
}

export async function redoFallbackSummaries(
  service: SummaryRepairService, repairs: Pick<RepairStore, "fallbackSummaries">, request: FallbackRedoRequest,
): Promise<FallbackRedoOutcome> {
  const wait = request.backoff;
  if (wait && !wait.backoff.allows(wait.key, wait.now)) {
    return { redone: [], found: 0, stopped: "waiting after a redo the model could not do" };
  }
  const found = await repairs.fallbackSummaries({ limit: request.limit, ...(request.conversationId !== undefined ? { conversationId: request.conversationId } : {}) });
  const redone: RepairOutcome[] = [];
  for (const summary of found) {
    if (request.signal?.aborted) return { redone, found: found.length, stopped: "aborted" };
    try {
      const proposal = await service.propose({
        kind: "resummarize", summaryId: summary.summaryId, model: request.model, ...(request.signal ? { signal: request.signal } : {}),
      });
      redone.push(await service.apply(proposal, { integrity: request.integrity ?? "conversation" }));
      wait?.backoff.succeeded(wait.key);
    } catch (error) {
      // No model, a failing model or the spend guard: the next summaries would fail the same way; the rest wait. A
      // model that failed (not a missing one, which costs nothing to find again) makes the conversation wait.
      const noModel = isLcmError(error) && error.details?.noModel === true;
      if (wait && !noModel && !request.signal?.aborted) wait.backoff.failed(wait.key, wait.now);
      return { redone, found: found.length, stopped: isLcmError(error) ? error.message : describeError(error) };
    }
  }
  return { redone, found: found.length, stopped: null };
}
