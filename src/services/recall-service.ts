/**
 * Recall, host-free: grep, describe, expand and expand-query with their orchestration (who may read which
 * conversations, locating and authorizing an id, choosing the summaries to expand, charging a helper's grant),
 * shared by the agent's tools (src/tools/*, which only parse parameters and format results) and the `lcm` CLI.
 * Three kinds of reader: an agent in a session (RecallAccess decides: its own conversation, its agent's, a grant),
 * the operator at the CLI, who owns the database and may read any conversation, and an outside client over MCP
 * (src/mcp/), which reads the conversations of the agents it was given, never a delegated helper's. Searches and
 * expansions are timed into the metrics.
 */
import type { Clock } from "../contracts.js";
import { LcmError } from "../errors.js";
import { type LcmMetrics, processMetrics } from "../metrics/lcm-metrics.js";
import type { ConversationId, ConversationRecord, SummaryRecord } from "../records.js";
import type { ExpandQueryResult, ExpansionHint } from "../retrieval/delegated-expansion.js";
import type { Description } from "../retrieval/describe.js";
import { findCandidates } from "../retrieval/expansion-candidates.js";
import type { GrepRequest, GrepResult } from "../search/grep.js";
import { notFound, type RecallCaller, type RecallScope } from "../retrieval/recall-access.js";
import type { RecallServices } from "../retrieval/recall-services.js";
import type { FilePageOptions, Located } from "../retrieval/retrieval-engine.js";
import type { ExpandResult } from "../retrieval/summary-expansion.js";
import { characterLimit, type ResultLimit, windowLimit } from "../retrieval/window-share.js";
import { isExpansionSessionKey } from "../store/grant-store.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import type { ConversationStore } from "../store/store.js";

/**
 * Who reads: an agent's tool call in a session; the operator at the CLI (any conversation, or one agent's); or an
 * outside client over MCP: the conversations of `agentIds` (null: every agent's), results within `maxResultChars`.
 */
export type RecallReader =
  | { kind: "agent"; caller: RecallCaller }
  | { kind: "operator"; agentId?: string }
  | { kind: "client"; agentIds: readonly string[] | null; maxResultChars: number };

/** Which conversations: the current one (agents), one named, or all readable ones. */
export interface ScopeRequest {
  conversationId?: number;
  allConversations?: boolean;
}

export interface RecallServiceDeps {
  recall: Pick<RecallServices, "retrieval" | "access" | "expansion" | "grants">;
  /** For the operator's scopes (every conversation, or one agent's); agents' scopes come from RecallAccess. */
  conversations?: Pick<RetrievalStore, "listRecallConversationIds"> & Pick<ConversationStore, "getConversation">;
  clock: Clock;
  /** Default: the process's instruments. */
  metrics?: LcmMetrics;
}

export type GrepQuery = Omit<GrepRequest, "conversationIds"> & ScopeRequest;

export interface GrepOutcome {
  result: GrepResult;
  searchedConversations: number;
  /** The result's note, or why nothing could be searched. */
  note: string | null;
  /** How long the result may be: an agent's model window, when its conversation has one recorded, or a client's limit. */
  limit: ResultLimit | null;
}

export interface ExpandQueryInput extends ScopeRequest {
  prompt: string;
  /** Words that find the summaries to expand, when no ids are given. */
  query: string | null;
  summaryIds?: string[] | undefined;
  maxTokens: number;
  signal?: AbortSignal | undefined;
}

export interface WalkInput {
  summaryId: string;
  depth: number;
  includeMessages: boolean;
  /** Most tokens returned; for a helper, at most what its grant has left. */
  tokenCap?: number | undefined;
}

export class RecallService {
  private readonly metrics: LcmMetrics;

  constructor(private readonly deps: RecallServiceDeps) {
    this.metrics = deps.metrics ?? processMetrics();
  }

  async grep(reader: RecallReader, query: GrepQuery): Promise<GrepOutcome> {
    const { conversationId, allConversations, ...request } = query;
    const scope = await this.scope(reader, { conversationId, allConversations });
    const started = performance.now();
    try {
      const result = await this.deps.recall.retrieval.grep({ ...request, conversationIds: scope.conversationIds });
      const note = scope.conversationIds.length === 0 ? "No history is stored for this conversation yet." : result.note;
      return { result, searchedConversations: scope.conversationIds.length, note, limit: this.limit(reader, scope) };
    } finally {
      this.metrics.searchLatency.observe({ mode: request.mode }, performance.now() - started);
    }
  }

  async describe(reader: RecallReader, id: string, scopeRequest: ScopeRequest, page: FilePageOptions = {}): Promise<Description> {
    // The id is looked up while the scope is resolved (on a server's backend, a round trip saved); nothing it read is
    // shown before `authorize`. Handled here too, so a scope that fails first leaves no unhandled rejection behind.
    const locating = this.deps.recall.retrieval.locate(id, "id");
    locating.catch(() => undefined);
    // So is a summary's lineage, by its id (a second round trip saved).
    const lineage = this.deps.recall.retrieval.describedLineage(id);
    lineage.catch(() => undefined);
    const scope = await this.scope(reader, scopeRequest);
    const located = await locating;
    if (!located) throw notFound(id, "id");
    await this.authorize(reader, scope, located, id, "id");
    // An agent's file page fits its model window, a client's its limit (retrieval/window-share.ts).
    return this.deps.recall.retrieval.describe(located, page, this.limit(reader, scope), await lineage);
  }

  /** lcm_expand_query and `lcm expand --prompt`: the summaries to start from, then a bounded expansion answers. */
  async expandQuery(reader: RecallReader, input: ExpandQueryInput): Promise<ExpandQueryResult> {
    if (!input.summaryIds && input.query === null) {
      throw new LcmError("invalid_input", 'Give either "query" (words that find the summaries) or "summaryIds" (ids to expand).', { parameter: "query" });
    }
    const scope = await this.scope(reader, input);
    const candidates: SummaryRecord[] = [];
    let hints: ExpansionHint[] = [];
    if (input.summaryIds) {
      for (const [index, id] of input.summaryIds.entries()) {
        const parameter = `summaryIds[${index}]`;
        const located = await this.deps.recall.retrieval.locate(id, parameter);
        if (!located) throw notFound(id.trim(), parameter);
        if (located.kind === "file") {
          throw new LcmError("invalid_input", `Parameter "${parameter}": ${id} is a file; read it with lcm_describe.`, { parameter });
        }
        await this.authorize(reader, scope, located, id.trim(), parameter);
        if (!candidates.some((known) => known.summaryId === located.summary.summaryId)) candidates.push(located.summary);
      }
    } else {
      const start = await findCandidates(this.deps.recall.retrieval, scope.conversationIds, input.query!, input.prompt);
      candidates.push(...start.candidates);
      hints = start.hints;
    }
    if (candidates.length === 0) {
      return {
        answer: `No compacted history matches ${JSON.stringify(input.query)}. What matches may still be in your context as raw messages; try lcm_grep with other words.`,
        citedIds: [], expandedSummaryCount: 0, totalSourceTokens: 0, truncated: false, mode: "none", candidateSummaryIds: [], note: null,
      };
    }
    // The operator and a client expand as the agent that owns the history (a delegated helper would run as that agent).
    const caller: RecallCaller = reader.kind === "agent"
      ? reader.caller
      : { agentId: (reader.kind === "operator" ? reader.agentId : undefined) ?? (await this.deps.conversations?.getConversation(candidates[0]!.conversationId))?.agentId ?? "main" };
    // An agent's answer also fits its model window, a client's its limit (retrieval/window-share.ts), whatever it asked for.
    const limit = this.limit(reader, scope);
    const maxTokens = limit === null ? input.maxTokens : Math.min(input.maxTokens, limit.answerTokens);
    return this.timed("query", () => this.deps.recall.expansion.expandQuery({
      caller, prompt: input.prompt, candidates, query: input.query, hints, maxTokens, ...(input.signal ? { signal: input.signal } : {}),
    }));
  }

  /** `lcm expand`, and lcm_expand over MCP: the operator or a client walks down the DAG from a summary. */
  async walk(reader: RecallReader & { kind: "operator" | "client" }, input: WalkInput): Promise<ExpandResult> {
    const located = await this.locateSummary(input.summaryId);
    const scope = await this.scope(reader, {});
    await this.authorize(reader, scope, located, input.summaryId, "summaryId");
    return this.timed("walk", () => this.deps.recall.retrieval.expand(located.summary, {
      depth: input.depth, includeMessages: input.includeMessages, tokenCap: input.tokenCap ?? Number.MAX_SAFE_INTEGER,
    }));
  }

  /**
   * lcm_expand: a delegated expansion's helper walks down the DAG within its grant (active, same agent, the summary
   * inside the granted conversations, tokens left); what it reads is charged to the grant.
   */
  async walkWithGrant(caller: RecallCaller, input: WalkInput): Promise<{ result: ExpandResult; remainingTokens: number }> {
    const { access, grants, retrieval } = this.deps.recall;
    const grant = await access.activeGrant(caller);
    const located = await retrieval.locate(input.summaryId, "summaryId");
    if (located?.kind === "file") {
      throw new LcmError("invalid_input", `Parameter "summaryId": ${input.summaryId} is a file; read it with lcm_describe.`, { parameter: "summaryId" });
    }
    if (!located || !grant.conversationIds.includes(located.conversationId)) throw notFound(input.summaryId, "summaryId");
    const left = grant.tokenCap - grant.tokensUsed;
    if (left <= 0) {
      throw new LcmError("forbidden", `This expansion's budget of ${grant.tokenCap} tokens is used up; answer with what you have read.`);
    }
    const tokenCap = Math.min(input.tokenCap ?? left, left);
    const result = await this.timed("walk", () => retrieval.expand(located.summary, { depth: input.depth, includeMessages: input.includeMessages, tokenCap }));
    // A call cut by its cap used its whole allowance (the last item was cut to fit), so it is charged the cap.
    const cost = result.truncated ? tokenCap : result.estimatedTokens;
    const charged = await grants.chargeGrant(grant.grantId, cost, this.deps.clock.now());
    if (!charged) {
      throw new LcmError("forbidden", "The expansion grant of this session ended while reading; answer with what you have already read.");
    }
    return { result, remainingTokens: charged.tokenCap - charged.tokensUsed };
  }

  private async locateSummary(id: string): Promise<Located & { kind: "summary" }> {
    const located = await this.deps.recall.retrieval.locate(id, "summaryId");
    if (located?.kind === "file") {
      throw new LcmError("invalid_input", `Parameter "summaryId": ${id} is a file; read it with describe.`, { parameter: "summaryId" });
    }
    if (!located) throw notFound(id.trim(), "summaryId");
    return located;
  }

  private async scope(reader: RecallReader, request: ScopeRequest): Promise<RecallScope> {
    if (reader.kind === "agent") {
      return this.deps.recall.access.resolve(reader.caller, {
        ...(request.conversationId !== undefined ? { conversationId: request.conversationId } : {}),
        allConversations: request.allConversations ?? false,
      });
    }
    const conversations = this.deps.conversations;
    if (!conversations) throw new Error("RecallService: the operator's and clients' scopes need the `conversations` store.");
    if (reader.kind === "client") return this.clientScope(reader, request);
    if (request.conversationId !== undefined) {
      const conversation = await conversations.getConversation(request.conversationId);
      if (!conversation || (reader.agentId !== undefined && conversation.agentId !== reader.agentId)) {
        throw new LcmError("not_found", `No conversation ${request.conversationId} is stored${reader.agentId ? ` for agent ${reader.agentId}` : ""}; list them with \`lcm conversations\`.`, { parameter: "conversationId" });
      }
      return { conversationIds: [conversation.conversationId], kind: "conversation", currentConversationId: null, currentWindowTokens: null, grant: null };
    }
    const conversationIds = await conversations.listRecallConversationIds(reader.agentId ?? null);
    return { conversationIds, kind: "all", currentConversationId: null, currentWindowTokens: null, grant: null };
  }

  /**
   * A client reads the conversations of its agents (allowCrossAgentRecall's rule, with the agents named when the server
   * started), never a delegated helper's: all of them by default (it has no conversation of its own), or one named.
   */
  private async clientScope(reader: RecallReader & { kind: "client" }, request: ScopeRequest): Promise<RecallScope> {
    const conversations = this.deps.conversations!;
    if (request.conversationId !== undefined && request.allConversations) {
      throw new LcmError("invalid_input", 'Pass either "conversationId" or "allConversations", not both.', { parameter: "conversationId" });
    }
    const scope = { kind: "all" as const, currentConversationId: null, currentWindowTokens: null, grant: null };
    if (request.conversationId !== undefined) {
      const conversation = await conversations.getConversation(request.conversationId);
      if (!conversation || !isReadableBy(reader, conversation)) {
        throw new LcmError(
          "not_found",
          `Parameter "conversationId": conversation ${request.conversationId} does not exist or belongs to an agent this server does not serve. Omit it to search every conversation it serves (lcm_conversations lists them).`,
          { parameter: "conversationId" },
        );
      }
      return { ...scope, kind: "conversation", conversationIds: [conversation.conversationId] };
    }
    if (reader.agentIds === null) return { ...scope, conversationIds: await conversations.listRecallConversationIds(null) };
    const perAgent = await Promise.all(reader.agentIds.map((agentId) => conversations.listRecallConversationIds(agentId)));
    return { ...scope, conversationIds: perAgent.flat().sort((left, right) => left - right) };
  }

  private limit(reader: RecallReader, scope: RecallScope): ResultLimit | null {
    if (reader.kind === "agent") return windowLimit(scope.currentWindowTokens);
    return reader.kind === "client" ? characterLimit(reader.maxResultChars) : null;
  }

  private async authorize(reader: RecallReader, scope: RecallScope, located: Located, id: string, parameter: string): Promise<void> {
    if (reader.kind === "agent") return this.deps.recall.access.authorize(reader.caller, scope, located.conversationId, id, parameter);
    if (reader.kind === "client") {
      if (scope.conversationIds.includes(located.conversationId as ConversationId)) return;
      const conversation = await this.deps.conversations!.getConversation(located.conversationId);
      // Another agent's id is "not stored" for this client: it learns nothing about that history.
      if (!conversation || !isReadableBy(reader, conversation)) throw notFound(id, parameter);
      throw new LcmError(
        "forbidden",
        `Parameter "${parameter}": ${id} belongs to conversation ${located.conversationId}, not the conversation searched. Pass conversationId: ${located.conversationId}, or omit it.`,
        { parameter, conversationId: located.conversationId },
      );
    }
    if (!scope.conversationIds.includes(located.conversationId as ConversationId)) {
      throw new LcmError("not_found", `${id} belongs to conversation ${located.conversationId}, outside the conversations asked for.`, { parameter });
    }
  }

  private async timed<T>(kind: "walk" | "query", body: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await body();
    } finally {
      this.metrics.expandLatency.observe({ kind }, performance.now() - started);
    }
  }
}

/** Whether a client may read a conversation: one of its agents', and not a delegated expansion helper's. */
function isReadableBy(reader: RecallReader & { kind: "client" }, conversation: ConversationRecord): boolean {
  if (isExpansionSessionKey(conversation.sessionKey)) return false;
  return reader.agentIds === null || reader.agentIds.includes(conversation.agentId);
}
