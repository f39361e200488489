/**
 * What every backend's message writes share: how a large append or turn is cut into transactions (chunks that each
 * hold the event loop and a transaction for a short while), the tag that scopes a new turn's colliding fingerprints,
 * how a host's token count is clamped before it is recorded, and whether a budget record changes anything.
 * Backend-neutral; the SQLite and PostgreSQL stores both import it, so both cut the same turn at the same messages.
 */
import { createHash } from "node:crypto";
import type { EncodedMessage } from "../messages/message-codec.js";
import type { ConversationRecord } from "../records.js";
import type { BudgetRecord } from "./store.js";

/** Messages per write transaction: each chunk holds the event loop for a few milliseconds. */
export const CHUNK_MESSAGES = 500;
/** Characters of content per write transaction (one huge message is still one chunk). */
export const CHUNK_CHARS = 4_000_000;

export function chunksOf(messages: EncodedMessage[]): EncodedMessage[][] {
  const chunks: EncodedMessage[][] = [];
  let current: EncodedMessage[] = [];
  let chars = 0;
  for (const message of messages) {
    if (current.length > 0 && (current.length >= CHUNK_MESSAGES || chars + message.content.length > CHUNK_CHARS)) {
      chunks.push(current);
      current = [];
      chars = 0;
    }
    current.push(message);
    chars += message.content.length;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** A short, stable tag of the entry that opened a turn, for identities scoped to the turn. */
export function turnTagOf(admissionEntryId: string): string {
  return createHash("sha256").update(admissionEntryId).digest("base64url").slice(0, 12);
}

/** Far above any model's window, far below 2^53: the most tokens a recorded budget states. */
const MAX_RECORDED_TOKENS = 1_000_000_000_000;

/**
 * A host's token count as it may be stored: a whole number up to MAX_RECORDED_TOKENS, else nothing. An integer
 * above 2^53 would be stored but never read back exactly (node:sqlite refuses it, a JS number loses it), breaking
 * every later hook of the session.
 */
export function recordableTokens(value: number | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.min(Math.floor(value), MAX_RECORDED_TOKENS) : undefined;
}

/**
 * Whether recording `budget` would change what `conversation` holds: the engine writes an unchanged budget no more
 * (a turn's assemble sees the same budget as the last one most of the time; on a server's backend, a round trip saved).
 */
export function budgetChanges(
  conversation: Pick<ConversationRecord, "lastTokenBudget" | "lastWindowTokens" | "lastReserveTokens" | "lastAssembly">,
  budget: BudgetRecord,
): boolean {
  const changes = (value: number | undefined, stored: number | null) => {
    const recorded = recordableTokens(value);
    return recorded !== undefined && recorded !== stored;
  };
  return changes(budget.tokenBudget, conversation.lastTokenBudget) || changes(budget.windowTokens, conversation.lastWindowTokens) ||
    changes(budget.reserveTokens, conversation.lastReserveTokens) ||
    (budget.assembly !== undefined && JSON.stringify(budget.assembly) !== JSON.stringify(conversation.lastAssembly));
}
