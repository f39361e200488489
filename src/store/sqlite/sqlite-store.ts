/**
 * The embedded SQLite backend of the store contracts. Statements are prepared once per connection (Database
 * caches them by SQL text); every multi-table write is one IMMEDIATE transaction with a synchronous body.
 * Hot reads are index-driven and bounded by LIMIT, so their cost follows what is read, not the history size.
 */
import type { Database } from "../../db/database.js";
import type { EncodedMessage, StoredPart } from "../../messages/message-codec.js";
import { MessageFlags } from "../../messages/message-codec.js";
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
} from "../../records.js";
import type { AppendResult, BudgetRecord, LcmStore } from "../store.js";
import { SqliteLargeFileStore, insertLargeFiles } from "./sqlite-large-file-store.js";
import {
  CONTEXT_ITEM_COLUMNS,
  type ContextItemTuple,
  type ConversationRow,
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

export class SqliteStore implements LcmStore {
  constructor(readonly db: Database) {}

  // ── conversations ───────────────────────────────────────────────────────────────────────────────────────

  async getOrCreateConversation(key: ConversationKey, now: number): Promise<ConversationRecord> {
    const existing = this.conversationBySession(key.sessionId);
    if (existing) return existing;
    return this.db.write(() => {
      this.db.run(
        `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING`,
        key.agentId, key.sessionId, key.sessionKey ?? null, now, now,
      );
      return this.conversationBySession(key.sessionId)!;
    });
  }

  async findConversationBySessionId(sessionId: string): Promise<ConversationRecord | null> {
    return this.conversationBySession(sessionId);
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

  async setLastCompaction(conversationId: ConversationId, outcome: CompactionOutcome): Promise<void> {
    await this.db.write(() =>
      this.db.run("UPDATE conversations SET last_compaction = ? WHERE conversation_id = ?", JSON.stringify(outcome), conversationId),
    );
  }

  async recordBudget(conversationId: ConversationId, budget: BudgetRecord): Promise<void> {
    const current = this.db.get<{ last_token_budget: number | null; last_window_tokens: number | null; last_reserve_tokens: number | null }>(
      "SELECT last_token_budget, last_window_tokens, last_reserve_tokens FROM conversations WHERE conversation_id = ?", conversationId,
    );
    if (!current) return;
    const next = {
      tokenBudget: budget.tokenBudget ?? current.last_token_budget,
      windowTokens: budget.windowTokens ?? current.last_window_tokens,
      reserveTokens: budget.reserveTokens ?? current.last_reserve_tokens,
    };
    if (
      next.tokenBudget === current.last_token_budget && next.windowTokens === current.last_window_tokens &&
      next.reserveTokens === current.last_reserve_tokens
    ) return;
    await this.db.write(() =>
      this.db.run(
        "UPDATE conversations SET last_token_budget = ?, last_window_tokens = ?, last_reserve_tokens = ? WHERE conversation_id = ?",
        next.tokenBudget, next.windowTokens, next.reserveTokens, conversationId,
      ),
    );
  }

  private conversationBySession(sessionId: string): ConversationRecord | null {
    const row = this.db.get<ConversationRow>("SELECT * FROM conversations WHERE session_id = ?", sessionId);
    return row ? toConversation(row) : null;
  }

  // ── messages ────────────────────────────────────────────────────────────────────────────────────────────

  async appendMessages(conversationId: ConversationId, messages: EncodedMessage[], now: number): Promise<AppendResult> {
    return this.db.write(() => this.appendInTransaction(conversationId, messages, now));
  }

  async commitTurn(
    conversationId: ConversationId,
    advancementKey: string,
    messages: EncodedMessage[],
    now: number,
  ): Promise<{ status: "committed" | "duplicate" } & AppendResult> {
    return this.db.write(() => {
      const claimed = this.db.run(
        `INSERT INTO committed_turns (conversation_id, advancement_key, committed_at, message_count)
         VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        conversationId, advancementKey, now, messages.length,
      );
      if (claimed.changes === 0) return { status: "duplicate" as const, inserted: 0, duplicates: messages.length };
      return { status: "committed" as const, ...this.appendInTransaction(conversationId, messages, now) };
    });
  }

  /** The body shared by appendMessages and commitTurn; must run inside a write transaction. */
  private appendInTransaction(conversationId: ConversationId, messages: EncodedMessage[], now: number): AppendResult {
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
    for (const message of messages) {
      // The UNIQUE identity index decides: a replayed message changes nothing (no separate probe per message).
      const { changes, lastInsertRowid: messageId } = this.db.run(
        `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (conversation_id, identity_key) DO NOTHING`,
        conversationId, nextSeq, message.role, message.content, message.tokenCount, message.createdAt,
        message.identityKey, message.flags, message.meta,
      );
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
           last_ingest_at = ?, updated_at = ?
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
    const parts = new Map<number, StoredPart[]>();
    for (const row of rows) {
      const list = parts.get(row[0]);
      if (list) list.push(toPart(row));
      else parts.set(row[0], [toPart(row)]);
    }
    return parts;
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
