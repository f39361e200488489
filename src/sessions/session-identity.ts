/**
 * Which agent and conversation a hook call belongs to. OpenClaw session keys look like
 * `agent:<agentId>:<rest>` (sub-agents: `agent:<agentId>:subagent:<name>`); the agent owns the conversation.
 */
import type { SessionTarget } from "../host/openclaw-types.js";
import type { ConversationKey } from "../records.js";

export const DEFAULT_AGENT_ID = "main";

export function agentIdFromSessionKey(sessionKey: string | undefined): string | undefined {
  const match = /^agent:([^:]+):/.exec(sessionKey ?? "");
  return match?.[1];
}

export function conversationKeyOf(params: {
  sessionId: string;
  sessionKey?: string;
  sessionTarget?: SessionTarget;
  agentId?: string;
}): ConversationKey {
  const agentId =
    agentIdFromSessionKey(params.sessionKey) ??
    (typeof params.sessionTarget?.agentId === "string" ? params.sessionTarget.agentId : undefined) ??
    params.agentId ??
    DEFAULT_AGENT_ID;
  return params.sessionKey === undefined
    ? { agentId, sessionId: params.sessionId }
    : { agentId, sessionId: params.sessionId, sessionKey: params.sessionKey };
}

/** True for sessions the host runs as sub-agents (delegated expansion runs among them). */
export function isSubagentSessionKey(sessionKey: string | undefined): boolean {
  return /^agent:[^:]+:subagent:/.test(sessionKey ?? "");
}
