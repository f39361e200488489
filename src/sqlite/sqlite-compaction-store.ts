/**
 * The embedded SQLite backend of the compaction store, on the same connection as SqliteStore. Each apply is one
 * IMMEDIATE transaction with a synchronous body: validate the planned range, insert the summary, link its
 * sources, swap the range for one summary item, and keep the conversation's counters equal to the sums over its
 * context items. The summary item takes the ordinal of the first replaced item, so context order is preserved.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Database } from "./database.js";
import type { ConversationId } from "../records.js";
import type {
  ApplyResult,
  CompactionItem,
  CompactionStore,
  PlannedRange,
  SummaryDraft,
  SummarySources,
} from "../store/compaction-store.js";

type CompactionItemTuple = [ordinal: number, messageId: number | null, summaryId: number | null, tokenCount: number, flags: number, depth: number | null];

/**
 * Context items read per query. A raw backlog of 115k items read in one statement held the event loop ~0.35 s
 * (the first sweep after a large import); pages of this size take a few ms each, with the loop running between.
 */
export const ITEM_PAGE_SIZE = 4_096;

type RangeTuple = [ordinal: number, messageId: number | null, summaryId: number | null, tokenCount: number];

type SourceKind = "messages" | "summaries";

export class SqliteCompactionStore implements CompactionStore {
  constructor(readonly db: Database) {}

  async listCompactionItems(conversationId: ConversationId): Promise<CompactionItem[]> {
    // Plan: SEARCH context_items USING PRIMARY KEY (conversation_id=? AND ordinal>?), then SEARCH summaries USING
    // INTEGER PRIMARY KEY (rowid=?) per summary item: cost follows the active context, never the stored history.
    // Items come in pages with the event loop running between them; a writer that changes the context meanwhile
    // is caught when a pass applies (the planned range is re-checked inside its transaction).
    const items: CompactionItem[] = [];
    for (let after = Number.MIN_SAFE_INTEGER; ;) {
      const page = this.db.tuples<CompactionItemTuple>(
        `SELECT c.ordinal, c.message_id, c.summary_id, c.token_count, c.flags, s.depth
         FROM context_items c LEFT JOIN summaries s ON s.id = c.summary_id
         WHERE c.conversation_id = ? AND c.ordinal > ? ORDER BY c.ordinal LIMIT ?`,
        conversationId, after, ITEM_PAGE_SIZE,
      );
      for (const row of page) {
        items.push({ ordinal: row[0], messageId: row[1], summaryRowId: row[2], tokenCount: row[3], flags: row[4], depth: row[5] });
      }
      if (page.length < ITEM_PAGE_SIZE) return items;
      after = page.at(-1)![0];
      await yieldToEventLoop();
    }
  }

  async applyLeafSummary(range: PlannedRange, draft: SummaryDraft, contextTokenCount: number): Promise<ApplyResult> {
    return this.apply(range, draft, contextTokenCount, "messages");
  }

  async applyCondensedSummary(range: PlannedRange, draft: SummaryDraft, contextTokenCount: number): Promise<ApplyResult> {
    return this.apply(range, draft, contextTokenCount, "summaries");
  }

  async getSummarySources(summaryRowId: number): Promise<SummarySources> {
    const messages = this.db.all<{ message_id: number }>(
      "SELECT message_id FROM summary_messages WHERE summary_id = ? ORDER BY ordinal", summaryRowId,
    );
    const parents = this.db.all<{ parent_summary_id: number }>(
      "SELECT parent_summary_id FROM summary_parents WHERE summary_id = ? ORDER BY ordinal", summaryRowId,
    );
    return {
      messageIds: messages.map((row) => row.message_id),
      parentRowIds: parents.map((row) => row.parent_summary_id),
    };
  }

  private async apply(
    range: PlannedRange,
    draft: SummaryDraft,
    contextTokenCount: number,
    sources: SourceKind,
  ): Promise<ApplyResult> {
    const first = range.items[0];
    const last = range.items.at(-1);
    if (!first || !last) return { kind: "stale", reason: "the planned range is empty" };
    return this.db.write((): ApplyResult => {
      const rows = this.db.tuples<RangeTuple>(
        `SELECT ordinal, message_id, summary_id, token_count FROM context_items
         WHERE conversation_id = ? AND ordinal BETWEEN ? AND ? ORDER BY ordinal`,
        range.conversationId, first.ordinal, last.ordinal,
      );
      const mismatch = describeMismatch(range, rows, sources);
      if (mismatch) return { kind: "stale", reason: mismatch };

      const { lastInsertRowid: summaryRowId } = this.db.run(
        `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count,
           earliest_at, latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        draft.summaryId, range.conversationId, draft.kind, draft.depth, draft.content, draft.tokenCount,
        draft.sourceTokenCount, draft.earliestAt, draft.latestAt, draft.descendantCount, draft.sourceMessageCount,
        draft.seqStart, draft.seqEnd, JSON.stringify(draft.fileIds), draft.level, draft.createdAt,
      );
      // The sources are exactly the rows just checked, in the same transaction: linked by one statement each
      // instead of one per source (a leaf of a 20k-token chunk has ~200 sources; a sweep of a million messages
      // made ~1M single-row inserts).
      const link = sources === "messages"
        ? "INSERT INTO summary_messages (summary_id, message_id, ordinal)"
        : "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal)";
      const sourceColumn = sources === "messages" ? "message_id" : "summary_id";
      this.db.run(
        `${link} SELECT ?, ${sourceColumn}, row_number() OVER (ORDER BY ordinal) - 1 FROM context_items
         WHERE conversation_id = ? AND ordinal BETWEEN ? AND ?`,
        summaryRowId, range.conversationId, first.ordinal, last.ordinal,
      );

      this.db.run(
        "DELETE FROM context_items WHERE conversation_id = ? AND ordinal BETWEEN ? AND ?",
        range.conversationId, first.ordinal, last.ordinal,
      );
      this.db.run(
        "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES (?, ?, ?, ?, 0)",
        range.conversationId, first.ordinal, summaryRowId, contextTokenCount,
      );
      const tokensRemoved = rows.reduce((total, row) => total + row[3], 0);
      const rawRemoved = sources === "messages" ? tokensRemoved : 0;
      this.db.run(
        `UPDATE conversations SET context_tokens = context_tokens - ? + ?, context_raw_tokens = context_raw_tokens - ?,
           context_items = context_items - ?, updated_at = ?
         WHERE conversation_id = ?`,
        tokensRemoved, contextTokenCount, rawRemoved, rows.length - 1, draft.createdAt, range.conversationId,
      );
      return { kind: "applied", summaryRowId, tokensRemoved, tokensAdded: contextTokenCount };
    });
  }
}

/** Why the stored range differs from the plan, or null when it is exactly what was planned. */
function describeMismatch(range: PlannedRange, rows: RangeTuple[], sources: SourceKind): string | null {
  if (rows.length !== range.items.length) {
    return `expected ${range.items.length} context items in ordinals ${range.items[0]?.ordinal}..${range.items.at(-1)?.ordinal}, found ${rows.length}`;
  }
  for (const [index, [ordinal, messageId, summaryId]] of rows.entries()) {
    const planned = range.items[index]!;
    if (ordinal !== planned.ordinal || messageId !== planned.messageId || summaryId !== planned.summaryRowId) {
      return `context item at ordinal ${planned.ordinal} changed since the pass was planned`;
    }
    const isExpectedKind = sources === "messages" ? messageId !== null : summaryId !== null;
    if (!isExpectedKind) return `context item at ordinal ${ordinal} is not a ${sources === "messages" ? "message" : "summary"}`;
  }
  return null;
}
