/**
 * The SQLite side of RepairStore. Every repair is one write transaction that re-reads the rows it was planned on,
 * writes its undo record (`summary_repairs`: the values it replaces and the ones it writes), then changes the
 * summary, its context items and the conversation's counters together, and re-indexes a replaced text. Undo checks
 * that the rows still hold what the repair wrote before it puts back what was there.
 */
import type { Database } from "./database.js";
import type { ConversationId, SummaryKind, SummaryLevel } from "../records.js";
import type {
  DissolvePlan, FallbackSummary, RepairKind, RepairRecord, RepairStore, RepairTarget, RepairWrite, TextRepairPlan, UndoResult,
} from "../store/repair-store.js";
import { SqliteSearchIndex } from "./sqlite-search-index.js";

/** Moves context ordinals out of the way in two steps (a one-step shift would collide with its own primary key). */
const ORDINAL_PARKING = 2 ** 50;

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

/** What a text repair replaced and wrote. */
interface TextState {
  content: string;
  tokenCount: number;
  level: SummaryLevel;
  writtenBy: string | null;
  contextItems: { ordinal: number; tokenCount: number }[];
}

/** What a dissolve replaced (the summary's item) and wrote (its parents' items, and how far later items moved). */
interface DissolveBefore {
  item: { ordinal: number; tokenCount: number; flags: number };
}
interface DissolveAfter {
  items: { ordinal: number; summaryRowId: number; summaryId: string; tokenCount: number }[];
  shift: number;
}

export class SqliteRepairStore implements RepairStore {
  private readonly index: SqliteSearchIndex;

  constructor(private readonly db: Database) {
    this.index = new SqliteSearchIndex(db);
  }

  async repairTarget(summaryId: string): Promise<RepairTarget | null> {
    const row = this.db.get<SummaryRow>(
      "SELECT id, summary_id, conversation_id, kind, depth, content, token_count, level, written_by FROM summaries WHERE summary_id = ?",
      summaryId,
    );
    if (!row) return null;
    const items = this.itemsOf(row.conversation_id, row.id);
    return {
      rowId: row.id, summaryId: row.summary_id, conversationId: row.conversation_id, kind: row.kind, depth: row.depth,
      content: row.content, tokenCount: row.token_count, level: row.level, writtenBy: row.written_by,
      contextOrdinals: items.map((item) => item.ordinal), contextTokenCount: items[0]?.token_count ?? null,
    };
  }

  async applyText(plan: TextRepairPlan): Promise<RepairWrite> {
    const added: string[] = [];
    const result = await this.db.write((): RepairWrite => {
      const { target } = plan;
      const row = this.summaryRow(target.rowId);
      if (!row) return { kind: "stale", reason: `summary ${target.summaryId} is no longer stored` };
      if (row.content !== target.content || row.level !== target.level || row.token_count !== target.tokenCount) {
        return { kind: "stale", reason: `summary ${target.summaryId} changed since the repair was planned; preview it again` };
      }
      const items = this.itemsOf(row.conversation_id, row.id);
      const before: TextState = {
        content: row.content, tokenCount: row.token_count, level: row.level, writtenBy: row.written_by,
        contextItems: items.map((item) => ({ ordinal: item.ordinal, tokenCount: item.token_count })),
      };
      const after: TextState = {
        content: plan.content, tokenCount: plan.tokenCount, level: plan.level, writtenBy: plan.writtenBy,
        contextItems: items.map((item) => ({ ordinal: item.ordinal, tokenCount: plan.contextTokenCount })),
      };
      const repairId = this.record(row, plan.kind, plan.detail, before, after, plan.now);
      this.writeText(row, after, added);
      return { kind: "applied", repairId };
    });
    this.index.committedWords(added);
    return result;
  }

  async applyDissolve(plan: DissolvePlan): Promise<RepairWrite> {
    return this.db.write((): RepairWrite => {
      const { target } = plan;
      const row = this.summaryRow(target.rowId);
      if (!row || row.kind !== "condensed") return { kind: "stale", reason: `summary ${target.summaryId} is no longer a stored condensed summary` };
      const items = this.itemsOf(row.conversation_id, row.id);
      const item = items[0];
      if (!item || items.length !== 1) {
        return { kind: "stale", reason: `summary ${target.summaryId} is not in the context (it was condensed into another); dissolve that one` };
      }
      const parents = this.db.all<{ parent_summary_id: number }>(
        "SELECT parent_summary_id FROM summary_parents WHERE summary_id = ? ORDER BY ordinal", row.id,
      ).map((link) => link.parent_summary_id);
      if (parents.join(",") !== plan.parents.map((parent) => parent.rowId).join(",")) {
        return { kind: "stale", reason: `the parents of ${target.summaryId} changed since the repair was planned` };
      }
      const next = this.db.get<{ ordinal: number | null }>(
        "SELECT min(ordinal) AS ordinal FROM context_items WHERE conversation_id = ? AND ordinal > ?", row.conversation_id, item.ordinal,
      )?.ordinal ?? null;
      const room = next === null ? Number.POSITIVE_INFINITY : next - item.ordinal;
      const shift = Math.max(0, plan.parents.length - room);
      this.shiftAfter(row.conversation_id, item.ordinal, shift);
      this.db.run("DELETE FROM context_items WHERE conversation_id = ? AND ordinal = ?", row.conversation_id, item.ordinal);
      const placed = plan.parents.map((parent, index) => ({
        ordinal: item.ordinal + index, summaryRowId: parent.rowId, summaryId: parent.summaryId, tokenCount: parent.contextTokenCount,
      }));
      for (const parent of placed) {
        this.db.run(
          "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES (?, ?, ?, ?, 0)",
          row.conversation_id, parent.ordinal, parent.summaryRowId, parent.tokenCount,
        );
      }
      const added = placed.reduce((total, parent) => total + parent.tokenCount, 0);
      this.db.run(
        "UPDATE conversations SET context_tokens = context_tokens + ?, context_items = context_items + ? WHERE conversation_id = ?",
        added - item.token_count, placed.length - 1, row.conversation_id,
      );
      const before: DissolveBefore = { item: { ordinal: item.ordinal, tokenCount: item.token_count, flags: item.flags } };
      const after: DissolveAfter = { items: placed, shift };
      return { kind: "applied", repairId: this.record(row, "dissolve", plan.detail, before, after, plan.now) };
    });
  }

  async undo(repairId: number, now: number): Promise<UndoResult> {
    const added: string[] = [];
    const result = await this.db.write((): UndoResult => {
      const repair = this.readRepair(repairId);
      if (!repair) return { kind: "refused", reason: `no repair ${repairId} is recorded (list them with \`lcm repair list\`)` };
      if (repair.undoneAt !== null) return { kind: "refused", reason: `repair ${repairId} was already undone` };
      const later = this.db.get<{ repair_id: number }>(
        "SELECT repair_id FROM summary_repairs WHERE conversation_id = ? AND repair_id > ? AND undone_at IS NULL ORDER BY repair_id DESC LIMIT 1",
        repair.conversationId, repairId,
      );
      if (later) return { kind: "refused", reason: `repair ${later.repair_id} of the same conversation came later: undo it first` };
      const row = this.db.get<SummaryRow>(
        "SELECT id, summary_id, conversation_id, kind, depth, content, token_count, level, written_by FROM summaries WHERE summary_id = ?",
        repair.summaryId,
      );
      if (!row) return { kind: "refused", reason: `summary ${repair.summaryId} is no longer stored` };
      const refusal = repair.kind === "dissolve"
        ? this.undoDissolve(row, repair.before as unknown as DissolveBefore, repair.after as unknown as DissolveAfter)
        : this.undoText(row, repair.before as unknown as TextState, repair.after as unknown as TextState, added);
      if (refusal) return { kind: "refused", reason: refusal };
      this.db.run("UPDATE summary_repairs SET undone_at = ? WHERE repair_id = ?", now, repairId);
      return { kind: "undone", repair: { ...repair, undoneAt: now } };
    });
    this.index.committedWords(added);
    return result;
  }

  async getRepair(repairId: number): Promise<RepairRecord | null> {
    return this.readRepair(repairId);
  }

  async listRepairs(filter: { conversationId?: ConversationId; limit: number }): Promise<RepairRecord[]> {
    const rows = filter.conversationId === undefined
      ? this.db.all<RepairRow>("SELECT * FROM summary_repairs ORDER BY repair_id DESC LIMIT ?", filter.limit)
      : this.db.all<RepairRow>(
          "SELECT * FROM summary_repairs WHERE conversation_id = ? ORDER BY repair_id DESC LIMIT ?", filter.conversationId, filter.limit,
        );
    return rows.map(toRepair);
  }

  async summaryWriters(conversationId: ConversationId): Promise<Map<string, string>> {
    return new Map(this.db.tuples<[string, string]>(
      "SELECT summary_id, written_by FROM summaries WHERE conversation_id = ? AND written_by IS NOT NULL", conversationId,
    ));
  }

  async fallbackSummaries(filter: { conversationId?: ConversationId; limit: number }): Promise<FallbackSummary[]> {
    const rows = filter.conversationId === undefined
      ? this.db.all<{ summary_id: string; conversation_id: number; depth: number }>(
          "SELECT summary_id, conversation_id, depth FROM summaries WHERE level = 'fallback' ORDER BY id LIMIT ?", filter.limit,
        )
      : this.db.all<{ summary_id: string; conversation_id: number; depth: number }>(
          "SELECT summary_id, conversation_id, depth FROM summaries WHERE level = 'fallback' AND conversation_id = ? ORDER BY id LIMIT ?",
          filter.conversationId, filter.limit,
        );
    return rows.map((row) => ({ summaryId: row.summary_id, conversationId: row.conversation_id, depth: row.depth }));
  }

  private undoText(row: SummaryRow, before: TextState, after: TextState, added: string[]): string | null {
    if (row.content !== after.content || row.level !== after.level || row.token_count !== after.tokenCount || row.written_by !== after.writtenBy) {
      return `summary ${row.summary_id} changed since the repair; nothing was undone`;
    }
    this.writeText(row, before, added);
    return null;
  }

  /** Writes a summary's text state: the row, the cost of each context item showing it, the conversation's total. */
  private writeText(row: SummaryRow, state: TextState, added: string[]): void {
    this.db.run(
      "UPDATE summaries SET content = ?, token_count = ?, level = ?, written_by = ? WHERE id = ?",
      state.content, state.tokenCount, state.level, state.writtenBy, row.id,
    );
    const wanted = new Map(state.contextItems.map((item) => [item.ordinal, item.tokenCount]));
    let delta = 0;
    for (const item of this.itemsOf(row.conversation_id, row.id)) {
      const tokenCount = wanted.get(item.ordinal);
      if (tokenCount === undefined || tokenCount === item.token_count) continue;
      this.db.run("UPDATE context_items SET token_count = ? WHERE conversation_id = ? AND ordinal = ?", tokenCount, row.conversation_id, item.ordinal);
      delta += tokenCount - item.token_count;
    }
    if (delta !== 0) this.db.run("UPDATE conversations SET context_tokens = context_tokens + ? WHERE conversation_id = ?", delta, row.conversation_id);
    this.index.reindexSummaryText(row.id, added);
  }

  private undoDissolve(row: SummaryRow, before: DissolveBefore, after: DissolveAfter): string | null {
    const first = after.items[0];
    const last = after.items.at(-1);
    if (!first || !last) return "the repair record holds no context items";
    const current = this.db.all<{ ordinal: number; summary_id: number | null; token_count: number }>(
      "SELECT ordinal, summary_id, token_count FROM context_items WHERE conversation_id = ? AND ordinal BETWEEN ? AND ? ORDER BY ordinal",
      row.conversation_id, first.ordinal, last.ordinal,
    );
    const same = current.length === after.items.length && current.every((item, index) =>
      item.ordinal === after.items[index]!.ordinal && item.summary_id === after.items[index]!.summaryRowId && item.token_count === after.items[index]!.tokenCount);
    if (!same) return `the context around ${row.summary_id} changed since it was dissolved (compacted again?); nothing was undone`;
    this.db.run("DELETE FROM context_items WHERE conversation_id = ? AND ordinal BETWEEN ? AND ?", row.conversation_id, first.ordinal, last.ordinal);
    this.db.run(
      "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES (?, ?, ?, ?, ?)",
      row.conversation_id, before.item.ordinal, row.id, before.item.tokenCount, before.item.flags,
    );
    this.shiftAfter(row.conversation_id, before.item.ordinal, -after.shift);
    const removed = after.items.reduce((total, item) => total + item.tokenCount, 0);
    this.db.run(
      "UPDATE conversations SET context_tokens = context_tokens + ?, context_items = context_items - ? WHERE conversation_id = ?",
      before.item.tokenCount - removed, after.items.length - 1, row.conversation_id,
    );
    return null;
  }

  /** Moves every context item after `ordinal` by `shift` (either way), through parking ordinals. */
  private shiftAfter(conversationId: number, ordinal: number, shift: number): void {
    if (shift === 0) return;
    const from = shift > 0 ? ordinal : ordinal - shift;
    this.db.run(
      "UPDATE context_items SET ordinal = ordinal + ? WHERE conversation_id = ? AND ordinal > ?", ORDINAL_PARKING + shift, conversationId, from,
    );
    this.db.run(
      "UPDATE context_items SET ordinal = ordinal - ? WHERE conversation_id = ? AND ordinal > ?", ORDINAL_PARKING, conversationId, ORDINAL_PARKING / 2,
    );
  }

  private record(row: SummaryRow, kind: RepairKind, detail: Record<string, unknown>, before: object, after: object, now: number): number {
    return this.db.run(
      "INSERT INTO summary_repairs (conversation_id, summary_id, kind, created_at, detail, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)",
      row.conversation_id, row.summary_id, kind, now, JSON.stringify(detail), JSON.stringify(before), JSON.stringify(after),
    ).lastInsertRowid;
  }

  private summaryRow(rowId: number): SummaryRow | undefined {
    return this.db.get<SummaryRow>(
      "SELECT id, summary_id, conversation_id, kind, depth, content, token_count, level, written_by FROM summaries WHERE id = ?", rowId,
    );
  }

  private itemsOf(conversationId: number, summaryRowId: number): ItemRow[] {
    return this.db.all<ItemRow>(
      "SELECT ordinal, token_count, flags FROM context_items WHERE conversation_id = ? AND summary_id = ? ORDER BY ordinal",
      conversationId, summaryRowId,
    );
  }

  private readRepair(repairId: number): RepairRecord | null {
    const row = this.db.get<RepairRow>("SELECT * FROM summary_repairs WHERE repair_id = ?", repairId);
    return row ? toRepair(row) : null;
  }
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

function toRepair(row: RepairRow): RepairRecord {
  return {
    repairId: row.repair_id, conversationId: row.conversation_id, summaryId: row.summary_id, kind: row.kind,
    createdAt: row.created_at, undoneAt: row.undone_at,
    detail: JSON.parse(row.detail) as Record<string, unknown>,
    before: JSON.parse(row.before) as Record<string, unknown>,
    after: JSON.parse(row.after) as Record<string, unknown>,
  };
}
