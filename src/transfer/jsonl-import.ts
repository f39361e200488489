/**
 * Restores an LCM export (export-format.ts) into a database, exactly: `lcm import jsonl`. Host-free. Two passes over
 * the file: the first checks every record (shape, order, references, counts) and decides each conversation block
 * against the database, so a bad file or a conflict is refused before anything is written; the second writes. A dry
 * run (`planExportFile`) is the first pass alone.
 *
 * Idempotent and resumable: a block whose conversation (agent, session, creation time) is stored already is skipped
 * and reported. A block is written in chunks of a few hundred rows, each one transaction with the event loop running
 * between them; until its last chunk is in, its conversation is archived with IMPORTING_REASON (never routed to by
 * the gateway), and an interrupted import resumes where it stopped: rows already there are left as they are.
 */
import { createReadStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { createInterface } from "node:readline";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Database } from "../db/database.js";
import { recordedPath } from "../db/stored-file-path.js";
import { describeError, LcmError } from "../errors.js";
import { type ConversationExportRecord, type ExportRecord, IMPORTING_REASON, type LargeFileExportRecord } from "./export-format.js";
import { planBlock, type BlockPlan, type BlockDecision, validateExportLines } from "./export-validation.js";

/** Rows per write transaction. */
const CHUNK_ROWS = 500;
/** Characters of content per write transaction. */
const CHUNK_CHARS = 4_000_000;

export interface JsonlImportOptions {
  /** Where large files are stored (LcmConfig.filesDirectory). */
  filesDirectory: string;
  /** Called as records are checked (`phase` "check") and written ("write"). */
  onProgress?: (phase: "check" | "write", done: number, total: number) => void;
}

export interface ImportedBlock {
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  createdAt: number;
  /**
   * imported: written now; resumed: an interrupted import finished now; skipped: already stored (nothing written).
   * In a dry run (`planExportFile`), what would happen.
   */
  outcome: "imported" | "resumed" | "skipped";
  /** The conversation it is stored as; null in a dry run for a block not stored yet. */
  conversationId: number | null;
  messages: number;
  summaries: number;
  contextItems: number;
  largeFiles: number;
  reason: string | null;
}

export interface JsonlImportResult {
  path: string;
  records: number;
  conversations: ImportedBlock[];
}

/**
 * The first pass alone, for a dry run: checks the whole file and decides each block against the database exactly as
 * `importExportFile` does (a bad file or a conflict is refused the same way), and reports each block's outcome
 * without writing anything. A block that would be imported has no conversation id yet (null).
 */
export async function planExportFile(db: Database, path: string, options: Pick<JsonlImportOptions, "onProgress">): Promise<JsonlImportResult> {
  const { absolute, records, plans } = await checkExportFile(db, path, options);
  const conversations = plans.map((plan) => {
    switch (plan.decision.kind) {
      case "skip": return blockResult(plan, "skipped", plan.decision.conversationId, plan.decision.reason);
      case "resume": return blockResult(plan, "resumed", plan.decision.conversationId, null);
      default: return blockResult(plan, "imported", null, null);
    }
  });
  return { path: absolute, records, conversations };
}

export async function importExportFile(db: Database, path: string, options: JsonlImportOptions): Promise<JsonlImportResult> {
  const { absolute, records, plans } = await checkExportFile(db, path, options);
  const writer = new BlockWriter(db, options.filesDirectory);
  const results: ImportedBlock[] = [];
  let blockIndex = -1;
  let done = 0;
  let current: { plan: BlockPlan; conversationId: number } | null = null;
  for await (const { record } of parsedLines(readLines(absolute))) {
    done++;
    if (done % 1_000 === 0) options.onProgress?.("write", done, records);
    if (record.type === "conversation") {
      const plan = plans[++blockIndex]!;
      current = plan.decision.kind === "skip" ? null : { plan, conversationId: await writer.open(record, plan.decision) };
      if (plan.decision.kind === "skip") results.push(blockResult(plan, "skipped", plan.decision.conversationId, plan.decision.reason));
      continue;
    }
    if (!current) continue;
    if (record.type === "end") {
      await writer.finish(current.conversationId, current.plan.conversation, record);
      results.push(blockResult(current.plan, current.plan.decision.kind === "resume" ? "resumed" : "imported", current.conversationId, null));
      current = null;
      continue;
    }
    if (record.type === "largeFile") await writer.writeLargeFile(current.conversationId, record);
    else await writer.add(current.conversationId, record);
  }
  options.onProgress?.("write", records, records);
  return { path: absolute, records, conversations: results };
}

/** The first pass: every record checked, every block decided; throws (nothing written) when a block is refused. */
async function checkExportFile(
  db: Database, path: string, options: Pick<JsonlImportOptions, "onProgress">,
): Promise<{ absolute: string; records: number; plans: BlockPlan[] }> {
  const absolute = resolve(path);
  const validation = await validateExportLines(readLines(absolute), absolute, (done) => options.onProgress?.("check", done, 0));
  const plans = validation.blocks.map((block) => planBlock(db, block));
  const refused = plans.filter((plan): plan is BlockPlan & { decision: { kind: "refuse"; reason: string } } => plan.decision.kind === "refuse");
  if (refused.length > 0) {
    throw new LcmError(
      "invalid_input",
      `Nothing was imported from ${absolute}: ${refused.map((plan) => plan.decision.reason).join(" ")}`,
    );
  }
  return { absolute, records: validation.records, plans };
}

function blockResult(plan: BlockPlan, outcome: ImportedBlock["outcome"], conversationId: number | null, reason: string | null): ImportedBlock {
  const conversation = plan.conversation;
  return {
    agentId: conversation.agentId, sessionId: conversation.sessionId, sessionKey: conversation.sessionKey, createdAt: conversation.createdAt,
    outcome, conversationId, messages: plan.end.messages, summaries: plan.end.summaries, contextItems: plan.end.contextItems,
    largeFiles: plan.end.largeFiles, reason,
  };
}

/** The lines of a file, with the event loop free between reads. */
async function* readLines(path: string): AsyncGenerator<string> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new LcmError("invalid_input", `${path} is not a file; pass the JSONL file \`lcm export --format jsonl\` wrote.`);
  } catch (error) {
    if (error instanceof LcmError) throw error;
    throw new LcmError("invalid_input", `Cannot read ${path}: ${describeError(error)}. Pass the JSONL file \`lcm export --format jsonl\` wrote.`);
  }
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  try {
    yield* lines;
  } finally {
    lines.close();
  }
}

/** Parsed records with their line numbers (lines already checked by the first pass). */
async function* parsedLines(lines: AsyncIterable<string>): AsyncGenerator<{ line: number; record: ExportRecord }> {
  let line = 0;
  for await (const text of lines) {
    line++;
    if (text.trim() === "") continue;
    yield { line, record: JSON.parse(text) as ExportRecord };
  }
}

/** Writes a block's rows in chunks (one transaction each). */
class BlockWriter {
  private pending: ExportRecord[] = [];
  private pendingChars = 0;

  constructor(private readonly db: Database, private readonly filesDirectory: string) {}

  async open(record: ConversationExportRecord, decision: BlockDecision): Promise<number> {
    if (decision.kind === "resume") return decision.conversationId;
    return this.db.write(() => {
      const previous = record.previousConversation === null ? undefined : this.db.get<{ conversation_id: number }>(
        "SELECT conversation_id FROM conversations WHERE agent_id = ? AND session_id = ? AND created_at = ? ORDER BY conversation_id LIMIT 1",
        record.previousConversation.agentId, record.previousConversation.sessionId, record.previousConversation.createdAt,
      );
      return this.db.run(
        `INSERT INTO conversations (agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq, next_ordinal,
           message_count, message_tokens, context_tokens, context_raw_tokens, context_items, last_token_budget, last_window_tokens,
           last_reserve_tokens, bootstrap_state, last_compaction, session_started_at, last_reset, previous_conversation_id,
           archived_at, archive_reason, ended_at, end_reason)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        record.agentId, record.sessionId, record.sessionKey, record.createdAt, record.updatedAt, record.lastIngestAt, record.nextSeq,
        record.nextOrdinal, record.messageCount, record.messageTokens, record.contextTokens, record.contextRawTokens, record.contextItems,
        record.lastTokenBudget, record.lastWindowTokens, record.lastReserveTokens, record.bootstrapState, record.lastCompaction,
        record.sessionStartedAt, record.lastReset, previous?.conversation_id ?? null,
        record.archivedAt ?? record.createdAt, IMPORTING_REASON, record.endedAt, record.endReason,
      ).lastInsertRowid;
    });
  }

  async add(conversationId: number, record: ExportRecord): Promise<void> {
    this.pending.push(record);
    this.pendingChars += "content" in record ? record.content.length : 0;
    if (this.pending.length >= CHUNK_ROWS || this.pendingChars >= CHUNK_CHARS) await this.flush(conversationId);
  }

  /** Writes the file's bytes (atomically: temp file, then rename), then its row. */
  async writeLargeFile(conversationId: number, record: LargeFileExportRecord): Promise<void> {
    await this.flush(conversationId);
    const root = resolve(this.filesDirectory);
    const directory = join(root, String(conversationId));
    const path = join(directory, record.storedName);
    if (!path.startsWith(root + sep)) throw new LcmError("invalid_input", `Refusing to write ${path}: outside the files directory ${root}.`);
    if (record.contentBase64 !== null) {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      const temporary = join(directory, `.${record.fileId}.import.tmp`);
      try {
        await writeFile(temporary, Buffer.from(record.contentBase64, "base64"), { mode: 0o600 });
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw new LcmError("storage", `Could not write the large file ${record.fileId} to ${path}: ${describeError(error)}.`);
      }
    }
    await this.db.write(() => this.db.run(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count, storage_path,
         exploration_summary, explorer, origin, tool_name, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      record.fileId, conversationId, record.contentHash, record.fileName, record.mimeType, record.byteSize, record.tokenCount,
      recordedPath(this.db.path, path), record.explorationSummary, record.explorer, record.origin, record.toolName, record.createdAt,
    ));
  }

  /** Writes what is left, checks the block arrived whole, and takes the conversation out of its importing state. */
  async finish(conversationId: number, conversation: ConversationExportRecord, end: ExportRecord & { type: "end" }): Promise<void> {
    await this.flush(conversationId);
    await this.db.write(() => {
      const stored = this.db.get<{ messages: number; summaries: number; items: number }>(
        `SELECT (SELECT count(*) FROM messages WHERE conversation_id = ?1) AS messages,
                (SELECT count(*) FROM summaries WHERE conversation_id = ?1) AS summaries,
                (SELECT count(*) FROM context_items WHERE conversation_id = ?1) AS items`, conversationId,
      )!;
      if (stored.messages !== end.messages || stored.summaries !== end.summaries || stored.items !== end.contextItems) {
        throw new LcmError(
          "storage",
          `Conversation ${conversationId} holds ${stored.messages} messages, ${stored.summaries} summaries and ${stored.items} context ` +
            `items after its import, where the file has ${end.messages}, ${end.summaries} and ${end.contextItems}; it stays archived ` +
            `as "${IMPORTING_REASON}". Check it with \`lcm doctor --conversation ${conversationId}\`.`,
        );
      }
      try {
        this.db.run(
          "UPDATE conversations SET archived_at = ?, archive_reason = ? WHERE conversation_id = ?",
          conversation.archivedAt, conversation.archiveReason, conversationId,
        );
      } catch (error) {
        throw new LcmError(
          "invalid_input",
          `Conversation ${conversationId} was imported but stays archived: another live conversation of agent ${conversation.agentId}, ` +
            `session ${conversation.sessionId} appeared meanwhile (${describeError(error)}).`,
        );
      }
    });
  }

  private async flush(conversationId: number): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    await this.db.write(() => {
      for (const record of chunk) this.insert(conversationId, record);
    });
    await yieldToEventLoop();
  }

  /** One row and its edges; a row already there (a resumed import) is left as it is. */
  private insert(conversationId: number, record: ExportRecord): void {
    switch (record.type) {
      case "message": {
        const { changes, lastInsertRowid } = this.db.run(
          `INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key, flags, meta)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
          conversationId, record.seq, record.role, record.content, record.tokenCount, record.createdAt, record.identityKey, record.flags, record.meta,
        );
        if (changes === 0) return;
        for (const part of record.parts) {
          this.db.run(
            "INSERT INTO message_parts (message_id, ordinal, kind, text_start, text_end, data, meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
            lastInsertRowid, part.ordinal, part.kind, part.start, part.end, part.data, part.meta,
          );
        }
        return;
      }
      case "summary": {
        const { changes, lastInsertRowid } = this.db.run(
          `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at,
             latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
          record.summaryId, conversationId, record.kind, record.depth, record.content, record.tokenCount, record.sourceTokenCount,
          record.earliestAt, record.latestAt, record.descendantCount, record.sourceMessageCount, record.seqStart, record.seqEnd,
          record.fileIds, record.level, record.createdAt,
        );
        if (changes === 0) return;
        for (const edge of record.sourceMessages) {
          this.db.run(
            `INSERT INTO summary_messages (summary_id, message_id, ordinal)
             VALUES (?, (SELECT message_id FROM messages WHERE conversation_id = ? AND seq = ?), ?)`,
            lastInsertRowid, conversationId, edge.seq, edge.ordinal,
          );
        }
        for (const edge of record.sourceSummaries) {
          this.db.run(
            "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, (SELECT id FROM summaries WHERE summary_id = ?), ?)",
            lastInsertRowid, edge.summaryId, edge.ordinal,
          );
        }
        return;
      }
      case "contextItem":
        this.db.run(
          `INSERT INTO context_items (conversation_id, ordinal, message_id, summary_id, token_count, flags)
           VALUES (?1, ?2, (SELECT message_id FROM messages WHERE conversation_id = ?1 AND seq = ?3),
                   (SELECT id FROM summaries WHERE summary_id = ?4), ?5, ?6) ON CONFLICT DO NOTHING`,
          conversationId, record.ordinal, record.messageSeq, record.summaryId, record.tokenCount, record.flags,
        );
        return;
      default:
        return;
    }
  }
}
