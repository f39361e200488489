/**
 * The embedded SQLite backend of the store contracts. Statements are prepared once per connection (Database
 * caches them by SQL text); every multi-table write is one IMMEDIATE transaction with a synchronous body.
 * Hot reads are index-driven and bounded by LIMIT, so their cost follows what is read, not the history size.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Database } from "./database.js";
import type { EncodedMessage, StoredPart } from "../messages/message-codec.js";
import { MessageFlags } from "../messages/message-codec.js";
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
import type { ImportedHistoryStore, ImportedMessageToMatch } from "../store/imported-history-store.js";
import type { AppendResult, BudgetRecord, LcmStore, OlderContext, TurnIdentity } from "../store/store.js";
import { chunksOf, recordableTokens, turnTagOf } from "../store/turn-chunks.js";
import { SqliteImportedHistoryStore } from "./sqlite-imported-history-store.js";
import { SqliteLargeFileStore, insertLargeFiles } from "./sqlite-large-file-store.js";
import {
  CONTEXT_ITEM_COLUMNS,
  type ContextItemTuple,
  type ConversationRow,
  groupBy,
  MESSAGE_COLUMNS,
  type MessageTuple,
  PART_COLUMNS,
  type PartTuple,
  type SummaryRow,
  toContextItem,
  toConversation,
  toMessage,
  toPart,
  toSummary,
} from "./rows.js";

const SUMMARY_COLUMNS =
  "id, summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at, " +
  "descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at";

export class SqliteStore implements LcmStore, ImportedHistoryStore {
  private readonly importedHistory: SqliteImportedHistoryStore;

  constructor(readonly db: Database) {
    this.importedHistory = new SqliteImportedHistoryStore(db);
  }

  // ── conversations ───────────────────────────────────────────────────────────────────────────────────────

  async getOrCreateConversation(key: ConversationKey, now: number): Promise<ConversationRecord> {
    const existing = this.conversationOf(key);
    if (existing) return existing;
    return this.db.write(() => {
      this.db.run(
        `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_id, session_id) WHERE archived_at IS NULL DO NOTHING`,
        key.agentId, key.sessionId, key.sessionKey ?? null, now, now,
      );
      return this.conversationOf(key)!;
    });
  }

  async findConversation(key: Pick<ConversationKey, "agentId" | "sessionId">): Promise<ConversationRecord | null> {
    return this.conversationOf(key);
  }

  async getConversation(conversationId: ConversationId): Promise<ConversationRecord | null> {
    const row = this.db.get<ConversationRow>("SELECT * FROM conversations WHERE conversation_id = ?", conversationId);
    return row ? toConversation(row) : null;
  }

  async listConversations(filter: { agentId?: string; limit?: number } = {}): Promise<ConversationRecord[]> {
    const limit = filter.limit ?? 1_000;
    const rows = filter.agentId === undefined
      ? this.db.all<ConversationRow>("SELECT * FROM conversations ORDER BY updated_at DESC LIMIT ?", limit)
      : this.db.all<ConversationRow>(
          "SELECT * FROM conversations WHERE agent_id = ? ORDER BY updated_at DESC LIMIT ?", filter.agentId, limit,
        );
    return rows.map(toConversation);
  }

  async setBootstrapState(conversationId: ConversationId, state: BootstrapState): Promise<void> {
    await this.db.write(() =>
      this.db.run("UPDATE conversations SET bootstrap_state = ? WHERE conversation_id = ?", JSON.stringify(state), conversationId),
    );
  }

  // ── imported history (bootstrap reconciles the host transcript with it once) ───────────────────────────

  async importedMessagesToMatch(conversationId: ConversationId, options: { includeMatched: boolean }): Promise<ImportedMessageToMatch[] | null> {
    return this.importedHistory.importedMessagesToMatch(conversationId, options);
  }

  async saveTranscriptMatches(
    conversationId: ConversationId, matches: { refs: readonly string[]; restart: boolean; finished: boolean; bootstrapState: BootstrapState },
  ): Promise<void> {
    await this.importedHistory.saveTranscriptMatches(conversationId, matches);
  }

  async setLastCompaction(conversationId: ConversationId, outcome: CompactionOutcome): Promise<void> {
    await this.db.write(() =>
      this.db.run("UPDATE conversations SET last_compaction = ? WHERE conversation_id = ?", JSON.stringify(outcome), conversationId),
    );
  }

  async recordBudget(conversationId: ConversationId, budget: BudgetRecord): Promise<void> {
    const current = this.db.get<{
      last_token_budget: number | null; last_window_tokens: number | null; last_reserve_tokens: number | null; last_assembly: string | null;
    }>(
      "SELECT last_token_budget, last_window_tokens, last_reserve_tokens, last_assembly FROM conversations WHERE conversation_id = ?",
      conversationId,
    );
    if (!current) return;
    const next = {
      tokenBudget: recordableTokens(budget.tokenBudget) ?? current.last_token_budget,
      windowTokens: recordableTokens(budget.windowTokens) ?? current.last_window_tokens,
      reserveTokens: recordableTokens(budget.reserveTokens) ?? current.last_reserve_tokens,
      assembly: budget.assembly ? JSON.stringify(budget.assembly) : current.last_assembly,
    };
    if (
      next.tokenBudget === current.last_token_budget && next.windowTokens === current.last_window_tokens &&
      next.reserveTokens === current.last_reserve_tokens && next.assembly === current.last_assembly
    ) return;
    await this.db.write(() =>
      this.db.run(
        `UPDATE conversations SET last_token_budget = ?, last_window_tokens = ?, last_reserve_tokens = ?, last_assembly = ?
          WHERE conversation_id = ?`,
        next.tokenBudget, next.windowTokens, next.reserveTokens, next.assembly, conversationId,
      ),
    );
  }

  private conversationOf(key: Pick<ConversationKey, "agentId" | "sessionId">): ConversationRecord | null {
    const row = this.db.get<ConversationRow>(
      "SELECT * FROM conversations WHERE agent_id = ? AND session_id = ? AND archived_at IS NULL", key.agentId, key.sessionId,
    );
    return row ? toConversation(row) : null;
  }

  // ── messages ────────────────────────────────────────────────────────────────────────────────────────────

  /** In chunks of CHUNK_MESSAGES (CHUNK_CHARS), each its own transaction, the event loop running between them. */
  async appendMessages(conversationId: ConversationId, messages: EncodedMessage[], now: number): Promise<AppendResult> {
    const total: AppendResult = { inserted: 0, duplicates: 0 };
    for (const [index, chunk] of chunksOf(messages).entries()) {
      if (index > 0) await yieldToEventLoop();
      const result = await this.db.write(() => this.appendInTransaction(conversationId, chunk, now));
      total.inserted += result.inserted;
      total.duplicates += result.duplicates;
    }
    return total;
  }

  /**
   * One transaction claims the advancement key and stores the turn. A turn too large for one transaction (a
   * bootstrap-sized commit) is stored in chunks: the claim records how many of its messages are stored, a retry
   * with the same key resumes there, and the turn counts as committed (a replay answers "duplicate") only once the
   * last chunk is in.
   */
  async commitTurn(
    conversationId: ConversationId,
    turn: TurnIdentity,
    messages: EncodedMessage[],
    now: number,
  ): Promise<{ status: "committed" | "duplicate" } & AppendResult> {
    const chunks = chunksOf(messages);
    const total: AppendResult = { inserted: 0, duplicates: 0 };
    let offset = 0;
    for (const [index, chunk] of chunks.entries()) {
      if (index > 0) await yieldToEventLoop();
      const isLast = index === chunks.length - 1;
      const result = await this.db.write(() => {
        const claim = this.claimTurn(conversationId, turn, messages.length, now);
        if (claim.kind === "complete") return null;
        // A resumed turn skips what it stored before (its count only grows, in the same transaction as the rows).
        const from = Math.min(chunk.length, Math.max(0, claim.storedMessages - offset));
        const appended = this.appendInTransaction(conversationId, chunk.slice(from), now, claim.turnTag, offset + from);
        this.db.run(
          "UPDATE committed_turns SET stored_messages = ? WHERE conversation_id = ? AND advancement_key = ?",
          isLast ? null : Math.max(claim.storedMessages, offset + chunk.length), conversationId, turn.advancementKey,
        );
        return appended;
      });
      if (result === null) return { status: "duplicate", inserted: total.inserted, duplicates: messages.length - total.inserted };
      total.inserted += result.inserted;
      total.duplicates += result.duplicates;
      offset += chunk.length;
    }
    if (chunks.length === 0) {
      const claimed = await this.db.write(() => this.claimTurn(conversationId, turn, 0, now));
      if (claimed.kind === "complete") return { status: "duplicate", inserted: 0, duplicates: 0 };
      await this.db.write(() => this.db.run(
        "UPDATE committed_turns SET stored_messages = NULL WHERE conversation_id = ? AND advancement_key = ?",
        conversationId, turn.advancementKey,
      ));
    }
    return { status: "committed", ...total };
  }

  /**
   * The turn's claim, made if new (inside the caller's transaction). `turnTag` scopes colliding fingerprints to
   * the turn when the host named a transcript entry no earlier committed turn was opened by.
   */
  private claimTurn(
    conversationId: ConversationId, turn: TurnIdentity, messageCount: number, now: number,
  ): { kind: "complete" } | { kind: "open"; storedMessages: number; turnTag: string | undefined } {
    const existing = this.db.get<{ stored_messages: number | null }>(
      "SELECT stored_messages FROM committed_turns WHERE conversation_id = ? AND advancement_key = ?",
      conversationId, turn.advancementKey,
    );
    if (existing && existing.stored_messages === null) return { kind: "complete" };
    const sameOpening = turn.admissionEntryId !== undefined && this.db.get(
      `SELECT 1 AS found FROM committed_turns
       WHERE conversation_id = ? AND admission_entry_id = ? AND advancement_key <> ?`,
      conversationId, turn.admissionEntryId, turn.advancementKey,
    );
    if (!existing) {
      this.db.run(
        `INSERT INTO committed_turns (conversation_id, advancement_key, committed_at, message_count, admission_entry_id, stored_messages)
         VALUES (?, ?, ?, ?, ?, 0)`,
        conversationId, turn.advancementKey, now, messageCount, turn.admissionEntryId ?? null,
      );
    }
    const isNewTurn = turn.admissionEntryId !== undefined && !sameOpening;
    return { kind: "open", storedMessages: existing?.stored_messages ?? 0, turnTag: isNewTurn ? turnTagOf(turn.admissionEntryId!) : undefined };
  }

  /**
   * The body shared by appendMessages and commitTurn; must run inside a write transaction. A message whose
   * identity is already stored is a replay and changes nothing, except within a new turn of commitTurn (`turnTag`:
   * a turn opened by a transcript entry no committed turn had): a new turn brings new messages, so a fingerprint
   * that collides there (the same text at the same timestamp as an earlier message) is another message, stored
   * under an identity scoped to the turn and its position in it.
   */
  private appendInTransaction(
    conversationId: ConversationId, messages: EncodedMessage[], now: number, turnTag?: string, firstIndex = 0,
  ): AppendResult {
    const conversation = this.db.get<ConversationRow>(
      "SELECT * FROM conversations WHERE conversation_id = ?", conversationId,
    );
    if (!conversation) throw new Error(`Conversation ${conversationId} does not exist.`);
    let { next_seq: nextSeq, next_ordinal: nextOrdinal } = conversation;
    let inserted = 0;
    let duplicates = 0;
    let messageTokens = 0;
    let contextTokens = 0;
    let contextItems = 0;
    const insert = (message: EncodedMessage, identityKey: string) => this.db.run(
      `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (conversation_id, identity_key) DO NOTHING`,
      conversationId, nextSeq, message.role, message.content, message.tokenCount, message.createdAt,
      identityKey, message.flags, message.meta,
    );
    for (const [index, message] of messages.entries()) {
      // A row stored by an older version under the message's legacy identity is this message.
      if (message.legacyIdentityKey !== undefined && this.db.get(
        "SELECT 1 AS found FROM messages WHERE conversation_id = ? AND identity_key = ?", conversationId, message.legacyIdentityKey,
      )) {
        duplicates++;
        continue;
      }
      // The UNIQUE identity index decides: a replayed message changes nothing (no separate probe per message).
      let { changes, lastInsertRowid: messageId } = insert(message, message.identityKey);
      if (changes === 0 && turnTag !== undefined && message.identityKey.startsWith("fp:")) {
        ({ changes, lastInsertRowid: messageId } = insert(message, `${message.identityKey}@${turnTag}:${firstIndex + index}`));
      }
      if (changes === 0) {
        duplicates++;
        continue;
      }
      nextSeq++;
      // Not indexed here: SqliteSearchIndex adds messages to messages_fts in batches (schema version 2).
      if (message.largeFiles?.length) insertLargeFiles(this.db, conversationId, message.largeFiles);
      message.parts.forEach((part, ordinal) => {
        this.db.run(
          "INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end, data, meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
          messageId, ordinal, part.kind, part.start, part.end, part.data, part.meta,
        );
      });
      if (!(message.flags & MessageFlags.excluded)) {
        this.db.run(
          "INSERT INTO context_items (conversation_id, ordinal, message_id, token_count, flags) VALUES (?, ?, ?, ?, ?)",
          conversationId, nextOrdinal++, messageId, message.tokenCount, message.itemFlags,
        );
        contextTokens += message.tokenCount;
        contextItems++;
      }
      messageTokens += message.tokenCount;
      inserted++;
    }
    if (inserted > 0) {
      this.db.run(
        `UPDATE conversations SET next_seq = ?, next_ordinal = ?, message_count = message_count + ?,
           message_tokens = message_tokens + ?, context_tokens = context_tokens + ?,
           context_raw_tokens = context_raw_tokens + ?, context_items = context_items + ?,
           last_ingest_at = ?, updated_at = ?, ended_at = NULL, end_reason = NULL
         WHERE conversation_id = ?`,
        nextSeq, nextOrdinal, inserted, messageTokens, contextTokens, contextTokens, contextItems, now, now, conversationId,
      );
    }
    return { inserted, duplicates };
  }

  async hasCommittedTurns(conversationId: ConversationId): Promise<boolean> {
    return this.db.get("SELECT 1 AS found FROM committed_turns WHERE conversation_id = ? LIMIT 1", conversationId) !== undefined;
  }

  async findExistingIdentities(conversationId: ConversationId, identityKeys: string[]): Promise<Set<string>> {
    if (identityKeys.length === 0) return new Set();
    const rows = this.db.all<{ identity_key: string }>(
      `SELECT identity_key FROM messages
       WHERE conversation_id = ? AND identity_key IN (SELECT value FROM json_each(?))`,
      conversationId, JSON.stringify(identityKeys),
    );
    return new Set(rows.map((row) => row.identity_key));
  }

  async getMessages(messageIds: MessageId[]): Promise<MessageRecord[]> {
    if (messageIds.length === 0) return [];
    const ids = JSON.stringify(messageIds);
    const rows = this.db.tuples<MessageTuple>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE message_id IN (SELECT value FROM json_each(?))`, ids,
    );
    const parts = this.partsFor(ids);
    const byId = new Map(rows.map((row) => [row[0], toMessage(row, parts.get(row[0]) ?? [])]));
    return messageIds.flatMap((id) => byId.get(id) ?? []);
  }

  async getMessagesBySeq(conversationId: ConversationId, fromSeq: number, toSeq: number, limit: number): Promise<MessageRecord[]> {
    const rows = this.db.tuples<MessageTuple>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? AND seq BETWEEN ? AND ? ORDER BY seq LIMIT ?`,
      conversationId, fromSeq, toSeq, limit,
    );
    const parts = this.partsFor(JSON.stringify(rows.map((row) => row[0])));
    return rows.map((row) => toMessage(row, parts.get(row[0]) ?? []));
  }

  private partsFor(messageIdsJson: string): Map<number, StoredPart[]> {
    const rows = this.db.tuples<PartTuple>(
      `SELECT ${PART_COLUMNS} FROM message_parts WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, ordinal`,
      messageIdsJson,
    );
    return groupBy(rows, toPart);
  }

  // ── context items ───────────────────────────────────────────────────────────────────────────────────────

  async listContextNewestFirst(conversationId: ConversationId, beforeOrdinal: number | null, limit: number): Promise<ContextItemRecord[]> {
    return this.db
      .tuples<ContextItemTuple>(
        `SELECT ${CONTEXT_ITEM_COLUMNS} FROM context_items WHERE conversation_id = ? AND ordinal < ? ORDER BY ordinal DESC LIMIT ?`,
        conversationId, beforeOrdinal ?? Number.MAX_SAFE_INTEGER, limit,
      )
      .map(toContextItem);
  }

  async listContextOldestFirst(conversationId: ConversationId, afterOrdinal: number | null, limit: number): Promise<ContextItemRecord[]> {
    return this.db
      .tuples<ContextItemTuple>(
        `SELECT ${CONTEXT_ITEM_COLUMNS} FROM context_items WHERE conversation_id = ? AND ordinal > ? ORDER BY ordinal ASC LIMIT ?`,
        conversationId, afterOrdinal ?? Number.MIN_SAFE_INTEGER, limit,
      )
      .map(toContextItem);
  }


  async olderContext(conversationId: ConversationId, ordinal: number, within: number): Promise<OlderContext> {
    const newest = this.db.get<{ at: number | null }>(
      `SELECT coalesce(m.created_at, s.latest_at) AS at FROM context_items c
       LEFT JOIN messages m ON m.message_id = c.message_id LEFT JOIN summaries s ON s.id = c.summary_id
       WHERE c.conversation_id = ? AND c.ordinal <= ? ORDER BY c.ordinal DESC LIMIT 1`,
      conversationId, ordinal,
    );
    const found = this.db.get<{ summary_id: number }>(
      `SELECT summary_id FROM (SELECT ordinal, summary_id FROM context_items WHERE conversation_id = ? AND ordinal <= ? ORDER BY ordinal DESC LIMIT ?)
       WHERE summary_id IS NOT NULL ORDER BY ordinal DESC LIMIT 1`,
      conversationId, ordinal, Math.max(0, Math.floor(within)),
    );
    const newestSummary = found ? (await this.getSummariesByRowIds([found.summary_id]))[0] ?? null : null;
    return { newestAt: newest?.at ?? 0, newestSummary };
  }

  // ── large files (rows are written with their message in appendInTransaction) ─────────────────────────

  private largeFileStore: SqliteLargeFileStore | undefined;
  private get largeFiles(): SqliteLargeFileStore {
    return (this.largeFileStore ??= new SqliteLargeFileStore(this.db));
  }

  getLargeFile(fileId: FileId): Promise<LargeFileRecord | null> {
    return this.largeFiles.getLargeFile(fileId);
  }

  findLargeFileByHash(conversationId: ConversationId, contentHash: string): Promise<LargeFileRecord | null> {
    return this.largeFiles.findLargeFileByHash(conversationId, contentHash);
  }

  listLargeFiles(conversationId: ConversationId, limit?: number): Promise<LargeFileRecord[]> {
    return this.largeFiles.listLargeFiles(conversationId, limit);
  }

  readablePath(file: LargeFileRecord): Promise<string> {
    return this.largeFiles.readablePath(file);
  }

  // ── summaries (reads) ───────────────────────────────────────────────────────────────────────────────────

  async getSummariesByRowIds(rowIds: number[]): Promise<SummaryRecord[]> {
    if (rowIds.length === 0) return [];
    const ids = JSON.stringify(rowIds);
    const rows = this.db.rows<SummaryRow>(
      `SELECT ${SUMMARY_COLUMNS} FROM summaries WHERE id IN (SELECT value FROM json_each(?))`, ids,
    );
    const parents = this.parentsFor(ids);
    const byId = new Map(rows.map((row) => [row.id, toSummary(row, parents.get(row.id) ?? [])]));
    return rowIds.flatMap((id) => byId.get(id) ?? []);
  }

  async getSummary(summaryId: string): Promise<SummaryRecord | null> {
    const row = this.db.get<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM summaries WHERE summary_id = ?`, summaryId);
    if (!row) return null;
    return toSummary(row, this.parentsFor(JSON.stringify([row.id])).get(row.id) ?? []);
  }

  private parentsFor(summaryRowIdsJson: string): Map<number, string[]> {
    const rows = this.db.rows<{ summary_id: number; parent: string }>(
      `SELECT p.summary_id, s.summary_id AS parent FROM summary_parents p JOIN summaries s ON s.id = p.parent_summary_id
       WHERE p.summary_id IN (SELECT value FROM json_each(?)) ORDER BY p.summary_id, p.ordinal`,
      summaryRowIdsJson,
    );
    const parents = new Map<number, string[]>();
    for (const row of rows) {
      const list = parents.get(row.summary_id) ?? [];
      list.push(row.parent);
      parents.set(row.summary_id, list);
    }
    return parents;
  }
}
