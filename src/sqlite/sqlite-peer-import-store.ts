/**
 * The write side of an import into LCM's database (schema 9: import_sources, import_map). Each method is one
 * IMMEDIATE transaction that writes rows, their import_map entries and the conversation's cursor together, so an
 * interrupted import resumes exactly where it stopped and a finished one is never written twice. The methods that
 * take a list write it in order until their time slice (runtime/time-slice.ts) has run out, at least one row, and
 * say how many they wrote: the caller lets the event loop run and passes the rest again. Rows are written
 * as the engine writes them (messages and parts as encoded by the codec, summaries with their edges, context items
 * with the conversation's counters); the full-text indexes pick imported rows up by id, as they do ingested ones.
 *
 * Map keys: `conversation` → the peer conversation id (target_key: its identity, peer-reader.ts); `message` →
 * "<peer conversation>/<peer message>" (a key range per conversation; a message LCM's codec refused has no target and
 * its state says why); `summary` → the peer summary id; `file` → the peer file id.
 *
 * A source is the peer's file whatever its path and whatever the peer removed from it since: it is found by the
 * fingerprint of the file, else by any of its conversations already imported from it (its identity, or for rows
 * written before identities were kept, its id with the session and creation time of the conversation it became).
 */
import type { Database } from "./database.js";
import { recordedPath } from "./stored-file-path.js";
import { ItemFlags, MessageFlags } from "../messages/message-codec.js";
import type { ConversationKey } from "../records.js";
import { nextLoopTurn, type SliceDeadline } from "../runtime/time-slice.js";
import { pendingTranscriptMatch } from "./sqlite-imported-history-store.js";
import {
  type ContextItemInput, type ConversationCursor, type ImportedFile, type ImportedMessage, INITIAL_CURSOR, type MessageToStore,
  type PeerFileOutcome, type PeerImportStore, type PeerSource, type PlannedSummary, type SourceConversation,
} from "../store/peer-import-store.js";

/** Shown on a conversation while it is being imported: archived, so no turn reaches it half-written. */
export const IMPORTING_REASON = "importing from lossless-claw";

/** Rows per read of the map (2-4 ms each at 100k messages). */
const PAGE_ROWS = 1_000;

export class SqlitePeerImportStore implements PeerImportStore {
  constructor(private readonly db: Database) {}

  /**
   * Registers the source, or finds it again (findSource) and records its current fingerprint and path; returns its id.
   */
  async beginSource(source: PeerSource, conversations: readonly SourceConversation[]): Promise<number> {
    return this.db.write(() => {
      const known = this.findSourceNow(source.kind, source.fingerprint, conversations);
      if (known !== null) {
        this.db.run("UPDATE import_sources SET fingerprint = ?, path = ?, schema_line = ? WHERE source_id = ?", source.fingerprint, source.path, source.schemaLine, known);
        return known;
      }
      return Number(this.db.run(
        "INSERT INTO import_sources (kind, fingerprint, path, schema_line, started_at) VALUES (?, ?, ?, ?, ?)",
        source.kind, source.fingerprint, source.path, source.schemaLine, source.now,
      ).lastInsertRowid);
    });
  }

  /**
   * The source this file is: the one of this fingerprint, else one holding any of its conversations (a peer that
   * pruned its oldest conversation has another fingerprint, but the same conversations). Null when none.
   */
  async findSource(kind: string, fingerprint: string, conversations: readonly SourceConversation[]): Promise<number | null> {
    return this.findSourceNow(kind, fingerprint, conversations);
  }

  /** findSource, read at once (inside beginSource's transaction, where no await may come). */
  private findSourceNow(kind: string, fingerprint: string, conversations: readonly SourceConversation[]): number | null {
    const byFingerprint = this.db.get<{ source_id: number }>("SELECT source_id FROM import_sources WHERE kind = ? AND fingerprint = ?", kind, fingerprint);
    if (byFingerprint) return byFingerprint.source_id;
    for (const { source_id: sourceId } of this.db.all<{ source_id: number }>("SELECT source_id FROM import_sources WHERE kind = ? ORDER BY source_id", kind)) {
      if (conversations.some((conversation) => this.holds(sourceId, conversation))) return sourceId;
    }
    return null;
  }

  /** Whether the source's map holds this very conversation (not merely one with the same peer id). */
  private holds(sourceId: number, conversation: SourceConversation): boolean {
    const row = this.db.get<{ target_key: string | null; session_id: string | null; created_at: number | null }>(
      `SELECT i.target_key, c.session_id, c.created_at FROM import_map i LEFT JOIN conversations c ON c.conversation_id = i.target_id
       WHERE i.source_id = ? AND i.entity = 'conversation' AND i.source_key = ?`,
      sourceId, String(conversation.peerConversationId),
    );
    if (!row) return false;
    if (row.target_key !== null) return row.target_key === conversation.identity;
    return row.session_id === conversation.sessionId && row.created_at === conversation.createdAt;
  }

  async finishSource(sourceId: number, now: number): Promise<void> {
    await this.db.write(() => this.db.run("UPDATE import_sources SET completed_at = ? WHERE source_id = ?", now, sourceId));
  }

  /**
   * The LCM conversation a peer conversation became, how far its import got and the identity it was imported under
   * (null for rows written before identities were kept); null when not started.
   */
  async conversationState(sourceId: number, peerConversationId: number): Promise<{ conversationId: number; cursor: ConversationCursor; identity: string | null } | null> {
    return this.conversationStateNow(sourceId, peerConversationId);
  }

  private conversationStateNow(sourceId: number, peerConversationId: number): { conversationId: number; cursor: ConversationCursor; identity: string | null } | null {
    const row = this.db.get<{ target_id: number; target_key: string | null; state: string }>(
      "SELECT target_id, target_key, state FROM import_map WHERE source_id = ? AND entity = 'conversation' AND source_key = ?", sourceId, String(peerConversationId),
    );
    return row ? { conversationId: row.target_id, cursor: JSON.parse(row.state) as ConversationCursor, identity: row.target_key } : null;
  }

  /** Creates the conversation, archived while it is imported, and its map row (keeping the peer conversation's identity). */
  async createConversation(sourceId: number, peerConversationId: number, identity: string, key: ConversationKey, createdAt: number, now: number): Promise<number> {
    return this.db.write(() => {
      const { lastInsertRowid: conversationId } = this.db.run(
        `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, archived_at, archive_reason)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        key.agentId, key.sessionId, key.sessionKey ?? null, createdAt, now, now, IMPORTING_REASON,
      );
      this.db.run(
        "INSERT INTO import_map (source_id, entity, source_key, target_id, target_key, state) VALUES (?, 'conversation', ?, ?, ?, ?)",
        sourceId, String(peerConversationId), conversationId, identity, JSON.stringify(INITIAL_CURSOR),
      );
      return conversationId;
    });
  }

  /** Peer file ids already handled for this source (copied, or recorded as not copied). */
  async mappedFiles(sourceId: number, peerFileIds: readonly string[]): Promise<Set<string>> {
    const rows = this.db.all<{ source_key: string }>(
      "SELECT source_key FROM import_map WHERE source_id = ? AND entity = 'file' AND source_key IN (SELECT value FROM json_each(?))",
      sourceId, JSON.stringify(peerFileIds),
    );
    return new Set(rows.map((row) => row.source_key));
  }

  /**
   * The files this source's peer files became in the conversation, by peer file id (the same file for two peer ids
   * of the same content): what references to them name.
   */
  async importedFiles(sourceId: number, conversationId: number): Promise<Map<string, ImportedFile>> {
    const rows = this.db.all<{ source_key: string; file_id: string; file_name: string | null; mime_type: string | null; byte_size: number; exploration_summary: string }>(
      `SELECT i.source_key, f.file_id, f.file_name, f.mime_type, f.byte_size, f.exploration_summary
       FROM import_map i JOIN large_files f ON f.file_id = i.target_key
       WHERE i.source_id = ? AND i.entity = 'file' AND f.conversation_id = ?`,
      sourceId, conversationId,
    );
    return new Map(rows.map((row) => [row.source_key, {
      fileId: row.file_id, fileName: row.file_name, mimeType: row.mime_type, byteSize: row.byte_size, explorationSummary: row.exploration_summary,
    }]));
  }

  /** Another row holding the same content in the conversation (LCM stores one file per content). */
  async fileWithHash(conversationId: number, contentHash: string): Promise<string | null> {
    return this.db.get<{ file_id: string }>("SELECT file_id FROM large_files WHERE conversation_id = ? AND content_hash = ?", conversationId, contentHash)?.file_id ?? null;
  }

  async fileIdTaken(fileId: string): Promise<boolean> {
    return this.db.get("SELECT 1 AS found FROM large_files WHERE file_id = ?", fileId) !== undefined;
  }

  /** Stores file rows (their content is on disk already) and records every peer file handled; ends the file phase. */
  async storeFiles(
    sourceId: number, conversationId: number, peerConversationId: number,
    files: readonly PeerFileOutcome[],
  ): Promise<void> {
    await this.db.write(() => {
      for (const file of files) {
        if (file.record) {
          const record = file.record;
          this.db.run(
            `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
               exploration_summary, explorer, origin, tool_name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
            record.fileId, conversationId, record.contentHash, record.fileName, record.mimeType, record.byteSize, record.tokenCount,
            recordedPath(this.db.path, record.storagePath), record.explorationSummary, record.explorer, record.origin, record.toolName, record.createdAt,
          );
        }
        this.db.run(
          "INSERT INTO import_map (source_id, entity, source_key, target_key, state) VALUES (?, 'file', ?, ?, ?) ON CONFLICT DO NOTHING",
          sourceId, file.peerFileId, file.targetFileId, file.noteKind === null ? null : `${file.noteKind}: ${file.note ?? ""}`,
        );
      }
      this.advance(sourceId, peerConversationId, { phase: "messages" });
    });
  }

  /**
   * Appends messages after the conversation's last (seq order kept), with their parts and map rows, until `deadline`
   * has expired (at least one), and moves the cursor past the last one handled; returns those written and how many of
   * `messages` it handled (a refused message gets its map row only). Not in context yet: the context is written from
   * the peer's once all are in. The file of a tool output the peer stored aside is marked as that tool's output.
   * A fingerprint already stored in the conversation (the same text at the same second, twice) is another message:
   * it is stored under an identity scoped to its peer row. Each map row keeps the message's transcript match key
   * (transcript-match.ts) until bootstrap finds the message in the host's transcript.
   */
  async storeMessages(
    sourceId: number, conversationId: number, peerConversationId: number,
    messages: readonly MessageToStore[], now: number, deadline: SliceDeadline,
  ): Promise<{ stored: ImportedMessage[]; handled: number }> {
    if (messages.length === 0) return { stored: [], handled: 0 };
    return this.db.write(() => {
      let nextSeq = this.db.get<{ next_seq: number }>("SELECT next_seq FROM conversations WHERE conversation_id = ?", conversationId)!.next_seq;
      const stored: ImportedMessage[] = [];
      let tokens = 0;
      let handled = 0;
      for (const message of messages) {
        if (handled > 0 && deadline.expired()) break;
        handled++;
        const { peerMessageId, encoded } = message;
        const key = `${peerConversationId}/${peerMessageId}`;
        if (encoded === null) {
          this.db.run("INSERT INTO import_map (source_id, entity, source_key, state) VALUES (?, 'message', ?, ?)", sourceId, key, `refused: ${message.refused}`);
          continue;
        }
        const insert = (identityKey: string) => this.db.run(
          `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (conversation_id, identity_key) DO NOTHING`,
          conversationId, nextSeq, encoded.role, encoded.content, encoded.tokenCount, encoded.createdAt, identityKey, encoded.flags, encoded.meta,
        );
        let result = insert(encoded.identityKey);
        if (result.changes === 0) result = insert(`${encoded.identityKey}@lossless-claw:${peerMessageId}`);
        if (result.changes === 0) throw new Error(`Peer message ${peerMessageId} is stored already but not in the import map; run lcm doctor.`);
        const messageId = result.lastInsertRowid;
        encoded.parts.forEach((part, ordinal) => {
          this.db.run(
            "INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end, data, meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
            messageId, ordinal, part.kind, part.start, part.end, part.data, part.meta,
          );
        });
        this.db.run(
          "INSERT INTO import_map (source_id, entity, source_key, target_id, state) VALUES (?, 'message', ?, ?, ?)",
          sourceId, key, messageId, pendingTranscriptMatch(message.matchKey),
        );
        for (const output of message.toolOutputs ?? []) {
          this.db.run(
            `UPDATE large_files SET origin = 'tool-result', tool_name = coalesce(?, tool_name) WHERE conversation_id = ? AND file_id =
               (SELECT target_key FROM import_map WHERE source_id = ? AND entity = 'file' AND source_key = ?)`,
            output.toolName, conversationId, sourceId, output.fileId,
          );
        }
        stored.push({
          messageId, seq: nextSeq, createdAt: encoded.createdAt, tokenCount: encoded.tokenCount,
          excluded: (encoded.flags & MessageFlags.excluded) !== 0, itemFlags: encoded.itemFlags,
        });
        tokens += encoded.tokenCount;
        nextSeq++;
      }
      this.db.run(
        `UPDATE conversations SET next_seq = ?, message_count = message_count + ?, message_tokens = message_tokens + ?,
           last_ingest_at = ?, updated_at = ? WHERE conversation_id = ?`,
        nextSeq, stored.length, tokens, now, now, conversationId,
      );
      const last = messages[handled - 1]!;
      this.advance(sourceId, peerConversationId, { afterSeq: last.peerSeq, afterMessageId: last.peerMessageId });
      return { stored, handled };
    });
  }

  /** Ends the message phase (a conversation with no messages goes straight on). */
  async endMessages(sourceId: number, peerConversationId: number): Promise<void> {
    await this.db.write(() => this.advance(sourceId, peerConversationId, { phase: "summaries" }));
  }

  /**
   * The conversation's messages stored so far by this source, by peer message id. Read in pages of PAGE_ROWS with the
   * event loop running between them (a 100k-message conversation is read in 20 short reads, not one long one).
   */
  async importedMessages(sourceId: number, peerConversationId: number): Promise<Map<number, ImportedMessage>> {
    const prefix = `${peerConversationId}/`;
    const imported = new Map<number, ImportedMessage>();
    for (let after = prefix; ;) {
      // The item flags as the codec sets them: a tool result, an assistant message with tool calls.
      const rows = this.db.tuples<[key: string, messageId: number, seq: number, createdAt: number, tokenCount: number, flags: number, itemFlags: number]>(
        `SELECT i.source_key, m.message_id, m.seq, m.created_at, m.token_count, m.flags,
                (CASE WHEN m.role = 'toolResult' THEN ${ItemFlags.toolResult} ELSE 0 END) |
                (CASE WHEN EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = m.message_id AND p.kind = 'toolCall') THEN ${ItemFlags.toolCalls} ELSE 0 END)
         FROM import_map i JOIN messages m ON m.message_id = i.target_id
         WHERE i.source_id = ? AND i.entity = 'message' AND i.source_key > ? AND i.source_key < ? ORDER BY i.source_key LIMIT ?`,
        sourceId, after, `${peerConversationId}0`, PAGE_ROWS,
      );
      for (const [key, messageId, seq, createdAt, tokenCount, flags, itemFlags] of rows) {
        imported.set(Number(key.slice(prefix.length)), { messageId, seq, createdAt, tokenCount, excluded: (flags & MessageFlags.excluded) !== 0, itemFlags });
      }
      if (rows.length < PAGE_ROWS) return imported;
      after = rows.at(-1)![0];
      await nextLoopTurn();
    }
  }

  /** Row ids (summaries.id) of the peer summaries this source stored. */
  async summaryRowIds(sourceId: number, peerSummaryIds: readonly string[]): Promise<Map<string, number>> {
    return this.summaryRowIdsNow(sourceId, peerSummaryIds);
  }

  private summaryRowIdsNow(sourceId: number, peerSummaryIds: readonly string[]): Map<string, number> {
    const rows = this.db.all<{ source_key: string; target_id: number }>(
      "SELECT source_key, target_id FROM import_map WHERE source_id = ? AND entity = 'summary' AND source_key IN (SELECT value FROM json_each(?))",
      sourceId, JSON.stringify(peerSummaryIds),
    );
    return new Map(rows.map((row) => [row.source_key, row.target_id]));
  }

  /**
   * Stores planned summaries (each after those it condenses) with their edges and map rows, in order, until
   * `deadline` has expired (at least one). A summary id another row already holds gets `alternateId(peerSummaryId)`
   * instead. Returns how many it stored.
   */
  async storeSummaries(
    sourceId: number, conversationId: number, summaries: readonly PlannedSummary[], alternateId: (peerSummaryId: string) => string,
    deadline: SliceDeadline,
  ): Promise<number> {
    return this.db.write(() => {
      const rowIds = new Map<string, number>();
      let stored = 0;
      for (const summary of summaries) {
        if (stored > 0 && deadline.expired()) break;
        const unknown = summary.parentPeerIds.filter((peerId) => !rowIds.has(peerId));
        if (unknown.length > 0) for (const [peerId, rowId] of this.summaryRowIdsNow(sourceId, unknown)) rowIds.set(peerId, rowId);
        const taken = this.db.get("SELECT 1 AS found FROM summaries WHERE summary_id = ?", summary.summaryId) !== undefined;
        const { lastInsertRowid: rowId } = this.db.run(
          `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at,
             descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'normal', ?)`,
          taken ? alternateId(summary.peerSummaryId) : summary.summaryId, conversationId, summary.kind, summary.depth, summary.content,
          summary.tokenCount, summary.sourceTokenCount, summary.earliestAt, summary.latestAt, summary.descendantCount,
          summary.sourceMessageCount, summary.seqStart, summary.seqEnd, JSON.stringify(summary.fileIds), summary.createdAt,
        );
        summary.messageIds.forEach((messageId, ordinal) => {
          this.db.run("INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)", rowId, messageId, ordinal);
        });
        summary.parentPeerIds.forEach((peerId, ordinal) => {
          this.db.run("INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, ?, ?)", rowId, rowIds.get(peerId)!, ordinal);
        });
        this.db.run(
          "INSERT INTO import_map (source_id, entity, source_key, target_id, target_key) VALUES (?, 'summary', ?, ?, ?)",
          sourceId, summary.peerSummaryId, rowId, taken ? alternateId(summary.peerSummaryId) : summary.summaryId,
        );
        rowIds.set(summary.peerSummaryId, rowId);
        stored++;
      }
      return stored;
    });
  }

  async endSummaries(sourceId: number, peerConversationId: number): Promise<void> {
    await this.db.write(() => this.advance(sourceId, peerConversationId, { phase: "context" }));
  }

  /**
   * Appends context items (in the peer's order) and the counters that sum them, until `deadline` has expired (at
   * least one); the cursor counts `doneBefore` plus those written. Returns how many it wrote.
   */
  async storeContext(
    sourceId: number, conversationId: number, peerConversationId: number, items: readonly ContextItemInput[], doneBefore: number,
    deadline: SliceDeadline,
  ): Promise<number> {
    return this.db.write(() => {
      let nextOrdinal = this.db.get<{ next_ordinal: number }>("SELECT next_ordinal FROM conversations WHERE conversation_id = ?", conversationId)!.next_ordinal;
      let tokens = 0;
      let rawTokens = 0;
      let written = 0;
      for (const item of items) {
        if (written > 0 && deadline.expired()) break;
        written++;
        this.db.run(
          "INSERT INTO context_items (conversation_id, ordinal, message_id, summary_id, token_count, flags) VALUES (?, ?, ?, ?, ?, ?)",
          conversationId, nextOrdinal++, item.messageId, item.summaryRowId, item.tokenCount, item.flags,
        );
        tokens += item.tokenCount;
        if (item.isMessage) rawTokens += item.tokenCount;
      }
      this.db.run(
        `UPDATE conversations SET next_ordinal = ?, context_tokens = context_tokens + ?, context_raw_tokens = context_raw_tokens + ?,
           context_items = context_items + ? WHERE conversation_id = ?`,
        nextOrdinal, tokens, rawTokens, written, conversationId,
      );
      this.advance(sourceId, peerConversationId, { contextItems: doneBefore + written });
      return written;
    });
  }

  /**
   * Ends the conversation's import: it becomes the live conversation of its session, unless the peer had archived it
   * or another live conversation holds the session here (then it stays archived, saying why). Its transcript is
   * then to be reconciled: the session's next bootstrap matches the host's transcript against what came over.
   */
  async finishConversation(
    sourceId: number, conversationId: number, peerConversationId: number, archive: { at: number; reason: string } | null, now: number,
  ): Promise<"live" | "archived"> {
    return this.db.write(() => {
      const key = this.db.get<{ agent_id: string; session_id: string }>("SELECT agent_id, session_id FROM conversations WHERE conversation_id = ?", conversationId)!;
      const live = this.db.get(
        "SELECT 1 AS found FROM conversations WHERE agent_id = ? AND session_id = ? AND archived_at IS NULL AND conversation_id <> ?",
        key.agent_id, key.session_id, conversationId,
      ) !== undefined;
      const final = archive ?? (live ? { at: now, reason: "imported from lossless-claw; another conversation holds the session" } : null);
      this.db.run("UPDATE conversations SET archived_at = ?, archive_reason = ?, updated_at = ? WHERE conversation_id = ?", final?.at ?? null, final?.reason ?? null, now, conversationId);
      this.advance(sourceId, peerConversationId, { phase: "done", transcript: "pending" });
      return final ? "archived" : "live";
    });
  }

  private advance(sourceId: number, peerConversationId: number, change: Partial<ConversationCursor>): void {
    const current = this.conversationStateNow(sourceId, peerConversationId)!.cursor;
    this.db.run(
      "UPDATE import_map SET state = ? WHERE source_id = ? AND entity = 'conversation' AND source_key = ?",
      JSON.stringify({ ...current, ...change }), sourceId, String(peerConversationId),
    );
  }
}
