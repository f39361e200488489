/**
 * The message writes of PgStore (appendMessages, commitTurn), each chunk one transaction. Several gateways may write
 * one conversation at once: every transaction first locks the conversation's row (SELECT … FOR UPDATE), so writers of
 * one conversation take turns, each sees what the one before committed, and seqs and ordinals stay dense and in
 * commit order. The identity index and the committed turn's primary key stay the last word (ON CONFLICT DO NOTHING).
 * Rows go in as a few multi-row statements per chunk (unnest over arrays), not one round trip per row.
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

export type TurnClaim = { kind: "complete" } | { kind: "open"; storedMessages: number; turnTag: string | undefined };

/**
 * The turn's claim, made if new (inside the caller's transaction, after lockConversation). `turnTag` scopes colliding
 * fingerprints to the turn when the host named a transcript entry no earlier committed turn was opened by.
 */
export async function claimTurn(
  tx: PgQueryable, conversationId: ConversationId, turn: TurnIdentity, messageCount: number, now: number,
): Promise<TurnClaim> {
  const key = toPgText(turn.advancementKey);
  const entry = toPgTextOrNull(turn.admissionEntryId);
  const existing = await tx.row<{ stored_messages: number | null }>(
    "SELECT stored_messages FROM committed_turns WHERE conversation_id = $1 AND advancement_key = $2", [conversationId, key],
  );
  if (existing && existing.stored_messages === null) return { kind: "complete" };
  const sameOpening = entry !== null && (await tx.row(
    "SELECT 1 AS found FROM committed_turns WHERE conversation_id = $1 AND admission_entry_id = $2 AND advancement_key <> $3 LIMIT 1",
    [conversationId, entry, key],
  )) !== null;
  if (!existing) {
    await tx.run(
      `INSERT INTO committed_turns (conversation_id, advancement_key, committed_at, message_count, admission_entry_id, stored_messages)
       VALUES ($1, $2, $3, $4, $5, 0) ON CONFLICT DO NOTHING`,
      [conversationId, key, now, messageCount, entry],
    );
  }
  const isNewTurn = turn.admissionEntryId !== undefined && !sameOpening;
  return { kind: "open", storedMessages: existing?.stored_messages ?? 0, turnTag: isNewTurn ? turnTagOf(turn.admissionEntryId!) : undefined };
}

/** Records how many of a turn's messages are stored (null: all of them, the turn is committed). */
export async function recordTurnProgress(
  tx: PgQueryable, conversationId: ConversationId, advancementKey: string, storedMessages: number | null,
): Promise<void> {
  await tx.run(
    "UPDATE committed_turns SET stored_messages = $1 WHERE conversation_id = $2 AND advancement_key = $3",
    [storedMessages, conversationId, toPgText(advancementKey)],
  );
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
 * legacy identity) is stored already is a replay and changes nothing, except within a new turn of commitTurn
 * (`turnTag`), where a colliding fingerprint is another message, stored under an identity scoped to the turn and its
 * position. Counters on `conversations` move by what was stored.
 */
export async function appendLocked(
  tx: PgQueryable, conversationId: ConversationId, locked: LockedConversation, messages: EncodedMessage[], now: number,
  turnTag?: string, firstIndex = 0,
): Promise<AppendResult> {
  const scopedKey = (message: EncodedMessage, index: number) =>
    turnTag !== undefined && message.identityKey.startsWith("fp:") ? `${message.identityKey}@${turnTag}:${firstIndex + index}` : null;
  const candidates = messages.flatMap((message, index) => [message.identityKey, message.legacyIdentityKey, scopedKey(message, index)])
    .filter((key): key is string => typeof key === "string").map(toPgText);
  const taken = new Set(candidates.length === 0 ? [] : (await tx.rows<{ identity_key: string }>(
    "SELECT identity_key FROM messages WHERE conversation_id = $1 AND identity_key = ANY($2::text[])", [conversationId, candidates],
  )).map((row) => row.identity_key));

  let { nextSeq, nextOrdinal } = locked;
  const planned: PlannedMessage[] = [];
  for (const [index, message] of messages.entries()) {
    const legacy = message.legacyIdentityKey === undefined ? null : toPgText(message.legacyIdentityKey);
    if (legacy !== null && taken.has(legacy)) continue;
    const own = toPgText(message.identityKey);
    const scoped = scopedKey(message, index);
    const identityKey = !taken.has(own) ? own : scoped !== null && !taken.has(toPgText(scoped)) ? toPgText(scoped) : null;
    if (identityKey === null) continue;
    taken.add(identityKey);
    const excluded = (message.flags & MessageFlags.excluded) !== 0;
    planned.push({ message, identityKey, seq: nextSeq++, ordinal: excluded ? null : nextOrdinal++ });
  }
  // Files are written right after the message that references them, as on SQLite (a trigger may look for it).
  for (const segment of segmentsEndingAtFiles(planned)) await insertSegment(tx, conversationId, segment);

  if (planned.length > 0) {
    const messageTokens = planned.reduce((total, entry) => total + entry.message.tokenCount, 0);
    const inContext = planned.filter((entry) => entry.ordinal !== null);
    const contextTokens = inContext.reduce((total, entry) => total + entry.message.tokenCount, 0);
    await tx.run(
      `UPDATE conversations SET next_seq = $1, next_ordinal = $2, message_count = message_count + $3,
         message_tokens = message_tokens + $4, context_tokens = context_tokens + $5,
         context_raw_tokens = context_raw_tokens + $5, context_items = context_items + $6,
         last_ingest_at = $7, updated_at = $7, ended_at = NULL, end_reason = NULL
       WHERE conversation_id = $8`,
      [nextSeq, nextOrdinal, planned.length, messageTokens, contextTokens, inContext.length, now, conversationId],
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

async function insertSegment(tx: PgQueryable, conversationId: ConversationId, segment: PlannedMessage[]): Promise<void> {
  const stored = await tx.rows<{ message_id: number; seq: number }>(
    `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta)
     SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::bigint[], $9::text[])
     ON CONFLICT (conversation_id, identity_key) DO NOTHING
     RETURNING message_id, seq`,
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
    ],
  );
  if (stored.length !== segment.length) throw anotherWriter(conversationId);
  const idOfSeq = new Map(stored.map((row) => [row.seq, row.message_id]));
  const parts = segment.flatMap((entry) => entry.message.parts.map((part, ordinal) => ({ messageId: idOfSeq.get(entry.seq)!, ordinal, part })));
  if (parts.length > 0) {
    await tx.run(
      `INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end, data, meta)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[])`,
      [
        parts.map((row) => row.messageId), parts.map((row) => row.ordinal), parts.map((row) => row.part.kind),
        parts.map((row) => row.part.start), parts.map((row) => row.part.end),
        parts.map((row) => toPgTextOrNull(row.part.data)), parts.map((row) => toPgTextOrNull(row.part.meta)),
      ],
    );
  }
  const items = segment.filter((entry) => entry.ordinal !== null);
  if (items.length > 0) {
    await tx.run(
      `INSERT INTO context_items (conversation_id, ordinal, message_id, token_count, flags)
       SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])`,
      [
        conversationId, items.map((entry) => entry.ordinal), items.map((entry) => idOfSeq.get(entry.seq)!),
        items.map((entry) => entry.message.tokenCount), items.map((entry) => entry.message.itemFlags),
      ],
    );
  }
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
