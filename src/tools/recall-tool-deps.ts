/**
 * What the recall tools need, and who is calling them. The host builds tools per session through a factory
 * that receives the session's context; the database is opened only when a tool runs (`services()`), so listing
 * tools in any registration mode stays side-effect-free.
 */
import type { Clock, Logger } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import { agentIdFromSessionKey, DEFAULT_AGENT_ID } from "../sessions/session-identity.js";
import type { AgentTool, ToolContext } from "../host/openclaw-types.js";
import type { RecallCaller } from "../retrieval/recall-access.js";
import type { RecallServices } from "../retrieval/recall-services.js";
import { type RecallReader, RecallService } from "../services/recall-service.js";
import { Type, type TSchema } from "@sinclair/typebox";
import { runTool, type ToolResult } from "./tool-result.js";

export interface RecallToolDeps {
  /** Opens (or reuses) the shared database and builds the recall components. Called inside execute only. */
  services: () => RecallServices;
  config: Pick<LcmConfig, "maxExpandTokens" | "expansionTimeoutMs">;
  logger: Logger;
  clock: Clock;
}

/** The recall service the tools call (opens or reuses the database: call it inside execute only). */
export function recallService(deps: RecallToolDeps): RecallService {
  return new RecallService({ recall: deps.services(), clock: deps.clock });
}

/** The caller of a tool: the agent comes from the session key (as for conversations), else from the context. */
export function callerOf(context: ToolContext): RecallCaller {
  const sessionKey = typeof context.sessionKey === "string" && context.sessionKey !== "" ? context.sessionKey : undefined;
  const agentId =
    agentIdFromSessionKey(sessionKey) ??
    (typeof context.agentId === "string" && context.agentId !== "" ? context.agentId : DEFAULT_AGENT_ID);
  const sessionId = typeof context.sessionId === "string" && context.sessionId !== "" ? context.sessionId : undefined;
  return { agentId, ...(sessionKey ? { sessionKey } : {}), ...(sessionId ? { sessionId } : {}) };
}

/**
 * A recall tool as the agent gets it: direct-only, each call run by runTool (logged, a failure an error result) through
 * `run`, the tool's body that the MCP server calls too, as this session's agent reads.
 */
export function agentRecallTool(
  deps: RecallToolDeps,
  context: ToolContext,
  tool: { name: string; label: string; description: string; parameters: TSchema },
  run: (service: RecallService, reader: RecallReader, rawParams: unknown) => Promise<ToolResult>,
): AgentTool {
  return {
    ...tool,
    catalogMode: "direct-only",
    execute: (_toolCallId, rawParams, signal) =>
      runTool(tool.name, deps.logger, signal, () => run(recallService(deps), { kind: "agent", caller: callerOf(context) }, rawParams)),
  };
}

/** A string enum as plain `{ type: "string", enum }`: accepted by every provider (unlike anyOf of consts). */
export function stringEnum<T extends string>(values: readonly T[], options: { description: string; default?: T }): TSchema {
  return Type.Unsafe<T>({ type: "string", enum: [...values], ...options });
}

/** The scope parameters shared by the recall tools. */
export const SCOPE_PARAMETERS = {
  conversationId: Type.Optional(
    Type.Integer({ minimum: 1, description: "Another conversation (an id from lcm_grep)." }),
  ),
  allConversations: Type.Optional(
    Type.Boolean({ description: "All of this agent's conversations." }),
  ),
};
