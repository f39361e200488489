/**
 * Reads what a hook's fallback needs from the host's parameters without trusting them. A hook's guard turns a
 * failure into a truthful result; the fallback that builds that result runs inside the guard's catch, where a
 * throw would escape to the host and quarantine the engine, so it may only read params through these helpers.
 */
import type { AgentMessage } from "../host/openclaw-types.js";

/**
 * The host's own messages (assemble's pass-through when LCM cannot assemble). Contract: never throws; params
 * that are not an object, or whose `messages` cannot be read or is not an array, give no messages.
 */
export function hostMessagesOf(params: unknown): AgentMessage[] {
  try {
    const messages = params !== null && typeof params === "object" ? (params as { messages?: unknown }).messages : undefined;
    return Array.isArray(messages) ? (messages as AgentMessage[]) : [];
  } catch {
    // A getter or Proxy trap threw (Array.isArray throws on a revoked Proxy too): nothing can be passed through.
    return [];
  }
}

/** The session key of a hook's params. Contract: never throws; undefined when absent or unreadable. */
export function sessionKeyOf(params: unknown): string | undefined {
  try {
    const key = params !== null && typeof params === "object" ? (params as { sessionKey?: unknown }).sessionKey : undefined;
    return typeof key === "string" && key !== "" ? key : undefined;
  } catch {
    return undefined; // a throwing getter: treated as a session without a key (stored, the default)
  }
}
