/**
 * The PostgreSQL side of PeerImportStore (`lcm import lossless-claw`): each write is one transaction that stores rows,
 * their import_map entries and the conversation's cursor together, so an interrupted import resumes exactly where it
 * stopped. The conversation being imported is archived (no gateway writes it) and its row is locked (FOR UPDATE)
 * before its counters are read, so two imports of one source cannot interleave their seqs. Map keys are those of the
 * SQLite store (sqlite-peer-import-store.ts); a conversation's message keys are a range because import_map.source_key
 * is collated "C" (migration 4). Text parameters go through toPgText, text read back through fromPgText.
 */
import { ItemFlags, MessageFlags } from "../messages/message-codec.js";
import type { ConversationKey } from "../records.js";
import { nextLoopTurn, type SliceDeadline } from "../runtime/time-slice.js";
import {
  type ContextItemInput, type ConversationCursor, type ImportedFile, type ImportedMessage, INITIAL_CURSOR, type MessageToStore,
  type PeerFileOutcome, type PeerImportStore, type PeerSource, type PlannedSummary, type SourceConversation,
} from "../store/peer-import-store.js";
import { fromPgText, type PgDatabase, type PgParam, type PgQueryable, toPgText } from "./pg-database.js";
import { PENDING_TRANSCRIPT } from "./pg-imported-history-store.js";
import { contentsOf, insertContents } from "./pg-stored-files.js";

/** Shown on a conversation while it is being imported (the SQLite store's words). */
const IMPORTING_REASON = "importing from lossless-claw";
const PAGE_ROWS = 1_000;

type Input = string | number | null | undefined;
function values(...inputs: Input[]): PgParam[] {
  return inputs.map((value) => (value === undefined ? null : typeof value === "string" ? toPgText(value) : value));
}

type ConversationState = { conversationId: number; cursor: ConversationCursor; identity: string | null };

export class PgPeerImportStore implements PeerImportStore {
  constructor(private readonly database: PgDatabase) {}

  async beginSource(source: PeerSource, conversations: readonly SourceConversation[]): Promise<number> {
    return this.database.transaction(async (tx) => {
      const known = await findSourceOn(tx, source.kind, source.fingerprint, conversations);
      if (known !== null) {
        await tx.run("UPDATE import_sources SET fingerprint = $1, path = $2, schema_line = $3 WHERE source_id = $4",
          values(source.fingerprint, source.path, source.schemaLine, known));
        return known;
      }
      const row = await tx.row<{ id: number }>(
        "INSERT INTO import_sources (kind, fingerprint, path, schema_line, started_at) VALUES ($1, $2, $3, $4, $5) RETURNING source_id AS id",
        values(source.kind, source.fingerprint, source.path, source.schemaLine, source.now),
      );
      return row!.id;
    });
  }

  findSource(kind: string, fingerprint: string, conversations: readonly SourceConversation[]): Promise<number | null> {
    return findSourceOn(this.database, kind, fingerprint, conversations);
  }

  async finishSource(sourceId: number, now: number): Promise<void> {
    await this.database.run("UPDATE import_sources SET completed_at = $1 WHERE source_id = $2", [now, sourceId]);
  }

  conversationState(sourceId: number, peerConversationId: number): Promise<ConversationState | null> {
    return conversationStateOn(this.database, sourceId, peerConversationId);
  }

  async createConversation(sourceId: number, peerConversationId: number, identity: string, key: ConversationKey, createdAt: number, now: number): Promise<number> {
    return this.database.transaction(async (tx) => {
      const created = await tx.row<{ id: number }>(
        `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, archived_at, archive_reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING conversation_id AS id`,
        values(key.agentId, key.sessionId, key.sessionKey ?? null, createdAt, now, now, IMPORTING_REASON),
      );
      await tx.run(
        "INSERT INTO import_map (source_id, entity, source_key, target_id, target_key, state) VALUES ($1, 'conversation', $2, $3, $4, $5)",
        values(sourceId, String(peerConversationId), created!.id, identity, JSON.stringify(INITIAL_CURSOR)),
      );
      return created!.id;
    });
  }

  async mappedFiles(sourceId: number, peerFileIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.database.rows<{ key: string }>(
      "SELECT source_key AS key FROM import_map WHERE source_id = $1 AND entity = 'file' AND source_key = ANY($2)", [sourceId, peerFileIds.map(toPgText)],
    );
    return new Set(rows.map((row) => fromPgText(row.key)));
  }

  async importedFiles(sourceId: number, conversationId: number): Promise<Map<string, ImportedFile>> {
    const rows = await this.database.rows<{ key: string; file_id: string; file_name: string | null; mime_type: string | null; byte_size: number; exploration_summary: string }>(
      `SELECT i.source_key AS key, f.file_id, f.file_name, f.mime_type, f.byte_size, f.exploration_summary
       FROM import_map i JOIN large_files f ON f.file_id = i.target_key
       WHERE i.source_id = $1 AND i.entity = 'file' AND f.conversation_id = $2`,
      [sourceId, conversationId],
    );
    return new Map(rows.map((row) => [fromPgText(row.key), {
      fileId: fromPgText(row.file_id), fileName: row.file_name === null ? null : fromPgText(row.file_name),
      mimeType: row.mime_type === null ? null : fromPgText(row.mime_type), byteSize: row.byte_size, explorationSummary: fromPgText(row.exploration_summary),
    }]));
  }

  async fileWithHash(conversationId: number, contentHash: string): Promise<string | null> {
    const row = await this.database.row<{ file_id: string }>("SELECT file_id FROM large_files WHERE conversation_id = $1 AND content_hash = $2", [conversationId, contentHash]);
    return row ? fromPgText(row.file_id) : null;
  }

  async fileIdTaken(fileId: string): Promise<boolean> {
    return (await this.database.row("SELECT 1 AS found FROM large_files WHERE file_id = $1", [toPgText(fileId)])) !== null;
  }

  /** The rows, their content (migration 8: read from where the import wrote each file, before the transaction) and map entries. */
  async storeFiles(sourceId: number, conversationId: number, peerConversationId: number, files: readonly PeerFileOutcome[]): Promise<void> {
    const contents = await contentsOf(files.flatMap((file) => (file.record ? [file.record] : [])));
    await this.database.transaction(async (tx) => {
      for (const file of files) {
        const record = file.record;
        if (record) {
          await tx.run(
            `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
               exploration_summary, explorer, origin, tool_name, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING`,
            values(record.fileId, conversationId, record.contentHash, record.fileName, record.mimeType, record.byteSize, record.tokenCount,
              record.storagePath, record.explorationSummary, record.explorer, record.origin, record.toolName, record.createdAt),
          );
          await insertContents(tx, contents, [record.fileId]);
        }
        await tx.run(
          "INSERT INTO import_map (source_id, entity, source_key, target_key, state) VALUES ($1, 'file', $2, $3, $4) ON CONFLICT DO NOTHING",
          values(sourceId, file.peerFileId, file.targetFileId, file.noteKind === null ? null : `${file.noteKind}: ${file.note ?? ""}`),
        );
      }
      await advance(tx, sourceId, peerConversationId, { phase: "messages" });
    });
  }

  async storeMessages(
    sourceId: number, conversationId: number, peerConversationId: number, messages: readonly MessageToStore[], now: number, deadline: SliceDeadline,
  ): Promise<{ stored: ImportedMessage[]; handled: number }> {
    if (messages.length === 0) return { stored: [], handled: 0 };
    return this.database.transaction(async (tx) => {
      let nextSeq = (await tx.row<{ next_seq: number }>("SELECT next_seq FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId]))!.next_seq;
      const stored: ImportedMessage[] = [];
      let tokens = 0;
      let handled = 0;
      for (const message of messages) {
        if (handled > 0 && deadline.expired()) break;
        handled++;
        const { peerMessageId, encoded } = message;
        const key = `${peerConversationId}/${peerMessageId}`;
        if (encoded === null) {
          await tx.run("INSERT INTO import_map (source_id, entity, source_key, state) VALUES ($1, 'message', $2, $3)", values(sourceId, key, `refused: ${message.refused}`));
          continue;
        }
        const insert = async (identityKey: string) => (await tx.row<{ id: number }>(
          `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (conversation_id, identity_key) DO NOTHING RETURNING message_id AS id`,
          values(conversationId, nextSeq, encoded.role, encoded.content, encoded.tokenCount, encoded.createdAt, identityKey, encoded.flags, encoded.meta),
        ))?.id ?? null;
        // A fingerprint already stored in the conversation (the same text at the same second, twice) is another message.
        const messageId = await insert(encoded.identityKey) ?? await insert(`${encoded.identityKey}@lossless-claw:${peerMessageId}`);
        if (messageId === null) throw new Error(`Peer message ${peerMessageId} is stored already but not in the import map; run lcm doctor.`);
        for (const [ordinal, part] of encoded.parts.entries()) {
          await tx.run(
            "INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end, data, meta) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            values(messageId, ordinal, part.kind, part.start, part.end, part.data, part.meta),
          );
        }
        await tx.run(
          "INSERT INTO import_map (source_id, entity, source_key, target_id, state) VALUES ($1, 'message', $2, $3, $4)",
          values(sourceId, key, messageId, `${PENDING_TRANSCRIPT}${message.matchKey}`),
        );
        for (const output of message.toolOutputs ?? []) {
          await tx.run(
            `UPDATE large_files SET origin = 'tool-result', tool_name = coalesce($1, tool_name) WHERE conversation_id = $2 AND file_id =
               (SELECT target_key FROM import_map WHERE source_id = $3 AND entity = 'file' AND source_key = $4)`,
            values(output.toolName, conversationId, sourceId, output.fileId),
          );
        }
        stored.push({
          messageId, seq: nextSeq, createdAt: encoded.createdAt, tokenCount: encoded.tokenCount,
          excluded: (encoded.flags & MessageFlags.excluded) !== 0, itemFlags: encoded.itemFlags,
        });
        tokens += encoded.tokenCount;
        nextSeq++;
      }
      await tx.run(
        `UPDATE conversations SET next_seq = $1, message_count = message_count + $2, message_tokens = message_tokens + $3,
           last_ingest_at = $4, updated_at = $4 WHERE conversation_id = $5`,
        [nextSeq, stored.length, tokens, now, conversationId],
      );
      const last = messages[handled - 1]!;
      await advance(tx, sourceId, peerConversationId, { afterSeq: last.peerSeq, afterMessageId: last.peerMessageId });
      return { stored, handled };
    });
  }

  async endMessages(sourceId: number, peerConversationId: number): Promise<void> {
    await this.database.transaction((tx) => advance(tx, sourceId, peerConversationId, { phase: "summaries" }));
  }

  async importedMessages(sourceId: number, peerConversationId: number): Promise<Map<number, ImportedMessage>> {
    const prefix = `${peerConversationId}/`;
    const imported = new Map<number, ImportedMessage>();
    for (let after = prefix; ;) {
      // The item flags as the codec sets them: a tool result, an assistant message with tool calls.
      const rows = await this.database.rows<{ key: string; message_id: number; seq: number; created_at: number; token_count: number; flags: number; item_flags: number }>(
        `SELECT i.source_key AS key, m.message_id, m.seq, m.created_at, m.token_count, m.flags,
                (CASE WHEN m.role = 'toolResult' THEN ${ItemFlags.toolResult} ELSE 0 END) |
                (CASE WHEN EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = m.message_id AND p.kind = 'toolCall') THEN ${ItemFlags.toolCalls} ELSE 0 END) AS item_flags
         FROM import_map i JOIN messages m ON m.message_id = i.target_id
         WHERE i.source_id = $1 AND i.entity = 'message' AND i.source_key > $2 AND i.source_key < $3 ORDER BY i.source_key LIMIT $4`,
        [sourceId, after, `${peerConversationId}0`, PAGE_ROWS],
      );
      for (const row of rows) {
        imported.set(Number(row.key.slice(prefix.length)), {
          messageId: row.message_id, seq: row.seq, createdAt: row.created_at, tokenCount: row.token_count,
          excluded: (row.flags & MessageFlags.excluded) !== 0, itemFlags: row.item_flags,
        });
      }
      if (rows.length < PAGE_ROWS) return imported;
      after = rows.at(-1)!.key;
      await nextLoopTurn();
    }
  }

  summaryRowIds(sourceId: number, peerSummaryIds: readonly string[]): Promise<Map<string, number>> {
    return summaryRowIdsOn(this.database, sourceId, peerSummaryIds);
  }

  async storeSummaries(
    sourceId: number, conversationId: number, summaries: readonly PlannedSummary[], alternateId: (peerSummaryId: string) => string,
    deadline: SliceDeadline,
  ): Promise<number> {
    return this.database.transaction(async (tx) => {
      const rowIds = new Map<string, number>();
      let stored = 0;
      for (const summary of summaries) {
        if (stored > 0 && deadline.expired()) break;
        const unknown = summary.parentPeerIds.filter((peerId) => !rowIds.has(peerId));
        if (unknown.length > 0) for (const [peerId, rowId] of await summaryRowIdsOn(tx, sourceId, unknown)) rowIds.set(peerId, rowId);
        const taken = (await tx.row("SELECT 1 AS found FROM summaries WHERE summary_id = $1", values(summary.summaryId))) !== null;
        const summaryId = taken ? alternateId(summary.peerSummaryId) : summary.summaryId;
        const inserted = await tx.row<{ id: number }>(
          `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at,
             descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'normal', $15) RETURNING id`,
          values(summaryId, conversationId, summary.kind, summary.depth, summary.content, summary.tokenCount, summary.sourceTokenCount,
            summary.earliestAt, summary.latestAt, summary.descendantCount, summary.sourceMessageCount, summary.seqStart, summary.seqEnd,
            JSON.stringify(summary.fileIds), summary.createdAt),
        );
        const rowId = inserted!.id;
        for (const [ordinal, messageId] of summary.messageIds.entries()) {
          await tx.run("INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES ($1, $2, $3)", [rowId, messageId, ordinal]);
        }
        for (const [ordinal, peerId] of summary.parentPeerIds.entries()) {
          await tx.run("INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES ($1, $2, $3)", [rowId, rowIds.get(peerId)!, ordinal]);
        }
        await tx.run(
          "INSERT INTO import_map (source_id, entity, source_key, target_id, target_key) VALUES ($1, 'summary', $2, $3, $4)",
          values(sourceId, summary.peerSummaryId, rowId, summaryId),
        );
        rowIds.set(summary.peerSummaryId, rowId);
        stored++;
      }
      return stored;
    });
  }

  async endSummaries(sourceId: number, peerConversationId: number): Promise<void> {
    await this.database.transaction((tx) => advance(tx, sourceId, peerConversationId, { phase: "context" }));
  }

  async storeContext(
    sourceId: number, conversationId: number, peerConversationId: number, items: readonly ContextItemInput[], doneBefore: number,
    deadline: SliceDeadline,
  ): Promise<number> {
    return this.database.transaction(async (tx) => {
      let nextOrdinal = (await tx.row<{ next_ordinal: number }>("SELECT next_ordinal FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId]))!.next_ordinal;
      let tokens = 0;
      let rawTokens = 0;
      let written = 0;
      for (const item of items) {
        if (written > 0 && deadline.expired()) break;
        written++;
        await tx.run(
          "INSERT INTO context_items (conversation_id, ordinal, message_id, summary_id, token_count, flags) VALUES ($1, $2, $3, $4, $5, $6)",
          [conversationId, nextOrdinal++, item.messageId, item.summaryRowId, item.tokenCount, item.flags],
        );
        tokens += item.tokenCount;
        if (item.isMessage) rawTokens += item.tokenCount;
      }
      await tx.run(
        `UPDATE conversations SET next_ordinal = $1, context_tokens = context_tokens + $2, context_raw_tokens = context_raw_tokens + $3,
           context_items = context_items + $4 WHERE conversation_id = $5`,
        [nextOrdinal, tokens, rawTokens, written, conversationId],
      );
      await advance(tx, sourceId, peerConversationId, { contextItems: doneBefore + written });
      return written;
    });
  }

  async finishConversation(
    sourceId: number, conversationId: number, peerConversationId: number, archive: { at: number; reason: string } | null, now: number,
  ): Promise<"live" | "archived"> {
    const heldReason = "imported from lossless-claw; another conversation holds the session";
    return this.database.transaction(async (tx) => {
      const key = (await tx.row<{ agent_id: string; session_id: string }>(
        "SELECT agent_id, session_id FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId],
      ))!;
      // The session's live conversation is unique (conversations_live_session): its row, if any, is locked too.
      const live = (await tx.row(
        "SELECT 1 AS found FROM conversations WHERE agent_id = $1 AND session_id = $2 AND archived_at IS NULL AND conversation_id <> $3 FOR UPDATE",
        [key.agent_id, key.session_id, conversationId],
      )) !== null;
      const final = archive ?? (live ? { at: now, reason: heldReason } : null);
      await tx.run("UPDATE conversations SET archived_at = $1, archive_reason = $2, updated_at = $3 WHERE conversation_id = $4",
        values(final?.at ?? null, final?.reason ?? null, now, conversationId));
      await advance(tx, sourceId, peerConversationId, { phase: "done", transcript: "pending" });
      return final ? "archived" : "live";
    });
  }
}

async function findSourceOn(on: PgQueryable, kind: string, fingerprint: string, conversations: readonly SourceConversation[]): Promise<number | null> {
  const byFingerprint = await on.row<{ id: number }>("SELECT source_id AS id FROM import_sources WHERE kind = $1 AND fingerprint = $2", values(kind, fingerprint));
  if (byFingerprint) return byFingerprint.id;
  for (const { id } of await on.rows<{ id: number }>("SELECT source_id AS id FROM import_sources WHERE kind = $1 ORDER BY source_id", values(kind))) {
    for (const conversation of conversations) if (await holds(on, id, conversation)) return id;
  }
  return null;
}

/** Whether the source's map holds this very conversation (not merely one with the same peer id). */
async function holds(on: PgQueryable, sourceId: number, conversation: SourceConversation): Promise<boolean> {
  const row = await on.row<{ target_key: string | null; session_id: string | null; created_at: number | null }>(
    `SELECT i.target_key, c.session_id, c.created_at FROM import_map i LEFT JOIN conversations c ON c.conversation_id = i.target_id
     WHERE i.source_id = $1 AND i.entity = 'conversation' AND i.source_key = $2`,
    [sourceId, String(conversation.peerConversationId)],
  );
  if (!row) return false;
  if (row.target_key !== null) return fromPgText(row.target_key) === conversation.identity;
  return row.session_id !== null && fromPgText(row.session_id) === conversation.sessionId && row.created_at === conversation.createdAt;
}

async function conversationStateOn(on: PgQueryable, sourceId: number, peerConversationId: number, lock = false): Promise<ConversationState | null> {
  const row = await on.row<{ target_id: number; target_key: string | null; state: string }>(
    `SELECT target_id, target_key, state FROM import_map WHERE source_id = $1 AND entity = 'conversation' AND source_key = $2${lock ? " FOR UPDATE" : ""}`,
    [sourceId, String(peerConversationId)],
  );
  return row ? { conversationId: row.target_id, cursor: JSON.parse(fromPgText(row.state)) as ConversationCursor, identity: row.target_key === null ? null : fromPgText(row.target_key) } : null;
}

async function summaryRowIdsOn(on: PgQueryable, sourceId: number, peerSummaryIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await on.rows<{ key: string; target_id: number }>(
    "SELECT source_key AS key, target_id FROM import_map WHERE source_id = $1 AND entity = 'summary' AND source_key = ANY($2)", [sourceId, peerSummaryIds.map(toPgText)],
  );
  return new Map(rows.map((row) => [fromPgText(row.key), row.target_id]));
}

/** Moves the conversation's cursor (its map row locked until the transaction ends). */
async function advance(tx: PgQueryable, sourceId: number, peerConversationId: number, change: Partial<ConversationCursor>): Promise<void> {
  const current = (await conversationStateOn(tx, sourceId, peerConversationId, true))!.cursor;
  await tx.run(
    "UPDATE import_map SET state = $1 WHERE source_id = $2 AND entity = 'conversation' AND source_key = $3",
    values(JSON.stringify({ ...current, ...change }), sourceId, String(peerConversationId)),
  );
}
