/**
 * Imports host-provided history (assemble's `messages`, afterTurn's `messages`) that the store does not have
 * yet, without ever duplicating. Identity keys come from the host (entry id, idempotency key) or a content
 * fingerprint. The newest host message the store already has is the anchor: messages after it are new and are
 * appended in order. With no anchor, an empty conversation imports everything; a non-empty one imports nothing
 * (the host view does not overlap what we stored, so order cannot be known) and bootstrap reconciles from the
 * transcript file instead.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import { describeError } from "../errors.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import { hostCommandsIn } from "../messages/host-commands.js";
import { type EncodedMessage, encodeMessage, identityKeysOf, isStoredIn, MessageFlags } from "../messages/message-codec.js";
import type { LargeContentExternalizer } from "../large-files/large-file-interceptor.js";
import type { ConversationRecord } from "../records.js";
import type { AppendResult, MessageStore } from "../store/store.js";

export interface HistoryImportDeps {
  store: MessageStore;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  /** Stores large file blocks and tool output aside before the messages are stored. */
  largeFiles?: LargeContentExternalizer;
}

export interface HistoryImportResult {
  imported: number;
  skippedInvalid: number;
  /** True when the host history had no message in common with a non-empty stored conversation. */
  noOverlap: boolean;
}

/** Messages encoded between two turns of the event loop: a million-message commit never holds the loop for long. */
export const ENCODE_SLICE = 500;

/**
 * Encodes what can be encoded; invalid messages are logged and skipped, never stored half-way. Slices of
 * ENCODE_SLICE messages with the event loop running between them (fingerprints and token counts are CPU work).
 */
export async function encodeAll(messages: readonly unknown[], deps: Pick<HistoryImportDeps, "tokens" | "clock" | "logger">): Promise<{
  encoded: EncodedMessage[];
  invalid: number;
  /** Host commands answered in this batch whose command was stored before it (their `idempotencyKey`s). */
  unpairedCommandKeys: string[];
}> {
  const encoded: EncodedMessage[] = [];
  let invalid = 0;
  const now = deps.clock.now();
  const valid = messages.filter((message): message is AgentMessage => message !== null && typeof message === "object");
  // Host commands and the gateway's answers are stored but never assembled nor summarized (host-commands.ts).
  const { commandIndexes, unpairedCommandKeys } = hostCommandsIn(valid);
  const commands = new Set([...commandIndexes].map((index) => valid[index]));
  for (let index = 0; index < messages.length; index++) {
    if (index > 0 && index % ENCODE_SLICE === 0) await yieldToEventLoop();
    try {
      const message = encodeMessage(messages[index] as AgentMessage, deps.tokens, now);
      if (commands.has(messages[index] as AgentMessage)) message.flags |= MessageFlags.excluded;
      encoded.push(message);
    } catch (error) {
      invalid++;
      deps.logger.warn(`Skipped a message that cannot be stored: ${describeError(error)}`);
    }
  }
  return { encoded, invalid, unpairedCommandKeys };
}

export async function importHostHistory(
  conversation: ConversationRecord,
  messages: readonly unknown[],
  deps: HistoryImportDeps,
): Promise<HistoryImportResult> {
  if (messages.length === 0) return { imported: 0, skippedInvalid: 0, noOverlap: false };
  const { encoded, invalid } = await encodeAll(messages, deps);
  const existing = await deps.store.findExistingIdentities(
    conversation.conversationId,
    encoded.flatMap(identityKeysOf),
  );
  let anchor = -1;
  for (let index = encoded.length - 1; index >= 0; index--) {
    if (isStoredIn(existing, encoded[index]!)) {
      anchor = index;
      break;
    }
  }
  if (anchor === -1 && conversation.messageCount > 0) {
    deps.logger.warn(
      `Host history for session ${conversation.sessionId} has no message in common with the ${conversation.messageCount} stored; ` +
        "nothing imported from it (bootstrap reconciles from the transcript).",
    );
    return { imported: 0, skippedInvalid: invalid, noOverlap: true };
  }
  const fresh = encoded.slice(anchor + 1).filter((message) => !isStoredIn(existing, message));
  if (fresh.length === 0) return { imported: 0, skippedInvalid: invalid, noOverlap: false };
  const result = await storeEncoded(conversation, fresh, deps);
  return { imported: result.inserted, skippedInvalid: invalid, noOverlap: false };
}

/** Every ingest path's last step: large content stored aside (when configured), then one append transaction. */
export async function storeEncoded(
  conversation: ConversationRecord,
  encoded: EncodedMessage[],
  deps: Pick<HistoryImportDeps, "store" | "clock" | "largeFiles">,
): Promise<AppendResult> {
  const toStore = deps.largeFiles ? await deps.largeFiles.externalize(conversation, encoded) : encoded;
  return deps.store.appendMessages(conversation.conversationId, toStore, deps.clock.now());
}
