/**
 * The PostgreSQL backend of the compaction store (sqlite/sqlite-compaction-store.ts ported). Several gateways may
 * compact one conversation: each apply is one transaction that first takes the conversation's advisory lock without
 * waiting (`pg_try_advisory_xact_lock`) and then its row lock, re-checks the planned range, and only then writes the
 * summary, its links, the swapped context item and the counters. Another gateway holding the lock, or a range that
 * changed since planning, writes nothing and answers "stale" saying which. The model call happens before, outside.
 */
import type { ConversationId } from "../records.js";
import type {
  ApplyResult,
  CompactionItem,
  CompactionStore,
  PlannedRange,
  SummaryDraft,
  SummarySources,
} from "../store/compaction-store.js";
import { type PgDatabase, toPgText } from "./pg-database.js";

/** Context items read per query, as on SQLite: cost follows the active context, never the stored history. */
const ITEM_PAGE_SIZE = 4_096;

interface ItemRow {
  ordinal: number;
  message_id: number | null;
  summary_id: number | null;
  token_count: number;
  flags: number;
  depth: number | null;
}

type RangeRow = Pick<ItemRow, "ordinal" | "message_id" | "summary_id" | "token_count">;
type SourceKind = "messages" | "summaries";

export class PgCompactionStore implements CompactionStore {
  constructor(private readonly database: PgDatabase) {}

  async listCompactionItems(conversationId: ConversationId): Promise<CompactionItem[]> {
    const items: CompactionItem[] = [];
    for (let after = Number.MIN_SAFE_INTEGER; ;) {
      const page = await this.database.rows<ItemRow>(
        `SELECT c.ordinal, c.message_id, c.summary_id, c.token_count, c.flags, s.depth
         FROM context_items c LEFT JOIN summaries s ON s.id = c.summary_id
         WHERE c.conversation_id = $1 AND c.ordinal > $2 ORDER BY c.ordinal LIMIT $3`,
        [conversationId, after, ITEM_PAGE_SIZE],
      );
      for (const row of page) {
        items.push({ ordinal: row.ordinal, messageId: row.message_id, summaryRowId: row.summary_id, tokenCount: row.token_count, flags: row.flags, depth: row.depth });
      }
      if (page.length < ITEM_PAGE_SIZE) return items;
      after = page.at(-1)!.ordinal;
    }
  }

  async applyLeafSummary(range: PlannedRange, draft: SummaryDraft, contextTokenCount: number): Promise<ApplyResult> {
    return this.apply(range, draft, contextTokenCount, "messages");
  }

  async applyCondensedSummary(range: PlannedRange, draft: SummaryDraft, contextTokenCount: number): Promise<ApplyResult> {
    return this.apply(range, draft, contextTokenCount, "summaries");
  }

  async getSummarySources(summaryRowId: number): Promise<SummarySources> {
    if (!Number.isSafeInteger(summaryRowId)) return { messageIds: [], parentRowIds: [] };
    const messages = await this.database.rows<{ message_id: number }>(
      "SELECT message_id FROM summary_messages WHERE summary_id = $1 ORDER BY ordinal", [summaryRowId],
    );
    const parents = await this.database.rows<{ parent_summary_id: number }>(
      "SELECT parent_summary_id FROM summary_parents WHERE summary_id = $1 ORDER BY ordinal", [summaryRowId],
    );
    return { messageIds: messages.map((row) => row.message_id), parentRowIds: parents.map((row) => row.parent_summary_id) };
  }

  private async apply(range: PlannedRange, draft: SummaryDraft, contextTokenCount: number, sources: SourceKind): Promise<ApplyResult> {
    const first = range.items[0];
    const last = range.items.at(-1);
    if (!first || !last) return { kind: "stale", reason: "the planned range is empty" };
    const conversationId = range.conversationId;
    const outcome = await this.database.withConversationLock(conversationId, async (tx): Promise<ApplyResult> => {
      // The row lock orders this write after a turn committing to the conversation right now (and before the next).
      const conversation = await tx.row("SELECT 1 AS found FROM conversations WHERE conversation_id = $1 FOR UPDATE", [conversationId]);
      if (!conversation) return { kind: "stale", reason: `conversation ${conversationId} no longer exists` };
      const rows = await tx.rows<RangeRow>(
        `SELECT ordinal, message_id, summary_id, token_count FROM context_items
         WHERE conversation_id = $1 AND ordinal BETWEEN $2 AND $3 ORDER BY ordinal`,
        [conversationId, first.ordinal, last.ordinal],
      );
      const mismatch = describeMismatch(range, rows, sources);
      if (mismatch) return { kind: "stale", reason: mismatch };

      const inserted = await tx.row<{ id: number }>(
        `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count,
           earliest_at, latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
        [
          draft.summaryId, conversationId, draft.kind, draft.depth, toPgText(draft.content), draft.tokenCount, draft.sourceTokenCount,
          draft.earliestAt, draft.latestAt, draft.descendantCount, draft.sourceMessageCount, draft.seqStart, draft.seqEnd,
          JSON.stringify(draft.fileIds), draft.level, draft.createdAt,
        ],
      );
      const summaryRowId = inserted!.id;
      // The sources are exactly the rows just checked, under the same locks: linked by one statement.
      const link = sources === "messages"
        ? "INSERT INTO summary_messages (summary_id, message_id, ordinal)"
        : "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal)";
      const sourceColumn = sources === "messages" ? "message_id" : "summary_id";
      await tx.run(
        `${link} SELECT $1, ${sourceColumn}, row_number() OVER (ORDER BY ordinal) - 1 FROM context_items
         WHERE conversation_id = $2 AND ordinal BETWEEN $3 AND $4`,
        [summaryRowId, conversationId, first.ordinal, last.ordinal],
      );
      await tx.run("DELETE FROM context_items WHERE conversation_id = $1 AND ordinal BETWEEN $2 AND $3", [conversationId, first.ordinal, last.ordinal]);
      await tx.run(
        "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES ($1, $2, $3, $4, 0)",
        [conversationId, first.ordinal, summaryRowId, contextTokenCount],
      );
      const tokensRemoved = rows.reduce((total, row) => total + row.token_count, 0);
      const rawRemoved = sources === "messages" ? tokensRemoved : 0;
      await tx.run(
        `UPDATE conversations SET context_tokens = context_tokens - $1 + $2, context_raw_tokens = context_raw_tokens - $3,
           context_items = context_items - $4, updated_at = $5
         WHERE conversation_id = $6`,
        [tokensRemoved, contextTokenCount, rawRemoved, rows.length - 1, draft.createdAt, conversationId],
      );
      return { kind: "applied", summaryRowId, tokensRemoved, tokensAdded: contextTokenCount };
    });
    if (!outcome.locked) return { kind: "stale", reason: `another gateway holds the lock of conversation ${conversationId} (it is compacting or pruning it)` };
    return outcome.value;
  }
}

/** Why the stored range differs from the plan, or null when it is exactly what was planned. */
function describeMismatch(range: PlannedRange, rows: RangeRow[], sources: SourceKind): string | null {
  if (rows.length !== range.items.length) {
    return `the planned range changed: expected ${range.items.length} context items in ordinals ${range.items[0]?.ordinal}..${range.items.at(-1)?.ordinal}, found ${rows.length}`;
  }
  for (const [index, row] of rows.entries()) {
    const planned = range.items[index]!;
    if (row.ordinal !== planned.ordinal || row.message_id !== planned.messageId || row.summary_id !== planned.summaryRowId) {
      return `the planned range changed: context item at ordinal ${planned.ordinal} changed since the pass was planned`;
    }
    const isExpectedKind = sources === "messages" ? row.message_id !== null : row.summary_id !== null;
    if (!isExpectedKind) return `the planned range changed: context item at ordinal ${row.ordinal} is not a ${sources === "messages" ? "message" : "summary"}`;
  }
  return null;
}
