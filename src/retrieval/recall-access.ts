/**
 * Who may read what. Conversations belong to an agent; recall reads the caller's current conversation by
 * default, one named conversation, or all of the agent's conversations — never another agent's unless
 * `allowCrossAgentRecall` is set, and never the sessions of delegated expansions. A delegated expansion child
 * (recognized by its session key) reads exactly the conversations of its grant while the grant is active.
 */
import type { Clock } from "../contracts.js";
import { LcmError } from "../errors.js";
import type { ConversationId, ConversationRecord } from "../records.js";
import { grantState, isExpansionSessionKey, type GrantRecord, type GrantStore } from "../store/grant-store.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import type { ConversationStore } from "../store/store.js";

export interface RecallCaller {
  agentId: string;
  sessionKey?: string;
  sessionId?: string;
}

export interface ScopeRequest {
  conversationId?: number;
  allConversations?: boolean;
}

export interface RecallScope {
  conversationIds: ConversationId[];
  /** How the scope was chosen: the current conversation, a named one, all of the agent's, or a grant. */
  kind: "current" | "conversation" | "all" | "grant";
  /** The caller's own conversation, when one is stored. */
  currentConversationId: ConversationId | null;
  /** The model window its host last stated for that conversation (assemble records it); null when not known. */
  currentWindowTokens: number | null;
  /** Set for delegated expansion children. */
  grant: GrantRecord | null;
}

export interface RecallAccessDeps {
  store: Pick<RetrievalStore, "listRecallConversationIds" | "findConversationBySessionKey"> &
    Pick<ConversationStore, "findConversation" | "getConversation">;
  grants: Pick<GrantStore, "findGrantForChild">;
  clock: Clock;
  allowCrossAgentRecall: boolean;
}

export class RecallAccess {
  constructor(private readonly deps: RecallAccessDeps) {}

  async resolve(caller: RecallCaller, request: ScopeRequest): Promise<RecallScope> {
    if (request.conversationId !== undefined && request.allConversations) {
      throw new LcmError("invalid_input", 'Pass either "conversationId" or "allConversations", not both.', { parameter: "conversationId" });
    }
    if (isExpansionSessionKey(caller.sessionKey)) return this.resolveForGrant(caller, request);
    // Every conversation the caller may read is listed while the current one is found (they do not depend on each
    // other; on a server's backend, a round trip saved); handled here too, so a failure of the first leaves no
    // unhandled rejection behind.
    const listed = request.allConversations && request.conversationId === undefined
      ? this.deps.store.listRecallConversationIds(this.deps.allowCrossAgentRecall ? null : caller.agentId)
      : null;
    listed?.catch(() => undefined);
    const current = await this.currentConversation(caller);
    const currentConversationId = current?.conversationId ?? null;
    const currentWindowTokens = current?.lastWindowTokens ?? null;
    if (request.conversationId !== undefined) {
      const conversation = await this.deps.store.getConversation(request.conversationId);
      if (!conversation || !this.isReadable(caller, conversation)) {
        throw new LcmError(
          "not_found",
          `Parameter "conversationId": conversation ${request.conversationId} does not exist or belongs to another agent. Omit it to search the current conversation, or use allConversations: true.`,
          { parameter: "conversationId" },
        );
      }
      return { conversationIds: [conversation.conversationId], kind: "conversation", currentConversationId, currentWindowTokens, grant: null };
    }
    if (listed) {
      const conversationIds = await listed;
      return { conversationIds, kind: "all", currentConversationId, currentWindowTokens, grant: null };
    }
    return { conversationIds: current ? [current.conversationId] : [], kind: "current", currentConversationId, currentWindowTokens, grant: null };
  }

  /**
   * Throws unless `conversationId` (the owner of the id being read) is inside `scope`. The message tells the
   * caller how to widen the scope when the conversation is theirs, and reveals nothing when it is not.
   */
  async authorize(caller: RecallCaller, scope: RecallScope, conversationId: ConversationId, id: string, parameter: string): Promise<void> {
    if (scope.conversationIds.includes(conversationId)) return;
    if (scope.grant) {
      throw new LcmError("forbidden", `Parameter "${parameter}": ${id} is outside the conversations this delegated expansion may read.`, { parameter });
    }
    const conversation = await this.deps.store.getConversation(conversationId);
    if (conversation && this.isReadable(caller, conversation)) {
      throw new LcmError(
        "forbidden",
        `Parameter "${parameter}": ${id} belongs to conversation ${conversationId}, not the ${scope.kind === "current" ? "current conversation" : "conversation searched"}. Pass conversationId: ${conversationId} or allConversations: true.`,
        { parameter, conversationId },
      );
    }
    throw notFound(id, parameter);
  }

  /** The active grant of a delegated expansion child; throws "forbidden" for anyone else or a dead grant. */
  async activeGrant(caller: RecallCaller): Promise<GrantRecord> {
    const grant = isExpansionSessionKey(caller.sessionKey) ? await this.deps.grants.findGrantForChild(caller.sessionKey!) : null;
    if (!grant || grant.agentId !== caller.agentId) {
      throw new LcmError(
        "forbidden",
        "lcm_expand is only available inside a delegated expansion started by lcm_expand_query. Use lcm_expand_query (or lcm_describe for one summary) instead.",
      );
    }
    const state = grantState(grant, this.deps.clock.now());
    if (state === "expired") {
      throw new LcmError("forbidden", "The expansion grant of this session has expired; answer with what you have already read.");
    }
    if (state === "revoked") {
      throw new LcmError("forbidden", `The expansion grant of this session was revoked (${grant.revokeReason ?? "no reason given"}); answer with what you have already read.`);
    }
    return grant;
  }

  private async resolveForGrant(caller: RecallCaller, request: ScopeRequest): Promise<RecallScope> {
    const grant = await this.activeGrant(caller);
    if (request.conversationId !== undefined && !grant.conversationIds.includes(request.conversationId)) {
      throw new LcmError(
        "forbidden",
        `Parameter "conversationId": conversation ${request.conversationId} is outside this expansion's grant (conversations ${grant.conversationIds.join(", ")}).`,
        { parameter: "conversationId" },
      );
    }
    const conversationIds = request.conversationId !== undefined ? [request.conversationId] : grant.conversationIds;
    return { conversationIds, kind: "grant", currentConversationId: null, currentWindowTokens: null, grant };
  }

  private async currentConversation(caller: RecallCaller): Promise<ConversationRecord | null> {
    const bySession = caller.sessionId
      ? await this.deps.store.findConversation({ agentId: caller.agentId, sessionId: caller.sessionId })
      : null;
    if (bySession && this.isReadable(caller, bySession)) return bySession;
    if (!caller.sessionKey) return null;
    return this.deps.store.findConversationBySessionKey(caller.agentId, caller.sessionKey);
  }

  private isReadable(caller: RecallCaller, conversation: ConversationRecord): boolean {
    if (isExpansionSessionKey(conversation.sessionKey)) return false;
    return this.deps.allowCrossAgentRecall || conversation.agentId === caller.agentId;
  }
}

export function notFound(id: string, parameter: string): LcmError {
  const what = id.startsWith("file_") ? "file" : "summary";
  return new LcmError("not_found", `Parameter "${parameter}": no ${what} ${id} is stored in the history you may read. Check the id (copy it from a <summary id=…> tag or an lcm_grep result).`, { parameter });
}
