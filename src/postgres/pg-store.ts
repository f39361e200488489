/**
 * The PostgreSQL backend of the core store contracts (LcmStore: conversations, messages, the context, summary reads,
 * stored large files), ported from sqlite/sqlite-store.ts with the same records, counters and identity rules. Writes
 * of messages are pg-message-writer.ts (one transaction per chunk, the conversation's row locked first); reads are one
 * or two statements on the pool, index-driven and bounded by LIMIT like SQLite's.
 */
import type { EncodedMessage, StoredPart } from "../messages/message-codec.js";
import type {
  BootstrapState,
  CompactionOutcome,
  ContextItemRecord,
  ConversationId,
  ConversationKey,
  ConversationRecord,
  FileId,
  LargeFileRecord,
  MessageId,
  MessageRecord,
  SummaryRecord,
} from "../records.js";
import type { AppendResult, BudgetRecord, LcmStore, OlderContext, TurnIdentity } from "../store/store.js";
import { chunksOf, recordableTokens, turnTagOf } from "../store/turn-chunks.js";
import { fromPgText, type PgDatabase, toPgText, toPgTextOrNull } from "./pg-database.js";
import { appendLocked, identityCandidates, lockAndClaimTurn, lockWithIdentities } from "./pg-message-writer.js";
import { contentsOf, PgStoredFiles } from "./pg-stored-files.js";
import { preparedStatement } from "./pg-queryable.js";
import {
  CONTEXT_ITEM_COLUMNS,
  groupRows,
  LARGE_FILE_COLUMNS,
  MESSAGE_COLUMNS,
  PART_COLUMNS,
  type PgContextItemRow,
  type PgConversationRow,
  type PgLargeFileRow,
  type PgMessageRow,
  type PgPartRow,
  type PgSummaryRow,
  SUMMARY_COLUMNS,
  toContextItem,
  toConversation,
  toLargeFile,
  toMessage,
  toPart,
  toSummary,
} from "./pg-rows.js";

export class PgStore implements LcmStore {
  constructor(readonly database: PgDatabase, private readonly files = new PgStoredFiles(database, null)) {}

  // ── conversations ───────────────────────────────────────────────────────────────────────────────────────

  async getOrCreateConversation(key: ConversationKey, now: number): Promise<ConversationRecord> {
    const existing = await this.findConversation(key);
    if (existing) return existing;
    // Two gateways creating the same session's conversation at once: the partial unique index keeps one live row.
    await this.database.run(
      `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $4) ON CONFLICT (agent_id, session_id) WHERE archived_at IS NULL DO NOTHING`,
      [toPgText(key.agentId), toPgText(key.sessionId), toPgTextOrNull(key.sessionKey), now],
    );
    const created = await this.findConversation(key);
    if (!created) throw new Error(`The conversation of agent ${key.agentId}, session ${key.sessionId} was archived while it was being created; retry.`);
    return created;
  }

  async findConversation(key: Pick<ConversationKey, "agentId" | "sessionId">): Promise<ConversationRecord | null> {
    const row = await this.database.row<PgConversationRow>(FIND_CONVERSATION_SQL, [toPgText(key.agentId), toPgText(key.sessionId)]);
    return row ? toConversation(row) : null;
  }

  async getConversation(conversationId: ConversationId): Promise<ConversationRecord | null> {
    const row = await this.database.row<PgConversationRow>("SELECT * FROM conversations WHERE conversation_id = $1", [conversationId]);
    return row ? toConversation(row) : null;
  }

  async listConversations(filter: { agentId?: string; limit?: number } = {}): Promise<ConversationRecord[]> {
    const limit = filter.limit ?? 1_000;
    const rows = filter.agentId === undefined
      ? await this.database.rows<PgConversationRow>("SELECT * FROM conversations ORDER BY updated_at DESC, conversation_id DESC LIMIT $1", [limit])
      : await this.database.rows<PgConversationRow>(
          "SELECT * FROM conversations WHERE agent_id = $1 ORDER BY updated_at DESC, conversation_id DESC LIMIT $2",
          [toPgText(filter.agentId), limit],
        );
    return rows.map(toConversation);
  }

  async setBootstrapState(conversationId: ConversationId, state: BootstrapState): Promise<void> {
    await this.database.run("UPDATE conversations SET bootstrap_state = $1 WHERE conversation_id = $2", [JSON.stringify(state), conversationId]);
  }

  async setLastCompaction(conversationId: ConversationId, outcome: CompactionOutcome): Promise<void> {
    await this.database.run("UPDATE conversations SET last_compaction = $1 WHERE conversation_id = $2", [JSON.stringify(outcome), conversationId]);
  }

  /** One statement: fields left undefined keep their value, and a write that would change nothing touches no row. */
  async recordBudget(conversationId: ConversationId, budget: BudgetRecord): Promise<void> {
    await this.database.run(
      `UPDATE conversations SET last_token_budget = coalesce($2, last_token_budget), last_window_tokens = coalesce($3, last_window_tokens),
         last_reserve_tokens = coalesce($4, last_reserve_tokens), last_assembly = coalesce($5, last_assembly)
       WHERE conversation_id = $1 AND (
         coalesce($2, last_token_budget) IS DISTINCT FROM last_token_budget OR coalesce($3, last_window_tokens) IS DISTINCT FROM last_window_tokens OR
         coalesce($4, last_reserve_tokens) IS DISTINCT FROM last_reserve_tokens OR coalesce($5, last_assembly) IS DISTINCT FROM last_assembly)`,
      [
        conversationId, recordableTokens(budget.tokenBudget) ?? null, recordableTokens(budget.windowTokens) ?? null,
        recordableTokens(budget.reserveTokens) ?? null, budget.assembly ? JSON.stringify(budget.assembly) : null,
      ],
    );
  }

  // ── messages ────────────────────────────────────────────────────────────────────────────────────────────

  /** In chunks (store/turn-chunks.ts), each its own transaction. */
  async appendMessages(conversationId: ConversationId, messages: EncodedMessage[], now: number): Promise<AppendResult> {
    const total: AppendResult = { inserted: 0, duplicates: 0 };
    const contents = await contentsOf(messages.flatMap((message) => message.largeFiles ?? []));
    for (const chunk of chunksOf(messages)) {
      const result = await this.database.transaction(async (tx) => {
        const { locked, taken } = await lockWithIdentities(tx, conversationId, identityCandidates(chunk, undefined, 0));
        return appendLocked(tx, conversationId, locked, chunk, now, { taken, contents });
      });
      total.inserted += result.inserted;
      total.duplicates += result.duplicates;
    }
    return total;
  }

  /**
   * Each chunk is one transaction that locks the conversation, claims the advancement key and stores its messages. A
   * turn of several chunks records how many of its messages are stored; a retry with the same key (from this gateway
   * or another) resumes there, and the turn counts as committed (a replay answers "duplicate") once the last is in.
   */
  async commitTurn(
    conversationId: ConversationId, turn: TurnIdentity, messages: EncodedMessage[], now: number,
  ): Promise<{ status: "committed" | "duplicate" } & AppendResult> {
    const chunks = chunksOf(messages);
    const total: AppendResult = { inserted: 0, duplicates: 0 };
    // Stored files' content goes into the database with their rows: read before the transactions, never inside one.
    const contents = await contentsOf(messages.flatMap((message) => message.largeFiles ?? []));
    let offset = 0;
    for (const [index, chunk] of chunks.entries()) {
      const isLast = index === chunks.length - 1;
      const result = await this.database.transaction(async (tx) => {
        const { locked, claim } = await lockAndClaimTurn(tx, conversationId, turn, messages.length, now, identityCandidates(chunk, tagOf(turn), offset));
        if (claim.kind === "complete") return null;
        // A resumed turn skips what it stored before (its count only grows, in the same transaction as the rows).
        const from = Math.min(chunk.length, Math.max(0, claim.storedMessages - offset));
        const storedMessages = isLast ? null : Math.max(claim.storedMessages, offset + chunk.length);
        return appendLocked(tx, conversationId, locked, chunk.slice(from), now, {
          taken: claim.taken, turnTag: claim.turnTag, firstIndex: offset + from, progress: { advancementKey: turn.advancementKey, storedMessages }, contents,
        });
      });
      if (result === null) return { status: "duplicate", inserted: total.inserted, duplicates: messages.length - total.inserted };
      total.inserted += result.inserted;
      total.duplicates += result.duplicates;
      offset += chunk.length;
    }
    if (chunks.length === 0) {
      const claimed = await this.database.transaction(async (tx) => {
        const { locked, claim } = await lockAndClaimTurn(tx, conversationId, turn, 0, now, []);
        if (claim.kind === "open") {
          await appendLocked(tx, conversationId, locked, [], now, { taken: claim.taken, progress: { advancementKey: turn.advancementKey, storedMessages: null } });
        }
        return claim;
      });
      if (claimed.kind === "complete") return { status: "duplicate", inserted: 0, duplicates: 0 };
    }
    return { status: "committed", ...total };
  }

  async hasCommittedTurns(conversationId: ConversationId): Promise<boolean> {
    return (await this.database.row("SELECT 1 AS found FROM committed_turns WHERE conversation_id = $1 LIMIT 1", [conversationId])) !== null;
  }

  async findExistingIdentities(conversationId: ConversationId, identityKeys: string[]): Promise<Set<string>> {
    if (identityKeys.length === 0) return new Set();
    const rows = await this.database.rows<{ identity_key: string }>(
      "SELECT identity_key FROM messages WHERE conversation_id = $1 AND identity_key = ANY($2::text[])",
      [conversationId, identityKeys.map(toPgText)],
    );
    return new Set(rows.map((row) => fromPgText(row.identity_key)));
  }

  /**
   * The messages and their parts, read at once on two connections. Each list carries its ids' bounds beside `= ANY`
   * (a no-op as a filter): without them the planner prices a thousand-id list as a thousand index descents and reads
   * the whole of message_parts instead (14-44 ms at 100k messages for an assemble at 128k, 1.5 ms with the bounds).
   */
  async getMessages(messageIds: MessageId[]): Promise<MessageRecord[]> {
    const ids = [...new Set(messageIds.filter(Number.isSafeInteger))];
    if (ids.length === 0) return [];
    const [lowest, highest] = boundsOf(ids);
    const [rows, parts] = await Promise.all([
      this.database.rows<PgMessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE message_id = ANY($1::bigint[]) AND message_id BETWEEN $2 AND $3`, [ids, lowest, highest],
      ),
      this.partsFor(ids),
    ]);
    const byId = new Map(rows.map((row) => [row.message_id, toMessage(row, parts.get(row.message_id) ?? [])]));
    return messageIds.flatMap((id) => byId.get(id) ?? []);
  }

  async getMessagesBySeq(conversationId: ConversationId, fromSeq: number, toSeq: number, limit: number): Promise<MessageRecord[]> {
    const rows = await this.database.rows<PgMessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq LIMIT $4`,
      [conversationId, fromSeq, toSeq, limit],
    );
    const parts = await this.partsFor(rows.map((row) => row.message_id));
    return rows.map((row) => toMessage(row, parts.get(row.message_id) ?? []));
  }

  private async partsFor(messageIds: number[]): Promise<Map<number, StoredPart[]>> {
    if (messageIds.length === 0) return new Map();
    const [lowest, highest] = boundsOf(messageIds);
    const rows = await this.database.rows<PgPartRow>(
      `SELECT ${PART_COLUMNS} FROM message_parts WHERE message_id = ANY($1::bigint[]) AND message_id BETWEEN $2 AND $3 ORDER BY message_id, ordinal`,
      [messageIds, lowest, highest],
    );
    return groupRows(rows, (row) => row.message_id, toPart);
  }

  // ── context items ───────────────────────────────────────────────────────────────────────────────────────

  async listContextNewestFirst(conversationId: ConversationId, beforeOrdinal: number | null, limit: number): Promise<ContextItemRecord[]> {
    const rows = await this.database.rows<PgContextItemRow>(
      `SELECT ${CONTEXT_ITEM_COLUMNS} FROM context_items WHERE conversation_id = $1 AND ordinal < $2 ORDER BY ordinal DESC LIMIT $3`,
      [conversationId, beforeOrdinal ?? Number.MAX_SAFE_INTEGER, limit],
    );
    return rows.map(toContextItem);
  }

  async listContextOldestFirst(conversationId: ConversationId, afterOrdinal: number | null, limit: number): Promise<ContextItemRecord[]> {
    const rows = await this.database.rows<PgContextItemRow>(
      `SELECT ${CONTEXT_ITEM_COLUMNS} FROM context_items WHERE conversation_id = $1 AND ordinal > $2 ORDER BY ordinal ASC LIMIT $3`,
      [conversationId, afterOrdinal ?? Number.MIN_SAFE_INTEGER, limit],
    );
    return rows.map(toContextItem);
  }

  /** One statement: the newest item's time, and the newest summary among the `within` newest items with its parents. */
  async olderContext(conversationId: ConversationId, ordinal: number, within: number): Promise<OlderContext> {
    const row = await this.database.row<{ newest_at: number | null } & Partial<PgSummaryWithParentsRow>>(
      OLDER_CONTEXT_SQL, [conversationId, ordinal, Math.max(0, Math.floor(within))],
    );
    const newestSummary = row?.id == null ? null : toSummary(row as PgSummaryWithParentsRow, row.parent_ids ?? []);
    return { newestAt: row?.newest_at ?? 0, newestSummary };
  }

  // ── large files (rows are written with their message, pg-message-writer.ts) ─────────────────────────────

  async getLargeFile(fileId: FileId): Promise<LargeFileRecord | null> {
    const row = await this.database.row<PgLargeFileRow>(`SELECT ${LARGE_FILE_COLUMNS} FROM large_files WHERE file_id = $1`, [toPgText(fileId)]);
    return row ? toLargeFile(row) : null;
  }

  async findLargeFileByHash(conversationId: ConversationId, contentHash: string): Promise<LargeFileRecord | null> {
    const row = await this.database.row<PgLargeFileRow>(
      `SELECT ${LARGE_FILE_COLUMNS} FROM large_files WHERE conversation_id = $1 AND content_hash = $2`, [conversationId, toPgText(contentHash)],
    );
    return row ? toLargeFile(row) : null;
  }

  async listLargeFiles(conversationId: ConversationId, limit = 1_000): Promise<LargeFileRecord[]> {
    const rows = await this.database.rows<PgLargeFileRow>(
      `SELECT ${LARGE_FILE_COLUMNS} FROM large_files WHERE conversation_id = $1 ORDER BY created_at, file_id LIMIT $2`, [conversationId, limit],
    );
    return rows.map(toLargeFile);
  }

  async readablePath(file: LargeFileRecord): Promise<string> {
    return (await this.files.readablePath(file)) ?? file.storagePath;
  }

  // ── summaries (reads) ───────────────────────────────────────────────────────────────────────────────────

  /** One statement: the summaries with their parents' ids (bounded beside `= ANY` as getMessages' lists are). */
  async getSummariesByRowIds(rowIds: number[]): Promise<SummaryRecord[]> {
    const ids = [...new Set(rowIds.filter(Number.isSafeInteger))];
    if (ids.length === 0) return [];
    const [lowest, highest] = boundsOf(ids);
    const rows = await this.database.rows<PgSummaryWithParentsRow>(
      `SELECT ${SUMMARY_COLUMNS}, ${PARENT_IDS} FROM summaries s WHERE s.id = ANY($1::bigint[]) AND s.id BETWEEN $2 AND $3`, [ids, lowest, highest],
    );
    const byId = new Map(rows.map((row) => [row.id, toSummary(row, row.parent_ids)]));
    return rowIds.flatMap((id) => byId.get(id) ?? []);
  }

  async getSummary(summaryId: string): Promise<SummaryRecord | null> {
    const row = await this.database.row<PgSummaryWithParentsRow>(SUMMARY_BY_ID_SQL, [toPgText(summaryId)]);
    return row ? toSummary(row, row.parent_ids) : null;
  }
}

/** A summary's parents' ids in their order, as a column of the summary's row (`s`). */
const PARENT_IDS = `ARRAY(SELECT parent.summary_id FROM summary_parents p JOIN summaries parent ON parent.id = p.parent_summary_id
  WHERE p.summary_id = s.id ORDER BY p.ordinal) AS parent_ids`;

/**
 * A conversation by its key: named, and PostgreSQL's own choice keeps one plan for it after five runs on a
 * connection (the generic plan costs what a custom one does). Every hook runs it: not "generic", whose sibling pool
 * would open a second connection on a cold open's first assemble.
 */
const FIND_CONVERSATION_SQL = preparedStatement("SELECT * FROM conversations WHERE agent_id = $1 AND session_id = $2 AND archived_at IS NULL");

/**
 * ContextStore.olderContext: the items at or before $2 (at most $3, newest first), the newest one's time, and the
 * newest summary among them with its parents' ids; one row, its summary columns null when there is none.
 */
const OLDER_CONTEXT_SQL = preparedStatement(
  `SELECT
     (SELECT coalesce(m.created_at, x.latest_at) FROM (
        SELECT message_id, summary_id FROM context_items WHERE conversation_id = $1 AND ordinal <= $2 ORDER BY ordinal DESC LIMIT 1) newest
      LEFT JOIN messages m ON m.message_id = newest.message_id LEFT JOIN summaries x ON x.id = newest.summary_id) AS newest_at,
     ${SUMMARY_COLUMNS}, ${PARENT_IDS}
   FROM (SELECT 1) one
   LEFT JOIN summaries s ON s.id = (SELECT summary_id FROM (
     SELECT ordinal, summary_id FROM context_items WHERE conversation_id = $1 AND ordinal <= $2 ORDER BY ordinal DESC LIMIT $3) recent
     WHERE summary_id IS NOT NULL ORDER BY ordinal DESC LIMIT 1)`,
);

/** A summary by its id (lcm_describe, lcm_expand): one plan for every id. */
const SUMMARY_BY_ID_SQL = preparedStatement(`SELECT ${SUMMARY_COLUMNS}, ${PARENT_IDS} FROM summaries s WHERE s.summary_id = $1`, { plan: "generic" });

type PgSummaryWithParentsRow = PgSummaryRow & { parent_ids: string[] };

/** The smallest and largest of a non-empty list of ids. */
function boundsOf(ids: readonly number[]): [number, number] {
  let lowest = ids[0]!;
  let highest = ids[0]!;
  for (const id of ids) {
    if (id < lowest) lowest = id;
    if (id > highest) highest = id;
  }
  return [lowest, highest];
}

/** The tag a new turn would scope colliding fingerprints with (whether it does is the claim's answer). */
function tagOf(turn: TurnIdentity): string | undefined {
  return turn.admissionEntryId === undefined ? undefined : turnTagOf(turn.admissionEntryId);
}
