/**
 * The message writes of PgStore (appendMessages, commitTurn), each chunk one transaction. Several gateways may write
 * one conversation at once: every transaction first locks the conversation's row (SELECT … FOR UPDATE), so writers of
 * one conversation take turns, each sees what the one before committed, and seqs and ordinals stay dense and in
 * commit order. The identity index and the committed turn's primary key stay the last word (ON CONFLICT DO NOTHING).
 * A chunk is two prepared statements whatever its size (the lock with the claim and the stored identities; the
 * messages with parts, context items, counters and progress), between BEGIN and COMMIT: rows go in through unnest over
 * arrays, and round trips, not rows, are what a commit costs.
 */
import { type EncodedMessage, MessageFlags } from "../messages/message-codec.js";
import type { ConversationId, FileId, LargeFileRecord } from "../records.js";
import type { AppendResult, TurnIdentity } from "../store/store.js";
import { turnTagOf } from "../store/turn-chunks.js";
import { toPgText, toPgTextOrNull } from "./pg-database.js";
import { type PgQueryable, preparedStatement } from "./pg-queryable.js";
import { LARGE_FILE_COLUMNS } from "./pg-rows.js";

interface LockedConversation {
  nextSeq: number;
  nextOrdinal: number;
}

function noConversation(conversationId: ConversationId): Error {
  return new Error(`Conversation ${conversationId} does not exist.`);
}

/**
 * The conversation's row locked (SELECT … FOR UPDATE, which returns the row as the last writer left it) and, in the
 * same statement, the row as the statement's snapshot saw it. The other reads of that statement (claims, identities)
 * come from the snapshot, taken before the lock was granted: they are current only if no writer changed the row in
 * between (`fresh`: same row version). Every transaction that stores a message or a claim changes the row, so a
 * statement that finds it not fresh reads again, after the lock.
 */
const LOCKED_ROW = `seen AS MATERIALIZED (
    SELECT xmin::text AS version FROM conversations WHERE conversation_id = $1
  ), locked AS MATERIALIZED (
    SELECT next_seq, next_ordinal, xmin::text AS version FROM conversations WHERE conversation_id = $1 FOR UPDATE
  )`;
const TAKEN = "ARRAY(SELECT identity_key FROM messages WHERE conversation_id = $1 AND identity_key = ANY($2::text[])) AS taken";

const LOCK_AND_TAKEN_SQL = preparedStatement(`WITH ${LOCKED_ROW}
  SELECT locked.next_seq, locked.next_ordinal, locked.version = (SELECT version FROM seen) AS fresh, ${TAKEN} FROM locked`);

/**
 * Locks the conversation's row for the rest of the transaction (throws when there is no such conversation) and reads
 * which of `candidates` (encoded identity keys) it stores: one round trip, two when another writer changed the row
 * between the statement's snapshot and the lock.
 */
export async function lockWithIdentities(
  tx: PgQueryable, conversationId: ConversationId, candidates: string[],
): Promise<{ locked: LockedConversation; taken: Set<string> }> {
  const row = await tx.row<{ next_seq: number; next_ordinal: number; fresh: boolean; taken: string[] }>(LOCK_AND_TAKEN_SQL, [conversationId, candidates]);
  if (!row) throw noConversation(conversationId);
  const taken = row.fresh ? new Set(row.taken) : await takenIdentities(tx, conversationId, candidates);
  return { locked: { nextSeq: row.next_seq, nextOrdinal: row.next_ordinal }, taken };
}

export type TurnClaim =
  | { kind: "complete" }
  | { kind: "open"; storedMessages: number; turnTag: string | undefined; taken: Set<string> };

const CLAIM = `existing AS (
    SELECT stored_messages FROM committed_turns WHERE conversation_id = $1 AND advancement_key = $3
  ), same_opening AS (
    SELECT 1 FROM committed_turns
     WHERE $4::text IS NOT NULL AND conversation_id = $1 AND admission_entry_id = $4 AND advancement_key <> $3 LIMIT 1
  )`;
const CLAIM_COLUMNS = `EXISTS (SELECT 1 FROM existing) AS found, (SELECT stored_messages FROM existing) AS stored_messages,
  EXISTS (SELECT 1 FROM same_opening) AS same_opening, EXISTS (SELECT 1 FROM claimed) AS claimed, ${TAKEN}`;
const INSERT_CLAIM = `INSERT INTO committed_turns (conversation_id, advancement_key, committed_at, message_count, admission_entry_id, stored_messages)`;

/** The claim after the lock (its own statement: it sees every claim committed before the lock). */
const CLAIM_SQL = preparedStatement(`WITH ${CLAIM}, claimed AS (
    ${INSERT_CLAIM} SELECT $1, $3, $5, $6, $4, 0 WHERE NOT EXISTS (SELECT 1 FROM existing) ON CONFLICT DO NOTHING RETURNING 1
  )
  SELECT ${CLAIM_COLUMNS}`);

/** The lock and the claim in one statement; the claim is made only once the lock is held (it selects from it). */
const LOCK_AND_CLAIM_SQL = preparedStatement(`WITH ${LOCKED_ROW}, ${CLAIM}, claimed AS (
    ${INSERT_CLAIM} SELECT $1, $3, $5, $6, $4, 0 FROM locked WHERE NOT EXISTS (SELECT 1 FROM existing) ON CONFLICT DO NOTHING RETURNING 1
  )
  SELECT locked.next_seq, locked.next_ordinal, locked.version = (SELECT version FROM seen) AS fresh, ${CLAIM_COLUMNS} FROM locked`);

interface ClaimRow {
  found: boolean;
  stored_messages: number | null;
  same_opening: boolean;
  claimed: boolean;
  taken: string[];
}

/**
 * Locks the conversation and makes the turn's claim if new, together with which of `candidates` (encoded identity
 * keys) the conversation stores: one round trip, or two when the statement's snapshot was not current once the lock
 * was granted (another writer committed meanwhile, or claimed this turn: the claim is then read again after the
 * lock). `turnTag` scopes colliding fingerprints to the turn when the host named a transcript entry no earlier
 * committed turn was opened by.
 */
export async function lockAndClaimTurn(
  tx: PgQueryable, conversationId: ConversationId, turn: TurnIdentity, messageCount: number, now: number, candidates: string[],
): Promise<{ locked: LockedConversation; claim: TurnClaim }> {
  const params = [conversationId, candidates, toPgText(turn.advancementKey), toPgTextOrNull(turn.admissionEntryId), now, messageCount];
  const row = await tx.row<ClaimRow & { next_seq: number; next_ordinal: number; fresh: boolean }>(LOCK_AND_CLAIM_SQL, params);
  if (!row) throw noConversation(conversationId);
  const locked = { nextSeq: row.next_seq, nextOrdinal: row.next_ordinal };
  const current = row.fresh && (row.found || row.claimed);
  const claim = current ? row : (await tx.row<ClaimRow>(CLAIM_SQL, params))!;
  return { locked, claim: claimOf(claim, turn) };
}

function claimOf(row: ClaimRow, turn: TurnIdentity): TurnClaim {
  if (row.found && row.stored_messages === null) return { kind: "complete" };
  const isNewTurn = turn.admissionEntryId !== undefined && !row.same_opening;
  return {
    kind: "open", storedMessages: row.stored_messages ?? 0, turnTag: isNewTurn ? turnTagOf(turn.admissionEntryId!) : undefined,
    taken: new Set(row.taken),
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
 * Stores `messages` after the lock (lockWithIdentities or lockAndClaimTurn, same transaction), with SQLite's rules: a message whose identity (or
 * legacy identity) is stored already (`taken`, read after the lock) is a replay and changes nothing, except within a
 * new turn of commitTurn (`turnTag`), where a colliding fingerprint is another message, stored under an identity
 * scoped to the turn and its position. Counters on `conversations`, and the turn's progress, move in the same
 * transaction.
 */
export async function appendLocked(
  tx: PgQueryable, conversationId: ConversationId, locked: LockedConversation, messages: EncodedMessage[], now: number,
  options: { taken: Set<string>; turnTag?: string; firstIndex?: number; progress?: TurnProgress; contents?: ReadonlyMap<FileId, Buffer> },
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
  const inContext = planned.filter((entry) => entry.ordinal !== null);
  const counters: Counters = {
    nextSeq, nextOrdinal, stored: planned.length, messageTokens: planned.reduce((total, entry) => total + entry.message.tokenCount, 0),
    contextTokens: inContext.reduce((total, entry) => total + entry.message.tokenCount, 0), contextItems: inContext.length, now,
    progress: options.progress ?? null,
  };
  // Files are written right after the message that references them, as on SQLite (a trigger may look for it); the
  // counters and the turn's progress go with the last segment.
  const segments = segmentsEndingAtFiles(planned);
  for (const [index, segment] of segments.entries()) {
    await insertSegment(tx, conversationId, segment, index === segments.length - 1 ? counters : null, options.contents ?? new Map());
  }
  if (segments.length === 0 && counters.progress) {
    // Nothing stored: the turn's progress, and the conversation's row touched (a new row version, no value changed),
    // so a writer whose snapshot predates this commit reads the claims again (LOCKED_ROW).
    await tx.run(PROGRESS_SQL, [conversationId, toPgText(counters.progress.advancementKey), counters.progress.storedMessages]);
  }
  return { inserted: planned.length, duplicates: messages.length - planned.length };
}

/** What a chunk's write moves on `conversations` and `committed_turns`. */
interface Counters {
  nextSeq: number;
  nextOrdinal: number;
  stored: number;
  messageTokens: number;
  contextTokens: number;
  contextItems: number;
  now: number;
  progress: TurnProgress | null;
}

const PROGRESS_SQL = preparedStatement(`WITH progress AS (
    UPDATE committed_turns SET stored_messages = $3 WHERE conversation_id = $1 AND advancement_key = $2
  )
  UPDATE conversations SET next_seq = next_seq WHERE conversation_id = $1`);

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

/**
 * One statement: the messages, their parts and their context items, joined on seq to the ids the insert returns; with
 * `counters` (the chunk's last segment), the conversation's counters and the turn's progress too.
 */
const INSERT_SEGMENT_SQL = preparedStatement(`WITH stored AS (
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
  ), counters AS (
    UPDATE conversations SET next_seq = $22, next_ordinal = $23, message_count = message_count + $24,
      message_tokens = message_tokens + $25, context_tokens = context_tokens + $26,
      context_raw_tokens = context_raw_tokens + $26, context_items = context_items + $27,
      last_ingest_at = $28, updated_at = $28, ended_at = NULL, end_reason = NULL
    WHERE conversation_id = $1 AND $21::boolean
  ), progress AS (
    UPDATE committed_turns SET stored_messages = $31 WHERE $29::boolean AND conversation_id = $1 AND advancement_key = $30
  )
  SELECT count(*)::bigint AS stored FROM stored`);

async function insertSegment(
  tx: PgQueryable, conversationId: ConversationId, segment: PlannedMessage[], counters: Counters | null, contents: ReadonlyMap<FileId, Buffer>,
): Promise<void> {
  const parts = segment.flatMap((entry) => entry.message.parts.map((part, ordinal) => ({ seq: entry.seq, ordinal, part })));
  const items = segment.filter((entry) => entry.ordinal !== null);
  const progress = counters?.progress ?? null;
  const row = await tx.row<{ stored: number }>(INSERT_SEGMENT_SQL, [
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
    counters !== null, counters?.nextSeq ?? 0, counters?.nextOrdinal ?? 0, counters?.stored ?? 0, counters?.messageTokens ?? 0,
    counters?.contextTokens ?? 0, counters?.contextItems ?? 0, counters?.now ?? 0,
    progress !== null, toPgText(progress?.advancementKey ?? ""), progress?.storedMessages ?? null,
  ]);
  // A message of the segment was stored meanwhile by a writer that did not lock the row: all of this rolls back.
  if (row?.stored !== segment.length) throw anotherWriter(conversationId);
  const files = segment.at(-1)!.message.largeFiles ?? [];
  for (const file of files) await insertLargeFile(tx, conversationId, file, contents.get(file.fileId) ?? null);
}

/**
 * A file row and its content (pg-stored-files.ts; null when it could not be read: its machine uploads it later), in
 * one statement, written with the message that references it. A row or content that exists already (the same content
 * sent again, or a replay) is left as it is: ids derive from the content hash.
 */
const INSERT_FILE_SQL = preparedStatement(`WITH file AS (
    INSERT INTO large_files (${LARGE_FILE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING
  )
  INSERT INTO large_file_content (file_id, content) SELECT $1, $14::bytea WHERE $14::bytea IS NOT NULL ON CONFLICT DO NOTHING`);

async function insertLargeFile(tx: PgQueryable, conversationId: ConversationId, file: LargeFileRecord, content: Buffer | null): Promise<void> {
  await tx.run(INSERT_FILE_SQL, [
    file.fileId, conversationId, file.contentHash, toPgTextOrNull(file.fileName), toPgTextOrNull(file.mimeType), file.byteSize,
    file.tokenCount, file.storagePath, toPgText(file.explorationSummary), file.explorer, file.origin, toPgTextOrNull(file.toolName),
    file.createdAt, content,
  ]);
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
