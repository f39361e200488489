/**
 * lcm_expand_query's engine. A helper sub-agent gets a persisted grant (the candidate conversations, a token
 * cap, a time-to-live) and walks the DAG with lcm_expand; the grant is revoked when the run completes, fails,
 * times out or is aborted, and expires on its own if cleanup never happens. When sub-agents are unavailable
 * (outside a gateway request OpenClaw answers OPENCLAW_SUBAGENT_RUNTIME_REQUEST_SCOPE) or the helper fails, a
 * bounded direct expansion is answered with one model call; with no model, the excerpts themselves are returned.
 */
import { randomBytes } from "node:crypto";
import type { Clock, Logger } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { describeError, LcmError } from "../errors.js";
import type { HostLlm, SubagentRuntime } from "../host/openclaw-types.js";
import type { ConversationId, SummaryRecord } from "../records.js";
import { expansionSessionKey, type GrantStore } from "../store/grant-store.js";
import { bestWithin, collectExcerpts, formatExcerpts, type ExcerptDeps } from "./direct-expansion.js";
import {
  citedSummaryIds,
  DIRECT_SYSTEM_PROMPT,
  directPrompt,
  HELPER_SYSTEM_PROMPT,
  HELPER_TOOLS,
  helperTask,
  withoutCitationLine,
} from "./expansion-prompts.js";
import { parseTextQuery } from "../text/text-query.js";
import type { RecallCaller } from "./recall-access.js";
import type { RetrievalEngine } from "./retrieval-engine.js";
import { fitToTokens } from "../tokens/text-within.js";

export const SUBAGENT_SCOPE_ERROR = "OPENCLAW_SUBAGENT_RUNTIME_REQUEST_SCOPE";
/** A grant outlives the deadline by this much, so it expires on its own even if revocation never runs. */
const GRANT_TTL_MARGIN_MS = 30_000;
/** Revoked grants are kept this long (for /lcm status and debugging), then deleted. */
const GRANT_RETENTION_MS = 7 * 24 * 60 * 60 * 1_000;
/** Below this much time left, the fallback returns excerpts instead of starting a model call. */
const MIN_MODEL_TIME_MS = 1_000;

/** How the answer was made: a helper sub-agent, one direct model call, raw excerpts, or nothing to expand. */
export type ExpansionMode = "delegated" | "direct" | "excerpts" | "none";

export interface ExpandQueryRequest {
  caller: RecallCaller;
  prompt: string;
  /** The summaries to start from, already authorized for the caller. */
  candidates: SummaryRecord[];
  /** The search text that found them, if any (ranks source messages in the direct fallback). */
  query: string | null;
  /** The best-matching messages under them, best first (named to the helper as places to start). */
  hints?: ExpansionHint[];
  maxTokens: number;
  signal?: AbortSignal;
}

/** A message that matched the query, and the candidate summary it lies under. */
export interface ExpansionHint {
  messageId: number;
  summaryId: string;
  snippet: string;
}

export interface ExpandQueryResult {
  answer: string;
  citedIds: string[];
  expandedSummaryCount: number;
  totalSourceTokens: number;
  /** The answer was cut to maxTokens, or the token cap stopped the reading before everything was read. */
  truncated: boolean;
  mode: ExpansionMode;
  candidateSummaryIds: string[];
  note: string | null;
}

export interface ExpansionDeps extends ExcerptDeps {
  retrieval: RetrievalEngine;
  grants: GrantStore;
  clock: Clock;
  logger: Logger;
  config: Pick<LcmConfig, "maxExpandTokens" | "expansionTimeoutMs">;
  subagent?: SubagentRuntime;
  llm?: HostLlm;
}

type Delegation = { kind: "answered"; result: ExpandQueryResult } | { kind: "fallback"; reason: string; modelAllowed: boolean };

export class ExpansionService {
  constructor(private readonly deps: ExpansionDeps) {}

  async expandQuery(request: ExpandQueryRequest): Promise<ExpandQueryResult> {
    request.signal?.throwIfAborted();
    const now = this.deps.clock.now();
    const deadline = now + this.deps.config.expansionTimeoutMs;
    let reason = "sub-agents are not available in this host";
    let modelAllowed = true;
    if (this.deps.subagent) {
      // Only a delegation writes grants, so only one sweeps them: the direct answer also serves read-only connections.
      await this.deps.grants.sweepGrants(now, now - GRANT_RETENTION_MS);
      const delegation = await this.delegate(this.deps.subagent, request, deadline);
      if (delegation.kind === "answered") return delegation.result;
      ({ reason, modelAllowed } = delegation);
      this.deps.logger.warn(`lcm_expand_query falls back to a direct expansion: ${reason}`);
    }
    return this.answerDirectly(request, deadline, reason, modelAllowed);
  }

  private async delegate(subagent: SubagentRuntime, request: ExpandQueryRequest, deadline: number): Promise<Delegation> {
    const { clock, grants, config } = this.deps;
    const id = randomBytes(8).toString("hex");
    const childSessionKey = expansionSessionKey(request.caller.agentId, id);
    const conversationIds = [...new Set<ConversationId>(request.candidates.map((summary) => summary.conversationId))];
    const grant = await grants.createGrant({
      grantId: `grant_${id}`, agentId: request.caller.agentId, childSessionKey, conversationIds,
      tokenCap: config.maxExpandTokens, createdAt: clock.now(), expiresAt: deadline + GRANT_TTL_MARGIN_MS,
    });
    let outcome = "failed";
    let started = false;
    try {
      let runId: string;
      try {
        ({ runId } = await raceAbort(subagent.run({
          sessionKey: childSessionKey,
          message: helperTask({
            prompt: request.prompt, candidates: request.candidates, hints: request.hints ?? [], maxTokens: request.maxTokens, tokenCap: grant.tokenCap,
          }),
          extraSystemPrompt: HELPER_SYSTEM_PROMPT,
          toolsAlsoAllow: [...HELPER_TOOLS],
          deliver: false,
          idempotencyKey: grant.grantId,
        }), request.signal));
        started = true;
      } catch (error) {
        if (request.signal?.aborted) throw error;
        outcome = "failed: the sub-agent could not start";
        const why = isRequestScopeError(error) ? "sub-agents only run inside a gateway request" : `the sub-agent could not start (${describeError(error)})`;
        return { kind: "fallback", reason: why, modelAllowed: true };
      }
      const waited = await raceAbort(
        subagent.waitForRun({ runId, timeoutMs: Math.max(1, deadline - clock.now()) }), request.signal,
      );
      const text = waited.terminalReply?.text?.trim() ?? "";
      if (waited.status === "ok" && text !== "") {
        outcome = "completed";
        return { kind: "answered", result: await this.delegatedResult(request, grant.grantId, text) };
      }
      if (waited.status === "timeout" || waited.status === "pending") {
        outcome = "timeout";
        return { kind: "fallback", reason: `the helper did not finish within ${config.expansionTimeoutMs / 1_000} s`, modelAllowed: false };
      }
      outcome = "failed: the helper run failed";
      const detail = waited.status === "ok" ? "it returned no answer" : describeError(waited.error ?? waited.status);
      return { kind: "fallback", reason: `the helper failed (${detail})`, modelAllowed: true };
    } catch (error) {
      if (request.signal?.aborted) outcome = "aborted";
      throw error;
    } finally {
      await this.cleanUp(grant.grantId, outcome, started ? childSessionKey : null);
    }
  }

  private async delegatedResult(request: ExpandQueryRequest, grantId: string, text: string): Promise<ExpandQueryResult> {
    const grant = await this.deps.grants.getGrant(grantId);
    const answer = fitToTokens(withoutCitationLine(text), request.maxTokens, this.deps.tokens);
    const allowed = new Set(grant?.conversationIds ?? []);
    const citedIds: string[] = [];
    for (const id of citedSummaryIds(text).slice(0, 50)) {
      const located = await this.deps.retrieval.locate(id);
      if (located && allowed.has(located.conversationId)) citedIds.push(id);
    }
    const capReached = grant !== null && grant.tokensUsed >= grant.tokenCap;
    return {
      answer: answer.text,
      citedIds,
      expandedSummaryCount: grant?.summariesExpanded ?? 0,
      totalSourceTokens: grant?.tokensUsed ?? 0,
      truncated: answer.cut || capReached,
      mode: "delegated",
      candidateSummaryIds: request.candidates.map((summary) => summary.summaryId),
      note: capReached ? "The helper used its whole token cap; details beyond it were not read." : null,
    };
  }

  private async answerDirectly(request: ExpandQueryRequest, deadline: number, reason: string, modelAllowed: boolean): Promise<ExpandQueryResult> {
    const query = parseTextQuery(`${request.query ?? ""} ${request.prompt}`);
    const collected = await collectExcerpts(this.deps, request.candidates, query, this.deps.config.maxExpandTokens);
    const candidateSummaryIds = request.candidates.map((summary) => summary.summaryId);
    const excerpts = formatExcerpts(collected.excerpts);
    const base = {
      expandedSummaryCount: collected.expandedSummaryIds.length,
      totalSourceTokens: collected.sourceTokens,
      candidateSummaryIds,
    };
    const llm = this.deps.llm;
    const timeLeft = deadline - this.deps.clock.now();
    let modelProblem = !llm ? "no model is available" : !modelAllowed || timeLeft < MIN_MODEL_TIME_MS ? "no time is left for a model call" : null;
    if (llm && modelProblem === null && collected.excerpts.length > 0) {
      try {
        const signals = [AbortSignal.timeout(timeLeft), ...(request.signal ? [request.signal] : [])];
        const completion = await llm.complete({
          messages: [{ role: "user", content: directPrompt(request.prompt, excerpts) }],
          systemPrompt: DIRECT_SYSTEM_PROMPT,
          maxTokens: request.maxTokens,
          temperature: 0,
          signal: AbortSignal.any(signals),
          purpose: "lcm_expand_query",
        });
        const answer = fitToTokens(withoutCitationLine(completion.text), request.maxTokens, this.deps.tokens);
        const cited = citedSummaryIds(completion.text).filter((id) => collected.expandedSummaryIds.includes(id));
        return {
          ...base,
          answer: answer.text,
          citedIds: cited.length > 0 ? cited : collected.expandedSummaryIds,
          truncated: answer.cut || collected.truncated,
          mode: "direct",
          note: `Answered by one model call over ${collected.sourceTokens} tokens of excerpts because ${reason}.`,
        };
      } catch (error) {
        request.signal?.throwIfAborted();
        modelProblem = `the model call failed (${describeError(error)})`;
        this.deps.logger.warn(`lcm_expand_query: ${modelProblem}; returning the excerpts instead`);
      }
    }
    if (collected.excerpts.length === 0) {
      return { ...base, answer: "Nothing was found under the candidate summaries.", citedIds: [], truncated: false, mode: "excerpts", note: reason };
    }
    const heading = `No answer was composed (${reason}; ${modelProblem ?? "no model call was made"}). These are the expanded excerpts; read them to answer:\n\n`;
    // The best excerpts that fit the answer's budget whole, rather than the first ones in time order cut short.
    const kept = bestWithin(collected.excerpts, request.maxTokens - this.deps.tokens.estimate(heading), this.deps.tokens);
    const answer = fitToTokens(heading + formatExcerpts(kept.length > 0 ? kept : collected.excerpts), request.maxTokens, this.deps.tokens);
    return {
      ...base,
      answer: answer.text,
      citedIds: collected.expandedSummaryIds,
      truncated: answer.cut || collected.truncated || kept.length < collected.excerpts.length,
      mode: "excerpts",
      note: `Excerpts returned without a model answer: ${reason}; ${modelProblem ?? "no model call was made"}.`,
    };
  }

  private async cleanUp(grantId: string, outcome: string, childSessionKey: string | null): Promise<void> {
    try {
      await this.deps.grants.revokeGrant(grantId, outcome, this.deps.clock.now());
    } catch (error) {
      // The grant still expires on its own (TTL), so the child cannot read for long.
      this.deps.logger.warn(`lcm_expand_query: revoking ${grantId} failed: ${describeError(error)}; it expires on its own`);
    }
    if (!childSessionKey || !this.deps.subagent?.deleteSession) return;
    try {
      await this.deps.subagent.deleteSession({ sessionKey: childSessionKey, deleteTranscript: true });
    } catch (error) {
      // Only an orphaned helper transcript remains; its grant is already revoked.
      this.deps.logger.debug(`lcm_expand_query: deleting ${childSessionKey} failed: ${describeError(error)}`);
    }
  }
}

export function isRequestScopeError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === SUBAGENT_SCOPE_ERROR || /only available during a gateway request/i.test(describeError(error));
}

/** Rejects with the abort reason as soon as `signal` aborts (the host's wait calls take no signal). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => { signal.removeEventListener("abort", onAbort); resolve(value); },
      (error: unknown) => { signal.removeEventListener("abort", onAbort); reject(error); },
    );
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new LcmError("aborted", "lcm_expand_query was cancelled.");
}
