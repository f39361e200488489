/**
 * The PostgreSQL side of RepairStore (spec 027). Every repair and every undo is one transaction holding the
 * conversation's advisory lock, the one compaction holds: it re-reads the rows it was planned on, writes its undo
 * record (`summary_repairs`), then changes the summary, its context items and the conversation's counters together.
 * The lock is taken without waiting: while another gateway compacts or repairs the conversation, a repair fails at
 * once with LcmError("busy") and changes nothing. Summary text is written and read through toPgText/fromPgText.
 */
import { LcmError } from "../errors.js";
import type { ConversationId, SummaryKind, SummaryLevel } from "../records.js";
import type {
  DissolvePlan, FallbackSummary, RepairKind, RepairRecord, RepairStore, RepairTarget, RepairWrite, TextRepairPlan, UndoResult,
} from "../store/repair-store.js";
import { fromPgText, fromPgTextOrNull, type PgDatabase, toPgText, toPgTextOrNull } from "./pg-database.js";
import type { PgQueryable } from "./pg-queryable.js";

/** Moves context ordinals out of the way in two steps (a one-step shift would collide with its own primary key). */
const ORDINAL_PARKING = 2 ** 50;

const SUMMARY_COLUMNS = "id, summary_id, conversation_id, kind, depth, content, token_count, level, written_by";

interface SummaryRow {
  id: number;
  summary_id: string;
  conversation_id: number;
  kind: SummaryKind;
  depth: number;
  content: string;
  token_count: number;
  level: SummaryLevel;
  written_by: string | null;
}

interface ItemRow {
  ordinal: number;
  token_count: number;
  flags: number;
}

/** What a text repair replaced and wrote (the same record as SQLite's: a database moved between backends undoes alike). */
interface TextState {
  content: string;
  tokenCount: number;
  level: SummaryLevel;
  writtenBy: string | null;
  contextItems: { ordinal: number; tokenCount: number }[];
}

interface DissolveBefore {
  item: { ordinal: number; tokenCount: number; flags: number };
}
interface DissolveAfter {
  items: { ordinal: number; summaryRowId: number; summaryId: string; tokenCount: number }[];
  shift: number;
}

interface RepairRow {
  repair_id: number;
  conversation_id: number;
  summary_id: string;
  kind: RepairKind;
  created_at: number;
  detail: string;
  before: string;
  after: string;
  undone_at: number | null;
}

export class PgRepairStore implements RepairStore {
  constructor(private readonly database: PgDatabase) {}

  async repairTarget(summaryId: string): Promise<RepairTarget | null> {
    const row = await this.database.row<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM summaries WHERE summary_id = $1`, [toPgText(summaryId)]);
    if (!row) return null;
    const summary = fromRow(row);
    const items = await itemsOf(this.database, summary.conversation_id, summary.id);
    return {
      rowId: summary.id, summaryId: summary.summary_id, conversationId: summary.conversation_id, kind: summary.kind, depth: summary.depth,
      content: summary.content, tokenCount: summary.token_count, level: summary.level, writtenBy: summary.written_by,
      contextOrdinals: items.map((item) => item.ordinal), contextTokenCount: items[0]?.token_count ?? null,
    };
  }

  async applyText(plan: TextRepairPlan): Promise<RepairWrite> {
    return this.locked(plan.target.conversationId, async (tx): Promise<RepairWrite> => {
      const { target } = plan;
      const row = await summaryRow(tx, "id", target.rowId);
      if (!row || row.conversation_id !== target.conversationId) return { kind: "stale", reason: `summary ${target.summaryId} is no longer stored` };
      if (row.content !== target.content || row.level !== target.level || row.token_count !== target.tokenCount) {
        return { kind: "stale", reason: `summary ${target.summaryId} changed since the repair was planned; preview it again` };
      }
      const items = await itemsOf(tx, row.conversation_id, row.id);
      const before: TextState = {
        content: row.content, tokenCount: row.token_count, level: row.level, writtenBy: row.written_by,
        contextItems: items.map((item) => ({ ordinal: item.ordinal, tokenCount: item.token_count })),
      };
      const after: TextState = {
        content: plan.content, tokenCount: plan.tokenCount, level: plan.level, writtenBy: plan.writtenBy,
        contextItems: items.map((item) => ({ ordinal: item.ordinal, tokenCount: plan.contextTokenCount })),
      };
      const repairId = await record(tx, row, plan.kind, plan.detail, before, after, plan.now);
      await writeText(tx, row, after);
      return { kind: "applied", repairId };
    });
  }

  async applyDissolve(plan: DissolvePlan): Promise<RepairWrite> {
    return this.locked(plan.target.conversationId, async (tx): Promise<RepairWrite> => {
      const { target } = plan;
      const row = await summaryRow(tx, "id", target.rowId);
      if (!row || row.kind !== "condensed" || row.conversation_id !== target.conversationId) {
        return { kind: "stale", reason: `summary ${target.summaryId} is no longer a stored condensed summary` };
      }
      const items = await itemsOf(tx, row.conversation_id, row.id);
      const item = items[0];
      if (!item || items.length !== 1) {
        return { kind: "stale", reason: `summary ${target.summaryId} is not in the context (it was condensed into another); dissolve that one` };
      }
      const parents = (await tx.rows<{ parent_summary_id: number }>(
        "SELECT parent_summary_id FROM summary_parents WHERE summary_id = $1 ORDER BY ordinal", [row.id],
      )).map((link) => link.parent_summary_id);
      if (parents.join(",") !== plan.parents.map((parent) => parent.rowId).join(",")) {
        return { kind: "stale", reason: `the parents of ${target.summaryId} changed since the repair was planned` };
      }
      const next = (await tx.row<{ ordinal: number | null }>(
        "SELECT min(ordinal) AS ordinal FROM context_items WHERE conversation_id = $1 AND ordinal > $2", [row.conversation_id, item.ordinal],
      ))?.ordinal ?? null;
      const room = next === null ? Number.POSITIVE_INFINITY : next - item.ordinal;
      const shift = Math.max(0, plan.parents.length - room);
      await shiftAfter(tx, row.conversation_id, item.ordinal, shift);
      await tx.run("DELETE FROM context_items WHERE conversation_id = $1 AND ordinal = $2", [row.conversation_id, item.ordinal]);
      const placed = plan.parents.map((parent, index) => ({
        ordinal: item.ordinal + index, summaryRowId: parent.rowId, summaryId: parent.summaryId, tokenCount: parent.contextTokenCount,
      }));
      for (const parent of placed) {
        await tx.run(
          "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES ($1, $2, $3, $4, 0)",
          [row.conversation_id, parent.ordinal, parent.summaryRowId, parent.tokenCount],
        );
      }
      const added = placed.reduce((total, parent) => total + parent.tokenCount, 0);
      await tx.run(
        "UPDATE conversations SET context_tokens = context_tokens + $1, context_items = context_items + $2 WHERE conversation_id = $3",
        [added - item.token_count, placed.length - 1, row.conversation_id],
      );
      const before: DissolveBefore = { item: { ordinal: item.ordinal, tokenCount: item.token_count, flags: item.flags } };
      const after: DissolveAfter = { items: placed, shift };
      return { kind: "applied", repairId: await record(tx, row, "dissolve", plan.detail, before, after, plan.now) };
    });
  }

  async undo(repairId: number, now: number): Promise<UndoResult> {
    const recorded = await this.getRepair(repairId);
    if (!recorded) return { kind: "refused", reason: `no repair ${repairId} is recorded (list them with \`lcm repair list\`)` };
    return this.locked(recorded.conversationId, async (tx): Promise<UndoResult> => {
      const found = await tx.row<RepairRow>("SELECT * FROM summary_repairs WHERE repair_id = $1 FOR UPDATE", [repairId]);
      if (!found) return { kind: "refused", reason: `no repair ${repairId} is recorded (list them with \`lcm repair list\`)` };
      const repair = toRepair(found);
      if (repair.undoneAt !== null) return { kind: "refused", reason: `repair ${repairId} was already undone` };
      const later = await tx.row<{ repair_id: number }>(
        "SELECT repair_id FROM summary_repairs WHERE conversation_id = $1 AND repair_id > $2 AND undone_at IS NULL ORDER BY repair_id DESC LIMIT 1",
        [repair.conversationId, repairId],
      );
      if (later) return { kind: "refused", reason: `repair ${later.repair_id} of the same conversation came later: undo it first` };
      const row = await summaryRow(tx, "summary_id", repair.summaryId);
      if (!row) return { kind: "refused", reason: `summary ${repair.summaryId} is no longer stored` };
      const refusal = repair.kind === "dissolve"
        ? await undoDissolve(tx, row, repair.before as unknown as DissolveBefore, repair.after as unknown as DissolveAfter)
        : await undoText(tx, row, repair.before as unknown as TextState, repair.after as unknown as TextState);
      if (refusal) return { kind: "refused", reason: refusal };
      await tx.run("UPDATE summary_repairs SET undone_at = $1 WHERE repair_id = $2", [now, repairId]);
      return { kind: "undone", repair: { ...repair, undoneAt: now } };
    });
  }

  async getRepair(repairId: number): Promise<RepairRecord | null> {
    const row = await this.database.row<RepairRow>("SELECT * FROM summary_repairs WHERE repair_id = $1", [repairId]);
    return row ? toRepair(row) : null;
  }

  async listRepairs(filter: { conversationId?: ConversationId; limit: number }): Promise<RepairRecord[]> {
    const rows = filter.conversationId === undefined
      ? await this.database.rows<RepairRow>("SELECT * FROM summary_repairs ORDER BY repair_id DESC LIMIT $1", [filter.limit])
      : await this.database.rows<RepairRow>(
          "SELECT * FROM summary_repairs WHERE conversation_id = $1 ORDER BY repair_id DESC LIMIT $2", [filter.conversationId, filter.limit],
        );
    return rows.map(toRepair);
  }

  async summaryWriters(conversationId: ConversationId): Promise<Map<string, string>> {
    const rows = await this.database.rows<{ summary_id: string; written_by: string }>(
      "SELECT summary_id, written_by FROM summaries WHERE conversation_id = $1 AND written_by IS NOT NULL", [conversationId],
    );
    return new Map(rows.map((row) => [fromPgText(row.summary_id), fromPgText(row.written_by)]));
  }

  async fallbackSummaries(filter: { conversationId?: ConversationId; limit: number }): Promise<FallbackSummary[]> {
    const rows = filter.conversationId === undefined
      ? await this.database.rows<{ summary_id: string; conversation_id: number; depth: number }>(
          "SELECT summary_id, conversation_id, depth FROM summaries WHERE level = 'fallback' ORDER BY id LIMIT $1", [filter.limit],
        )
      : await this.database.rows<{ summary_id: string; conversation_id: number; depth: number }>(
          "SELECT summary_id, conversation_id, depth FROM summaries WHERE level = 'fallback' AND conversation_id = $1 ORDER BY id LIMIT $2",
          [filter.conversationId, filter.limit],
        );
    return rows.map((row) => ({ summaryId: fromPgText(row.summary_id), conversationId: row.conversation_id, depth: row.depth }));
  }

  /** Runs `body` holding the conversation's lock; fails at once with "busy" when another gateway holds it. */
  private async locked<T>(conversationId: ConversationId, body: (tx: PgQueryable) => Promise<T>): Promise<T> {
    const result = await this.database.withConversationLock(conversationId, body);
    if (!result.locked) {
      throw new LcmError("busy", `Conversation ${conversationId} is busy: another gateway is compacting or repairing it; nothing was changed. Retry in a moment.`,
        { conversationId });
    }
    return result.value;
  }
}

async function undoText(tx: PgQueryable, row: SummaryRow, before: TextState, after: TextState): Promise<string | null> {
  if (row.content !== after.content || row.level !== after.level || row.token_count !== after.tokenCount || row.written_by !== after.writtenBy) {
    return `summary ${row.summary_id} changed since the repair; nothing was undone`;
  }
  await writeText(tx, row, before);
  return null;
}

/** Writes a summary's text state: the row, the cost of each context item showing it, the conversation's total. */
async function writeText(tx: PgQueryable, row: SummaryRow, state: TextState): Promise<void> {
  await tx.run(
    "UPDATE summaries SET content = $1, token_count = $2, level = $3, written_by = $4 WHERE id = $5",
    [toPgText(state.content), state.tokenCount, state.level, toPgTextOrNull(state.writtenBy), row.id],
  );
  const wanted = new Map(state.contextItems.map((item) => [item.ordinal, item.tokenCount]));
  let delta = 0;
  for (const item of await itemsOf(tx, row.conversation_id, row.id)) {
    const tokenCount = wanted.get(item.ordinal);
    if (tokenCount === undefined || tokenCount === item.token_count) continue;
    await tx.run("UPDATE context_items SET token_count = $1 WHERE conversation_id = $2 AND ordinal = $3", [tokenCount, row.conversation_id, item.ordinal]);
    delta += tokenCount - item.token_count;
  }
  if (delta !== 0) await tx.run("UPDATE conversations SET context_tokens = context_tokens + $1 WHERE conversation_id = $2", [delta, row.conversation_id]);
}

async function undoDissolve(tx: PgQueryable, row: SummaryRow, before: DissolveBefore, after: DissolveAfter): Promise<string | null> {
  const first = after.items[0];
  const last = after.items.at(-1);
  if (!first || !last) return "the repair record holds no context items";
  const current = await tx.rows<{ ordinal: number; summary_id: number | null; token_count: number }>(
    "SELECT ordinal, summary_id, token_count FROM context_items WHERE conversation_id = $1 AND ordinal BETWEEN $2 AND $3 ORDER BY ordinal",
    [row.conversation_id, first.ordinal, last.ordinal],
  );
  const same = current.length === after.items.length && current.every((item, index) =>
    item.ordinal === after.items[index]!.ordinal && item.summary_id === after.items[index]!.summaryRowId && item.token_count === after.items[index]!.tokenCount);
  if (!same) return `the context around ${row.summary_id} changed since it was dissolved (compacted again?); nothing was undone`;
  await tx.run("DELETE FROM context_items WHERE conversation_id = $1 AND ordinal BETWEEN $2 AND $3", [row.conversation_id, first.ordinal, last.ordinal]);
  await tx.run(
    "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES ($1, $2, $3, $4, $5)",
    [row.conversation_id, before.item.ordinal, row.id, before.item.tokenCount, before.item.flags],
  );
  await shiftAfter(tx, row.conversation_id, before.item.ordinal, -after.shift);
  const removed = after.items.reduce((total, item) => total + item.tokenCount, 0);
  await tx.run(
    "UPDATE conversations SET context_tokens = context_tokens + $1, context_items = context_items - $2 WHERE conversation_id = $3",
    [before.item.tokenCount - removed, after.items.length - 1, row.conversation_id],
  );
  return null;
}

/**
 * Moves every context item after `ordinal` by `shift` (either way), through parking ordinals: PostgreSQL checks the
 * primary key row by row during an UPDATE, so the items first move far above every ordinal, then back down.
 */
async function shiftAfter(tx: PgQueryable, conversationId: number, ordinal: number, shift: number): Promise<void> {
  if (shift === 0) return;
  const from = shift > 0 ? ordinal : ordinal - shift;
  await tx.run("UPDATE context_items SET ordinal = ordinal + $1 WHERE conversation_id = $2 AND ordinal > $3", [ORDINAL_PARKING + shift, conversationId, from]);
  await tx.run("UPDATE context_items SET ordinal = ordinal - $1 WHERE conversation_id = $2 AND ordinal > $3", [ORDINAL_PARKING, conversationId, ORDINAL_PARKING / 2]);
}

async function record(
  tx: PgQueryable, row: SummaryRow, kind: RepairKind, detail: Record<string, unknown>, before: object, after: object, now: number,
): Promise<number> {
  // JSON.stringify writes a NUL as \u0000: the records need no escaping of their own.
  const inserted = await tx.row<{ repair_id: number }>(
    `INSERT INTO summary_repairs (conversation_id, summary_id, kind, created_at, detail, before, after)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING repair_id`,
    [row.conversation_id, toPgText(row.summary_id), kind, now, JSON.stringify(detail), JSON.stringify(before), JSON.stringify(after)],
  );
  return inserted!.repair_id;
}

/** The summary by row id or summary id, locked against a concurrent writer for the rest of the transaction. */
async function summaryRow(tx: PgQueryable, by: "id" | "summary_id", key: number | string): Promise<SummaryRow | null> {
  const row = await tx.row<SummaryRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM summaries WHERE ${by === "id" ? "id" : "summary_id"} = $1 FOR UPDATE`,
    [typeof key === "string" ? toPgText(key) : key],
  );
  return row ? fromRow(row) : null;
}

function fromRow(row: SummaryRow): SummaryRow {
  return { ...row, summary_id: fromPgText(row.summary_id), content: fromPgText(row.content), written_by: fromPgTextOrNull(row.written_by) };
}

async function itemsOf(database: PgQueryable, conversationId: number, summaryRowId: number): Promise<ItemRow[]> {
  return database.rows<ItemRow>(
    "SELECT ordinal, token_count, flags FROM context_items WHERE conversation_id = $1 AND summary_id = $2 ORDER BY ordinal",
    [conversationId, summaryRowId],
  );
}

function toRepair(row: RepairRow): RepairRecord {
  return {
    repairId: row.repair_id, conversationId: row.conversation_id, summaryId: fromPgText(row.summary_id), kind: row.kind,
    createdAt: row.created_at, undoneAt: row.undone_at,
    detail: JSON.parse(row.detail) as Record<string, unknown>,
    before: JSON.parse(row.before) as Record<string, unknown>,
    after: JSON.parse(row.after) as Record<string, unknown>,
  };
}
