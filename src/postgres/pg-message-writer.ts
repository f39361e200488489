/**
 * The message writes of PgStore (appendMessages, commitTurn), each chunk one transaction. Several gateways may write
 * one conversation at once: every transaction first locks the conversation's row (SELECT … FOR UPDATE), so writers of
 * one conversation take turns, each sees what the one before committed, and seqs and ordinals stay dense and in
 * commit order. The identity index and the committed turn's primary key stay the last word (ON CONFLICT DO NOTHING).
 * A chunk is four statements whatever its size (lock; claim and identities; messages with parts and context items;
 * counters and progress): rows go in through unnest over arrays, not one round trip per row.
 */
import { type EncodedMessage, MessageFlags } from "../messages/message-codec.js";
import type { ConversationId, LargeFileRecord } from "../records.js";
import type { AppendResult, TurnIdentity } from "../store/store.js";
import { turnTagOf } from "../store/turn-chunks.js";
import { toPgText, toPgTextOrNull } from "./pg-database.js";
import type { PgQueryable } from "./pg-queryable.js";
import { LARGE_FILE_COLUMNS } from "./pg-rows.js";

interface LockedConversation {
  nextSeq: number;
  nextOrdinal: number;
}

/** Locks the conversation's row for the rest of the transaction; throws when there is no such conversation. */
export async function lockConversation(tx: PgQueryable, conversationId: ConversationId): Promise<LockedConversation> {
  const row = await tx.row<{ next_seq: number; next_ordinal: number }>(
    "SELECT next_seq, next_ordinal FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId],
  );
  if (!row) throw new Error(`Conversation ${conversationId} does not exist.`);
  return { nextSeq: row.next_seq, nextOrdinal: row.next_ordinal };
}

export type TurnClaim =
  | { kind: "complete" }
  | { kind: "open"; storedMessages: number; turnTag: string | undefined; taken: Set<string> };

/**
 * The turn's claim, made if new, in one statement after lockConversation (a statement run after the lock sees every
 * claim committed before it), together with which of `candidates` (encoded identity keys) the conversation stores.
 * `turnTag` scopes colliding fingerprints to the turn when the host named a transcript entry no earlier committed turn
 * was opened by.
 */
export async function claimTurn(
  tx: PgQueryable, conversationId: ConversationId, turn: TurnIdentity, messageCount: number, now: number, candidates: string[],
): Promise<TurnClaim> {
  const row = (await tx.row<{ found: boolean; stored_messages: number | null; same_opening: boolean; taken: string[] }>(
    `WITH existing AS (
       SELECT stored_messages FROM committed_turns WHERE conversation_id = $1 AND advancement_key = $2
     ), same_opening AS (
       SELECT 1 FROM committed_turns
        WHERE $3::text IS NOT NULL AND conversation_id = $1 AND admission_entry_id = $3 AND advancement_key <> $2 LIMIT 1
     ), claimed AS (
       INSERT INTO committed_turns (conversation_id, advancement_key, committed_at, message_count, admission_entry_id, stored_messages)
       SELECT $1, $2, $4, $5, $3, 0 WHERE NOT EXISTS (SELECT 1 FROM existing)
       ON CONFLICT DO NOTHING
     )
     SELECT EXISTS (SELECT 1 FROM existing) AS found, (SELECT stored_messages FROM existing) AS stored_messages,
            EXISTS (SELECT 1 FROM same_opening) AS same_opening,
            ARRAY(SELECT identity_key FROM messages WHERE conversation_id = $1 AND identity_key = ANY($6::text[])) AS taken`,
    [conversationId, toPgText(turn.advancementKey), toPgTextOrNull(turn.admissionEntryId), now, messageCount, candidates],
  ))!;
  if (row.found && row.stored_messages === null) return { kind: "complete" };
  const isNewTurn = turn.admissionEntryId !== undefined && !row.same_opening;
  return {
    kind: "open", storedMessages: row.stored_messages ?? 0, turnTag: isNewTurn ? turnTagOf(turn.admissionEntryId!) : undefined, taken: new Set(row.taken),
  };
}

/** Which of `candidates` (encoded identity keys) the conversation stores. */
export async function takenIdentities(tx: PgQueryable, conversationId: ConversationId, candidates: string[]): Promise<Set<string>> {
  if (candidates.length === 0) return new Set();
  const rows = await tx.rows<{ identity_key: string }>(
    "SELECT identity_key FROM messages WHERE conversation_id = $1 AND identity_key = ANY($2::text[])", [conversationId, candidates],
  );
  return new Set(rows.map((row) => row.identity_key));
}

/** The identity a message of a new turn is stored under when its own collides (`turnTag` given, fingerprints only). */
function scopedKey(message: EncodedMessage, turnTag: string | undefined, index: number): string | null {
  return turnTag !== undefined && message.identityKey.startsWith("fp:") ? `${message.identityKey}@${turnTag}:${index}` : null;
}

/**
 * Every identity `messages` could be stored under or recognised by (encoded): own, legacy, and scoped to the turn
 * `turnTag` names, the first message being the turn's `firstIndex`-th.
 */
export function identityCandidates(messages: EncodedMessage[], turnTag: string | undefined, firstIndex: number): string[] {
  return messages.flatMap((message, index) => [message.identityKey, message.legacyIdentityKey, scopedKey(message, turnTag, firstIndex + index)])
    .filter((key): key is string => typeof key === "string").map(toPgText);
}

/** Records how many of a turn's messages are stored (null: all of them, the turn is committed). */
export interface TurnProgress {
  advancementKey: string;
  storedMessages: number | null;
}

interface PlannedMessage {
  message: EncodedMessage;
  /** The identity it is stored under (encoded for PostgreSQL). */
  identityKey: string;
  seq: number;
  /** Its context ordinal, or null when it is excluded from context. */
  ordinal: number | null;
}

/**
 * Stores `messages` after lockConversation (same transaction), with SQLite's rules: a message whose identity (or
 * legacy identity) is stored already (`taken`, read after the lock) is a replay and changes nothing, except within a
 * new turn of commitTurn (`turnTag`), where a colliding fingerprint is another message, stored under an identity
 * scoped to the turn and its position. Counters on `conversations`, and the turn's progress, move in the same
 * transaction.
 */
export async function appendLocked(
  tx: PgQueryable, conversationId: ConversationId, locked: LockedConversation, messages: EncodedMessage[], now: number,
  options: { taken: Set<string>; turnTag?: string; firstIndex?: number; progress?: TurnProgress },
): Promise<AppendResult> {
  const { taken, turnTag, firstIndex = 0 } = options;
  let { nextSeq, nextOrdinal } = locked;
  const planned: PlannedMessage[] = [];
  for (const [index, message] of messages.entries()) {
    const legacy = message.legacyIdentityKey === undefined ? null : toPgText(message.legacyIdentityKey);
    if (legacy !== null && taken.has(legacy)) continue;
    const own = toPgText(message.identityKey);
    const scoped = scopedKey(message, turnTag, firstIndex + index);
    const identityKey = !taken.has(own) ? own : scoped !== null && !taken.has(toPgText(scoped)) ? toPgText(scoped) : null;
    if (identityKey === null) continue;
    taken.add(identityKey);
    const excluded = (message.flags & MessageFlags.excluded) !== 0;
    planned.push({ message, identityKey, seq: nextSeq++, ordinal: excluded ? null : nextOrdinal++ });
  }
  // Files are written right after the message that references them, as on SQLite (a trigger may look for it).
  for (const segment of segmentsEndingAtFiles(planned)) await insertSegment(tx, conversationId, segment);

  const messageTokens = planned.reduce((total, entry) => total + entry.message.tokenCount, 0);
  const inContext = planned.filter((entry) => entry.ordinal !== null);
  const contextTokens = inContext.reduce((total, entry) => total + entry.message.tokenCount, 0);
  const progress = options.progress;
  if (planned.length > 0 || progress) {
    // One statement: the counters (when something was stored) and the turn's progress (when this is a turn).
    await tx.run(
      `WITH progress AS (
         UPDATE committed_turns SET stored_messages = $10 WHERE $11::boolean AND conversation_id = $8 AND advancement_key = $9
       )
       UPDATE conversations SET next_seq = $1, next_ordinal = $2, message_count = message_count + $3,
         message_tokens = message_tokens + $4, context_tokens = context_tokens + $5,
         context_raw_tokens = context_raw_tokens + $5, context_items = context_items + $6,
         last_ingest_at = $7, updated_at = $7, ended_at = NULL, end_reason = NULL
       WHERE conversation_id = $8 AND $3::bigint > 0`,
      [
        nextSeq, nextOrdinal, planned.length, messageTokens, contextTokens, inContext.length, now, conversationId,
        toPgText(progress?.advancementKey ?? ""), progress?.storedMessages ?? null, progress !== undefined,
      ],
    );
  }
  return { inserted: planned.length, duplicates: messages.length - planned.length };
}

/** The planned messages cut after each one that carries large files (usually one segment: all of them). */
function segmentsEndingAtFiles(planned: PlannedMessage[]): PlannedMessage[][] {
  const segments: PlannedMessage[][] = [];
  let current: PlannedMessage[] = [];
  for (const entry of planned) {
    current.push(entry);
    if (entry.message.largeFiles?.length) {
      segments.push(current);
      current = [];
    }
  }
  if (current.length > 0) segments.push(current);
  return segments;
}

/** One statement: the messages, their parts and their context items, joined on seq to the ids the insert returns. */
async function insertSegment(tx: PgQueryable, conversationId: ConversationId, segment: PlannedMessage[]): Promise<void> {
  const parts = segment.flatMap((entry) => entry.message.parts.map((part, ordinal) => ({ seq: entry.seq, ordinal, part })));
  const items = segment.filter((entry) => entry.ordinal !== null);
  const row = await tx.row<{ stored: number }>(
    `WITH stored AS (
       INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::bigint[], $9::text[])
       ON CONFLICT (conversation_id, identity_key) DO NOTHING
       RETURNING message_id, seq
     ), parts AS (
       INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end, data, meta)
       SELECT stored.message_id, p.ordinal, p.kind, p.text_start, p.text_end, p.data, p.meta
         FROM unnest($10::bigint[], $11::bigint[], $12::text[], $13::bigint[], $14::bigint[], $15::text[], $16::text[])
              AS p (seq, ordinal, kind, text_start, text_end, data, meta)
         JOIN stored ON stored.seq = p.seq
     ), items AS (
       INSERT INTO context_items (conversation_id, ordinal, message_id, token_count, flags)
       SELECT $1, i.ordinal, stored.message_id, i.token_count, i.flags
         FROM unnest($17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[]) AS i (seq, ordinal, token_count, flags)
         JOIN stored ON stored.seq = i.seq
     )
     SELECT count(*)::bigint AS stored FROM stored`,
    [
      conversationId,
      segment.map((entry) => entry.seq),
      segment.map((entry) => toPgText(entry.message.role)),
      segment.map((entry) => toPgText(entry.message.content)),
      segment.map((entry) => entry.message.tokenCount),
      segment.map((entry) => entry.message.createdAt),
      segment.map((entry) => entry.identityKey),
      segment.map((entry) => entry.message.flags),
      segment.map((entry) => toPgText(entry.message.meta)),
      parts.map((entry) => entry.seq), parts.map((entry) => entry.ordinal), parts.map((entry) => entry.part.kind),
      parts.map((entry) => entry.part.start), parts.map((entry) => entry.part.end),
      parts.map((entry) => toPgTextOrNull(entry.part.data)), parts.map((entry) => toPgTextOrNull(entry.part.meta)),
      items.map((entry) => entry.seq), items.map((entry) => entry.ordinal), items.map((entry) => entry.message.tokenCount),
      items.map((entry) => entry.message.itemFlags),
    ],
  );
  // A message of the segment was stored meanwhile by a writer that did not lock the row: all of this rolls back.
  if (row?.stored !== segment.length) throw anotherWriter(conversationId);
  const files = segment.at(-1)!.message.largeFiles ?? [];
  for (const file of files) await insertLargeFile(tx, conversationId, file);
}

/**
 * A file row, written with the message that references it. A row that exists already (the same content sent again,
 * or a replay) is left as it is: ids derive from the content hash.
 */
async function insertLargeFile(tx: PgQueryable, conversationId: ConversationId, file: LargeFileRecord): Promise<void> {
  await tx.run(
    `INSERT INTO large_files (${LARGE_FILE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING`,
    [
      file.fileId, conversationId, file.contentHash, toPgTextOrNull(file.fileName), toPgTextOrNull(file.mimeType), file.byteSize,
      file.tokenCount, file.storagePath, toPgText(file.explorationSummary), file.explorer, file.origin, toPgTextOrNull(file.toolName),
      file.createdAt,
    ],
  );
}

/**
 * A message identity appeared between our read and our insert: a writer that did not lock the conversation's row.
 * Thrown as a serialization failure (SQLSTATE 40001), so PgDatabase.transaction runs the whole chunk again and it
 * then sees that row as stored.
 */
function anotherWriter(conversationId: ConversationId): Error {
  return Object.assign(
    new Error(`Another writer stored a message of conversation ${conversationId} during this write; the write is retried.`),
    { code: "40001" },
  );
}
