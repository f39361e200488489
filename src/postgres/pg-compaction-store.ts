/**
 * The PostgreSQL backend of the compaction store (sqlite/sqlite-compaction-store.ts ported). Several gateways may
 * compact one conversation: each apply is one transaction that first takes the conversation's advisory lock without
 * waiting (`pg_try_advisory_xact_lock`) and then its row lock, then in ONE statement re-checks the planned range and
 * only then writes the summary, its links, the swapped context item and the counters (a sweep makes hundreds of
 * applies: round trips, not rows, were their cost). Another gateway holding the lock, or a range that changed since
 * planning, writes nothing and answers "stale" saying which. The model call happens before, outside.
 *
 * A run holds its conversation's compaction lease (`leases`, table compaction_leases) from before its first model
 * call to its end, so two gateways do not summarize the same conversation at once. Taking it tries the advisory lock
 * too, and a fenced store's applies check the lease's fence while holding that lock: a lease taken over (after its
 * expiry) cannot change between the check and the write, and the old holder's apply answers "superseded".
 */
import type { ConversationId } from "../records.js";
import type {
  ApplyResult,
  CompactionItem,
  CompactionLease,
  CompactionLeases,
  CompactionStore,
  PlannedRange,
  SummaryDraft,
  SummarySources,
} from "../store/compaction-store.js";
import { type PgDatabase, toPgText } from "./pg-database.js";
import { LCM_LOCK_NAMESPACE, preparedStatement } from "./pg-queryable.js";

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
  readonly leases: CompactionLeases;

  /** `fence`: the lease this store's applies must still find (leases.fencedBy); null writes without one. */
  constructor(private readonly database: PgDatabase, private readonly fence: CompactionLease | null = null) {
    this.leases = {
      take: async (conversationId, holder, ttlMs) => {
        const row = await this.database.row<{ fence: number | null }>(TAKE_LEASE_SQL, [LCM_LOCK_NAMESPACE, conversationId, holder, ttlMs]);
        return row?.fence == null ? null : { conversationId, fence: row.fence };
      },
      release: async (lease) => {
        await this.database.run(RELEASE_LEASE_SQL, [lease.conversationId, lease.fence]);
      },
      fencedBy: (lease) => new PgCompactionStore(this.database, lease),
    };
  }

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

  /**
   * Four round trips whatever the range: BEGIN; both locks in one statement; the check and every write in one
   * statement (it starts after the locks, so it sees every commit before them); COMMIT. A range that changed writes
   * nothing, and is read again (under the same locks) only to say how it changed.
   */
  private async apply(range: PlannedRange, draft: SummaryDraft, contextTokenCount: number, sources: SourceKind): Promise<ApplyResult> {
    const first = range.items[0];
    const last = range.items.at(-1);
    if (!first || !last) return { kind: "stale", reason: "the planned range is empty" };
    const conversationId = range.conversationId;
    const fence = this.fence?.conversationId === conversationId ? this.fence.fence : null;
    if (this.fence && fence === null) return { kind: "stale", reason: `this run's lease is for conversation ${this.fence.conversationId}, not ${conversationId}` };
    const outcome = await this.database.transaction(async (tx): Promise<ApplyResult | null> => {
      // The advisory lock without waiting (another gateway compacting or pruning: stale at once), then the row lock,
      // which orders this write after a turn committing to the conversation right now (and before the next), and
      // whether the run's lease is still the conversation's (no lease: always).
      const locks = (await tx.row<{ locked: boolean; found: boolean; leased: boolean }>(LOCK_SQL, [LCM_LOCK_NAMESPACE, conversationId, fence]))!;
      if (!locks.locked) return null;
      if (!locks.found) return { kind: "stale", reason: `conversation ${conversationId} no longer exists` };
      if (!locks.leased) {
        return { kind: "superseded", reason: `the compaction lease of conversation ${conversationId} was taken over by another gateway after it expired` };
      }
      const written = (await tx.row<{ matched: boolean; summary_row_id: number | null; tokens_removed: number }>(
        sources === "messages" ? APPLY_LEAF_SQL : APPLY_CONDENSED_SQL,
        [
          conversationId, first.ordinal, last.ordinal, range.items.length,
          range.items.map((item) => item.ordinal), range.items.map((item) => item.messageId), range.items.map((item) => item.summaryRowId),
          contextTokenCount, draft.createdAt,
          draft.summaryId, draft.kind, draft.depth, toPgText(draft.content), draft.tokenCount, draft.sourceTokenCount,
          draft.earliestAt, draft.latestAt, draft.descendantCount, draft.sourceMessageCount, draft.seqStart, draft.seqEnd,
          JSON.stringify(draft.fileIds), draft.level,
        ],
      ))!;
      if (!written.matched || written.summary_row_id === null) {
        const rows = await tx.rows<RangeRow>(
          `SELECT ordinal, message_id, summary_id, token_count FROM context_items
           WHERE conversation_id = $1 AND ordinal BETWEEN $2 AND $3 ORDER BY ordinal`,
          [conversationId, first.ordinal, last.ordinal],
        );
        return { kind: "stale", reason: describeMismatch(range, rows, sources) ?? "the planned range changed while it was being written" };
      }
      return { kind: "applied", summaryRowId: written.summary_row_id, tokensRemoved: written.tokens_removed, tokensAdded: contextTokenCount };
    });
    return outcome ?? { kind: "stale", reason: `another gateway holds the lock of conversation ${conversationId} (it is compacting or pruning it)` };
  }
}

/**
 * The conversation's advisory lock (tried once, never waited for) and, when it was taken, its row lock and whether
 * the lease with fence $3 is still the conversation's (true when $3 is null: an apply without a lease).
 */
const LOCK_SQL = preparedStatement(`WITH advisory AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($1, $2) AS locked)
  SELECT advisory.locked, locked_row.conversation_id IS NOT NULL AS found,
      $3::bigint IS NULL OR EXISTS (SELECT 1 FROM compaction_leases WHERE conversation_id = $2 AND fence = $3) AS leased
    FROM advisory LEFT JOIN LATERAL (
      SELECT conversation_id FROM conversations WHERE conversation_id = $2 AND advisory.locked FOR UPDATE
    ) locked_row ON true`);

/**
 * Takes conversation $2's lease for holder $3 for $4 ms (by the server's clock, the same for every gateway): a new
 * row, or the row of a lease that has expired, with the next fence. Nothing when a live lease exists, the
 * conversation's advisory lock is held (a compaction apply or retention is writing it: leases change only under that
 * lock, so a fenced apply's check holds until its commit), or the conversation is gone. One statement: its own
 * transaction, which the lock lasts.
 */
const TAKE_LEASE_SQL = preparedStatement(`WITH advisory AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($1, $2) AS locked),
  taken AS (
    INSERT INTO compaction_leases AS lease (conversation_id, holder, fence, expires_at)
      SELECT conversations.conversation_id, $3, nextval('compaction_lease_fence'), clock_timestamp() + $4 * interval '1 millisecond'
        FROM advisory JOIN conversations ON conversations.conversation_id = $2 WHERE advisory.locked
    ON CONFLICT (conversation_id) DO UPDATE SET holder = EXCLUDED.holder, fence = EXCLUDED.fence, expires_at = EXCLUDED.expires_at
      WHERE lease.expires_at < clock_timestamp()
    RETURNING fence
  )
  SELECT (SELECT fence FROM taken) AS fence`);

const RELEASE_LEASE_SQL = preparedStatement("DELETE FROM compaction_leases WHERE conversation_id = $1 AND fence = $2");

/**
 * One statement: the stored range is compared with the plan ($5-$7, item by item, each of the expected kind); only
 * when it matches are the summary inserted, its sources linked in the planned order, the range's first item turned
 * into the summary's item and the rest deleted, and the counters moved. Returns whether it matched.
 */
function applySql(sources: SourceKind): string {
  const link = sources === "messages"
    ? "INSERT INTO summary_messages (summary_id, message_id, ordinal) SELECT summary.id, planned.message_id, planned.position - 1"
    : "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) SELECT summary.id, planned.summary_id, planned.position - 1";
  const expectedKind = sources === "messages" ? "stored.message_id IS NOT NULL" : "stored.summary_id IS NOT NULL";
  const rawRemoved = sources === "messages" ? "checked.tokens_removed" : "0";
  return `WITH planned AS (
      SELECT * FROM unnest($5::bigint[], $6::bigint[], $7::bigint[]) WITH ORDINALITY AS p (ordinal, message_id, summary_id, position)
    ), stored AS (
      SELECT ordinal, message_id, summary_id, token_count FROM context_items WHERE conversation_id = $1 AND ordinal BETWEEN $2 AND $3
    ), checked AS (
      SELECT (SELECT count(*) FROM stored) = $4 AND count(*) = $4 AS matched, coalesce(sum(stored.token_count), 0)::bigint AS tokens_removed
        FROM planned JOIN stored ON stored.ordinal = planned.ordinal
         AND stored.message_id IS NOT DISTINCT FROM planned.message_id AND stored.summary_id IS NOT DISTINCT FROM planned.summary_id
       WHERE ${expectedKind}
    ), summary AS (
      INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count,
        earliest_at, latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
      SELECT $10, $1, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $9 FROM checked WHERE checked.matched
      RETURNING id
    ), linked AS (
      ${link} FROM summary, planned
    ), removed AS (
      DELETE FROM context_items USING summary WHERE context_items.conversation_id = $1 AND context_items.ordinal > $2 AND context_items.ordinal <= $3
    ), replaced AS (
      UPDATE context_items SET message_id = NULL, summary_id = summary.id, token_count = $8, flags = 0
        FROM summary WHERE context_items.conversation_id = $1 AND context_items.ordinal = $2
    ), counters AS (
      UPDATE conversations SET context_tokens = context_tokens - checked.tokens_removed + $8,
        context_raw_tokens = context_raw_tokens - ${rawRemoved}, context_items = context_items - ($4 - 1), updated_at = $9
        FROM summary, checked WHERE conversations.conversation_id = $1
    )
    SELECT checked.matched, (SELECT id FROM summary) AS summary_row_id, checked.tokens_removed FROM checked`;
}

const APPLY_LEAF_SQL = preparedStatement(applySql("messages"));
const APPLY_CONDENSED_SQL = preparedStatement(applySql("summaries"));

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
