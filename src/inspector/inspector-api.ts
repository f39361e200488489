/**
 * The inspector's JSON API (spec 027), host-free: each route reads through the existing services (the operator store
 * behind `lcm conversations` and `lcm dag`, the context preview behind `lcm context`, the recall service behind
 * `lcm_grep` and `lcm_describe`, the integrity checker, the spend guard) and the repair service in write mode. The
 * HTTP layer (inspector-http.ts) maps requests to `handle`; this file knows nothing of sockets.
 */
import type { LcmConfig } from "../config.js";
import type { Clock, TokenEstimator } from "../contracts.js";
import { SYSTEM_PROMPT_ADDITION, systemPromptAdditionTokens } from "../assembly/system-prompt.js";
import { isLcmError } from "../errors.js";
import type { IntegrityChecker } from "../integrity/integrity-checker.js";
import type { SummaryRepairService, RepairProposal } from "../repair/summary-repair-service.js";
import { previewContext } from "../services/context-preview.js";
import type { RecallService } from "../services/recall-service.js";
import { sharedSpendGuard, spendKey, spendLimitsOf } from "../services/spend-guard.js";
import type { OperatorStore } from "../store/operator-store.js";
import type { RepairStore } from "../store/repair-store.js";
import type { StatusStore } from "../store/status-store.js";
import type { LcmStore } from "../store/store.js";
import { ProposalBook } from "./proposal-book.js";

export interface InspectorDeps {
  config: LcmConfig;
  databasePath: string;
  store: LcmStore;
  operator: OperatorStore;
  status: StatusStore;
  recall: RecallService;
  integrity: Pick<IntegrityChecker, "checkRecent">;
  /** Who wrote each summary's text (written_by), by summary id, for one conversation. */
  writers(conversationId: number): Promise<Map<string, string>>;
  tokens: TokenEstimator;
  clock: Clock;
  /** Present only in write mode: repairs are refused without it. */
  repairs?: { service: SummaryRepairService; store: RepairStore };
  /** Why the inspector is read-only, shown on the page (null in write mode). */
  readOnlyReason: string | null;
}

export interface ApiRequest {
  method: string;
  /** The path below the API root, without a leading slash: "conversations/3/dag". */
  path: string;
  query: URLSearchParams;
  body: unknown;
}

export interface ApiResponse {
  status: number;
  body: unknown;
}

/** Most message ranges drawn under leaves; past it the DAG shows summaries only (ranges stay in each node's panel). */
export const MAX_RANGE_NODES = 1_500;

export class InspectorApi {
  private readonly proposals = new ProposalBook<RepairProposal>();

  constructor(private readonly deps: InspectorDeps) {}

  /** Never throws: a failure is an error body with a status and a message that says what to do. */
  async handle(request: ApiRequest): Promise<ApiResponse> {
    try {
      return { status: 200, body: await this.route(request) };
    } catch (error) {
      if (error instanceof ApiError) return { status: error.status, body: { error: error.message } };
      if (isLcmError(error)) {
        // busy: another gateway holds the conversation (PostgreSQL); the page says to retry.
        const status = error.code === "not_found" ? 404 : error.code === "invalid_input" ? 400 : error.code === "aborted" || error.code === "busy" ? 409 : 500;
        return { status, body: { error: error.message, code: error.code } };
      }
      return { status: 500, body: { error: `The inspector failed: ${error instanceof Error ? error.message : String(error)}` } };
    }
  }

  private async route(request: ApiRequest): Promise<unknown> {
    const parts = request.path.split("/").filter((part) => part !== "");
    const [head, id, tail] = parts;
    if (request.method === "GET") {
      if (head === "overview" && parts.length === 1) return this.overview();
      if (head === "conversations" && id !== undefined && tail === "dag") return this.dag(conversationIdOf(id));
      if (head === "conversations" && id !== undefined && tail === "context") return this.context(conversationIdOf(id));
      if (head === "conversations" && id !== undefined && tail === "files") return this.files(conversationIdOf(id));
      if (head === "summaries" && id !== undefined && parts.length === 2) return this.summary(id);
      if (head === "files" && id !== undefined && parts.length === 2) return this.file(id, request.query);
      if (head === "search" && parts.length === 1) return this.search(request.query);
      if (head === "repairs" && parts.length === 1) return this.repairList(request.query);
    }
    if (request.method === "POST" && head === "repairs") {
      const repairs = this.writable();
      if (id === "propose" && parts.length === 2) return this.propose(repairs.service, request.body);
      if (id !== undefined && tail === "apply") return this.apply(repairs.service, id);
      if (id !== undefined && tail === "undo") return { undone: await repairs.service.undo(positiveOf(id, "repair")) };
    }
    throw new ApiError(404, `No inspector route ${request.method} ${request.path}.`);
  }

  private async overview() {
    const { deps } = this;
    const listings = await deps.operator.listConversations({ limit: 500 });
    const totals = await deps.status.databaseTotals();
    const limits = spendLimitsOf(deps.config);
    const now = deps.clock.now();
    const conversations = [];
    for (const listing of listings) {
      const { conversation } = listing;
      const findings = (await deps.integrity.checkRecent(conversation.conversationId)).findings.length;
      const spend = sharedSpendGuard().usage(spendKey(deps.databasePath, conversation.conversationId), limits, now);
      conversations.push({
        conversationId: conversation.conversationId, agentId: conversation.agentId, sessionKey: conversation.sessionKey,
        messages: conversation.messageCount, tokens: conversation.messageTokens, contextTokens: conversation.contextTokens,
        summaries: listing.summaries, maxDepth: listing.maxDepth, lastActivityAt: conversation.updatedAt,
        archived: conversation.archivedAt !== null, ended: conversation.endedAt !== null,
        health: { fallbackSummaries: listing.fallbackSummaries, recentIntegrityFindings: findings, spendGuard: { calls: spend.calls, maxCalls: spend.maxCalls, capped: spend.capped } },
      });
    }
    const agents = [...new Set(conversations.map((conversation) => conversation.agentId))].sort();
    return {
      databasePath: deps.databasePath, readOnly: deps.repairs === undefined, readOnlyReason: deps.readOnlyReason,
      indexBacklog: totals.awaitingIndex, agents, conversations,
    };
  }

  private async dag(conversationId: number) {
    const conversation = await this.conversation(conversationId);
    const [nodes, writers] = await Promise.all([this.deps.operator.summaryNodes(conversationId, 160), this.deps.writers(conversationId)]);
    const leaves = nodes.filter((node) => node.kind === "leaf");
    return {
      conversationId, agentId: conversation.agentId, messageCount: conversation.messageCount,
      nodes: nodes.map((node) => ({ ...node, writtenBy: writers.get(node.summaryId) ?? null })),
      ranges: leaves.length <= MAX_RANGE_NODES
        ? leaves.map((leaf) => ({ summaryId: leaf.summaryId, seqStart: leaf.seqStart, seqEnd: leaf.seqEnd, messages: leaf.sourceMessageCount }))
        : [],
      rangesOmitted: leaves.length > MAX_RANGE_NODES,
    };
  }

  private async context(conversationId: number) {
    const conversation = await this.conversation(conversationId);
    const { tokens, config } = this.deps;
    const preview = await previewContext(conversation, {
      store: this.deps.store, tokens, defaultTokenBudget: config.defaultTokenBudget,
      systemPromptAddition: { text: SYSTEM_PROMPT_ADDITION, tokens: systemPromptAdditionTokens(tokens) },
    });
    const firstRaw = preview.messages.findIndex((message) => message.kind === "message");
    const window = conversation.lastWindowTokens;
    // What the host's own system prompt, tools and reserve took of the window the last turn (its budget is the rest).
    const host = window !== null && conversation.lastTokenBudget !== null ? Math.max(0, window - conversation.lastTokenBudget) : null;
    return {
      conversationId, budgetTokens: preview.budgetTokens, budgetSource: preview.budgetSource, windowTokens: window,
      hostTokens: host, reserveTokens: conversation.lastReserveTokens, systemPromptAdditionTokens: preview.systemPromptAddition.tokens,
      freshTail: { configuredCount: config.freshTailCount, rawMessagesInContext: preview.totals.rawMessageCount },
      totals: preview.totals,
      items: preview.messages.map((message, index) => ({
        index: index + 1, kind: message.kind, role: message.role, tokens: message.tokens, text: message.text.slice(0, 4_000),
        isRaw: index >= firstRaw && firstRaw >= 0 && message.kind === "message",
      })),
    };
  }

  private async files(conversationId: number) {
    await this.conversation(conversationId);
    const files = await this.deps.store.listLargeFiles(conversationId, 500);
    return {
      conversationId,
      files: files.map((file) => ({
        fileId: file.fileId, fileName: file.fileName, mimeType: file.mimeType, byteSize: file.byteSize, tokenCount: file.tokenCount,
        origin: file.origin, explorer: file.explorer, explorationSummary: file.explorationSummary, createdAt: file.createdAt,
      })),
    };
  }

  private async summary(summaryId: string) {
    const description = await this.deps.recall.describe({ kind: "operator" }, summaryId, { allConversations: true });
    if (description.type !== "summary") throw new ApiError(400, `${summaryId} is not a summary id (sum_…).`);
    const messages = await this.deps.store.getMessages(description.sourceMessageIds.slice(0, 60));
    const writers = await this.deps.writers(description.conversationId);
    return {
      ...description, writtenBy: writers.get(summaryId) ?? null,
      sourceMessages: messages.map((message) => ({
        messageId: message.messageId, seq: message.seq, role: message.role, tokens: message.tokenCount, createdAt: message.createdAt,
        text: message.content.slice(0, 1_200),
      })),
      sourceMessagesShown: messages.length,
    };
  }

  private async file(fileId: string, query: URLSearchParams) {
    const startLine = query.get("startLine");
    return this.deps.recall.describe({ kind: "operator" }, fileId, { allConversations: true }, {
      startLine: startLine === null ? 1 : positiveOf(startLine, "startLine"), maxLines: 200,
    });
  }

  private async search(query: URLSearchParams) {
    const pattern = query.get("q")?.trim() ?? "";
    if (pattern === "") throw new ApiError(400, "Give the words or the regular expression to search for (q).");
    const mode = query.get("mode") === "regex" ? "regex" : "full_text";
    const scopes = ["both", "messages", "summaries", "files"] as const;
    const scope = scopes.find((value) => value === query.get("scope")) ?? "both";
    const conversation = query.get("conversation");
    const outcome = await this.deps.recall.grep({ kind: "operator" }, {
      pattern, mode, scope, limit: 100, sort: mode === "full_text" ? "relevance" : "recency", since: null, before: null,
      ...(conversation ? { conversationId: positiveOf(conversation, "conversation") } : { allConversations: true }),
    });
    return { ...outcome.result, pattern, note: outcome.note, searchedConversations: outcome.searchedConversations };
  }

  private async repairList(query: URLSearchParams) {
    const store = this.deps.repairs?.store;
    if (!store) return { repairs: [] };
    const conversation = query.get("conversation");
    return { repairs: await store.listRepairs({ limit: 100, ...(conversation ? { conversationId: positiveOf(conversation, "conversation") } : {}) }) };
  }

  private async propose(service: SummaryRepairService, body: unknown) {
    const request = body as { kind?: unknown; summaryId?: unknown; content?: unknown } | null;
    const summaryId = typeof request?.summaryId === "string" ? request.summaryId : "";
    if (!/^sum_[0-9a-f]{16}$/.test(summaryId)) throw new ApiError(400, "summaryId must be a summary id (sum_ and 16 hex digits).");
    let proposal: RepairProposal;
    if (request?.kind === "resummarize") proposal = await service.propose({ kind: "resummarize", summaryId });
    else if (request?.kind === "dissolve") proposal = await service.propose({ kind: "dissolve", summaryId });
    else if (request?.kind === "rewrite" && typeof request.content === "string") proposal = await service.propose({ kind: "rewrite", summaryId, content: request.content });
    else throw new ApiError(400, "kind must be resummarize, rewrite (with content: the new text) or dissolve.");
    const { plan: _plan, ...view } = proposal;
    return { proposalId: this.proposals.add(proposal), proposal: view };
  }

  private async apply(service: SummaryRepairService, proposalId: string) {
    const proposal = this.proposals.take(proposalId);
    if (!proposal) throw new ApiError(404, `No pending proposal ${proposalId}: it was applied already or expired; preview the repair again.`);
    return { outcome: await service.apply(proposal) };
  }

  private writable(): NonNullable<InspectorDeps["repairs"]> {
    if (!this.deps.repairs) {
      throw new ApiError(403, `This inspector is read-only (${this.deps.readOnlyReason ?? "no write access"}): repairs need \`lcm inspect --write\` or \`lcm repair\`.`);
    }
    return this.deps.repairs;
  }

  private async conversation(conversationId: number) {
    const conversation = await this.deps.store.getConversation(conversationId);
    if (!conversation) throw new ApiError(404, `No conversation ${conversationId} is stored.`);
    return conversation;
  }
}

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function conversationIdOf(value: string): number {
  return positiveOf(value, "conversation");
}

function positiveOf(value: string, name: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw new ApiError(400, `${name} must be a positive whole number, got ${JSON.stringify(value)}.`);
  return number;
}
