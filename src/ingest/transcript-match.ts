/**
 * Recognises, in the host's transcript, the messages an import brought over from another store. The other store
 * kept neither the host's idempotency keys nor its millisecond timestamps, so the codec's identities never match
 * and bootstrap's first reading of the transcript would store the whole history a second time. Instead each
 * imported message carries a looser match key (role and visible content, no timestamp), and the first reading
 * consumes imported messages as a multiset: a transcript message takes the earliest imported message with its key
 * that is not newer than it, or is stored as new. Pure; the store keeps which imported messages are taken.
 */
import { createHash } from "node:crypto";
import type { AgentMessage } from "../host/openclaw-types.js";
import { sanitizeToolCallId, timestampToMillis } from "../messages/message-codec.js";
import type { ImportedMessageToMatch } from "../store/imported-history-store.js";

/**
 * Role and visible content, without the timestamp or any id the other store did not keep: text (a string content
 * and text blocks alike), tool calls by name and id, a tool result by its call id (its content may have been
 * stored aside there), command and output, a summary's text. Thinking blocks and images are left out: stores differ
 * in how they keep them. Two messages with the same key are only candidates; order and time decide.
 */
export function transcriptMatchKeyOf(message: AgentMessage): string {
  const pieces: string[] = [`role=${message.role}`];
  if (message.role === "toolResult" && typeof message.toolCallId === "string" && message.toolCallId !== "") {
    pieces.push(`result=${sanitizeToolCallId(message.toolCallId)}`);
  } else {
    const content = message.content;
    if (typeof content === "string") pieces.push(`text=${content}`);
    else if (Array.isArray(content)) for (const block of content) pieces.push(...visibleBlock(block));
    for (const field of ["command", "output", "summary", "customType"] as const) {
      if (typeof message[field] === "string") pieces.push(`${field}=${message[field] as string}`);
    }
  }
  return createHash("sha256").update(pieces.join("\u0000")).digest("base64url").slice(0, 22);
}

function visibleBlock(block: unknown): string[] {
  if (block === null || typeof block !== "object") return [];
  const record = block as Record<string, unknown>;
  if (record.type === "text" && typeof record.text === "string") return [`text=${record.text}`];
  if (record.type === "toolCall" || record.type === "tool_use") return [`call=${String(record.name)}:${sanitizeToolCallId(String(record.id ?? ""))}`];
  return [];
}

/**
 * The imported messages of one conversation, consumed as the transcript is read. `take` never matches a transcript
 * message to an imported one stored in an earlier second than the message's own time: whichever time the other store
 * kept (the host's timestamp cut to the second, or when it stored the message), it is never earlier than that, so a
 * newer message that repeats older words is stored, not dropped.
 */
export class ImportedHistoryMatcher {
  private readonly byKey = new Map<string, ImportedMessageToMatch[]>();
  private readonly byIdentity = new Map<string, ImportedMessageToMatch>();
  private readonly taken = new Set<string>();

  add(candidates: readonly ImportedMessageToMatch[]): void {
    for (const candidate of candidates) {
      const queue = this.byKey.get(candidate.matchKey);
      if (queue) queue.push(candidate);
      else this.byKey.set(candidate.matchKey, [candidate]);
      this.byIdentity.set(candidate.identityKey, candidate);
    }
  }

  /** The refs taken so far, in the order taken. */
  get matched(): string[] {
    return [...this.taken];
  }

  /** Takes the imported message stored under one of `identityKeys` (the transcript message is that row exactly). */
  takeIdentity(identityKeys: readonly string[]): boolean {
    for (const key of identityKeys) {
      const candidate = this.byIdentity.get(key);
      if (candidate && !this.taken.has(candidate.ref)) {
        this.taken.add(candidate.ref);
        return true;
      }
    }
    return false;
  }

  /** Takes the earliest imported message this transcript message can be; null when it is none (it is new). */
  take(message: AgentMessage): ImportedMessageToMatch | null {
    const queue = this.byKey.get(transcriptMatchKeyOf(message));
    if (!queue) return null;
    const time = timestampToMillis(message.timestamp, Number.NaN);
    const second = Number.isNaN(time) ? null : Math.floor(time / 1_000) * 1_000;
    while (queue.length > 0 && this.taken.has(queue[0]!.ref)) queue.shift();
    const candidate = queue.find((entry) => !this.taken.has(entry.ref) && (second === null || entry.createdAt >= second));
    if (!candidate) return null;
    this.taken.add(candidate.ref);
    return candidate;
  }
}
