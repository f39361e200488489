/**
 * The `lcm.status` gateway RPC: what `/lcm status` shows, as data (services/status-service.ts StatusSnapshot), for
 * dashboards and scripts: `openclaw gateway call lcm.status --params '{"sessionKey":"agent:main:main"}' --json`.
 * Params (all optional): conversationId, or agentId with sessionId and/or sessionKey; none gives the database and
 * process status alone. A selector that finds nothing answers `conversation: null` with a `note` saying why that can
 * be; with no database yet the answer says so and creates none. The handler never throws: a failure is answered as
 * an RPC error with a code and message.
 */
import { describeError, isLcmError } from "../errors.js";
import type { GatewayMethodHandler } from "../host/openclaw-types.js";
import type { ConversationSelector, StatusSource } from "../services/status-service.js";

export const STATUS_METHOD = "lcm.status";

export function createStatusRpc(status: () => StatusSource): GatewayMethodHandler {
  return async ({ params, respond }) => {
    let selector: ConversationSelector;
    try {
      selector = selectorOf(params);
    } catch (error) {
      respond(false, undefined, { code: "INVALID_REQUEST", message: describeError(error) });
      return;
    }
    try {
      respond(true, await status().snapshot(selector));
    } catch (error) {
      const code = isLcmError(error, "unavailable") ? "UNAVAILABLE" : "INTERNAL";
      respond(false, undefined, { code, message: `lcm.status failed: ${describeError(error)}` });
    }
  };
}

function selectorOf(params: unknown): ConversationSelector {
  const source = (params ?? {}) as Record<string, unknown>;
  if (typeof source !== "object" || Array.isArray(source)) throw new Error("params must be an object");
  const selector: ConversationSelector = {};
  if (source.conversationId !== undefined) {
    if (!Number.isSafeInteger(source.conversationId) || (source.conversationId as number) < 1) throw new Error("conversationId must be a positive integer");
    selector.conversationId = source.conversationId as number;
  }
  for (const key of ["agentId", "sessionId", "sessionKey"] as const) {
    if (source[key] === undefined) continue;
    if (typeof source[key] !== "string" || source[key] === "") throw new Error(`${key} must be a non-empty string`);
    selector[key] = source[key] as string;
  }
  return selector;
}
