/**
 * The Assembler builds the model's context for one turn from a conversation's context items: summaries first
 * (as XML user messages), then raw messages, in chronological order, never over the budget (spec 011). Items are
 * taken newest-first while they fit, and the walk stops at the first that does not, so the result is one
 * contiguous suffix of the context; a tool call and its results are one unit, kept or left out together. When
 * even the newest unit alone is larger than the budget, it is shown in a bounded form (the head and tail of its
 * text with a note that the rest is stored) rather than not at all. Items are read newest-first in pages with
 * their stored token counts, each page once per call (newest-context-items.ts), so the cost follows the assembled
 * context, not the stored history. When older items are left out, the context starts with the memory floor
 * (memory-floor.ts, spec 023): the newest summary left out, shortened, and how to reach the rest, found by one store
 * read (ContextStore.olderContext); its room is kept out of the budget, or, when the budget is smaller than the
 * floor, is the caller's allowance beyond it.
 */
import type { TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import { ItemFlags, decodeMessage } from "../messages/message-codec.js";
import type { ContextItemRecord, ConversationId } from "../records.js";
import type { ContextStore, MessageStore, SummaryReadStore } from "../store/store.js";
import { boundUnit } from "./bounded-message.js";
import { buildMemoryFloor, MEMORY_FLOOR_TOKENS, type MemoryFloor } from "./memory-floor.js";
import { NewestContextItems } from "./newest-context-items.js";
import { summaryToMessage } from "./summary-message.js";
import { type Sized, repairToolPairing } from "./tool-pairing.js";

/**
 * Context items per read, sized so that one read most often covers the budget (on a server's backend each read is a
 * round trip): the first page as if an item cost TOKENS_PER_ITEM_GUESS (most cost more), the next ones for what is
 * left of the budget at the tokens per item read so far, with a quarter to spare; always MIN_PAGE_SIZE to PAGE_SIZE.
 */
const TOKENS_PER_ITEM_GUESS = 64;
const MIN_PAGE_SIZE = 64;
const PAGE_SIZE = 1_024;
/** Older items searched for the memory floor's summary (compaction keeps summaries near the context's end). */
const SUMMARY_SEARCH_ITEMS = 2 * PAGE_SIZE;

export interface AssemblerDeps {
  store: ContextStore & MessageStore & SummaryReadStore;
  tokens: TokenEstimator;
}

export interface AssembleRequest {
  conversationId: ConversationId;
  /** Most tokens the assembled messages may cost (by the plugin's estimate), but for the memory floor's allowance. */
  tokenBudget: number;
  /**
   * Show the memory floor when older items are left out: it costs at most `roomTokens` (at most MEMORY_FLOOR_TOKENS;
   * taken out of the budget when the budget holds it, beyond the budget otherwise). Absent: no floor.
   */
  memoryFloor?: { roomTokens: number; storedMessages: number };
}

export interface AssembledContext {
  messages: AgentMessage[];
  estimatedTokens: number;
  summaryCount: number;
  rawMessageCount: number;
  /** True when older context items were left out because they did not fit the budget. */
  evictedOlderItems: boolean;
  /** True when the newest unit was shown in a bounded form because it alone exceeds the budget. */
  boundedNewest: boolean;
  /** Per message (same order): its stored token count and what it renders (`lcm context`'s breakdown). */
  items: { tokens: number; isSummary: boolean; isFloor?: boolean }[];
  /** The memory floor at the start of the messages, when older items were left out (its cost is in estimatedTokens). */
  floor: Pick<MemoryFloor, "kind" | "tokens" | "summaryId"> | null;
}

export class Assembler {
  constructor(private readonly deps: AssemblerDeps) {}

  async assemble(request: AssembleRequest): Promise<AssembledContext> {
    const budget = Math.max(0, Math.floor(request.tokenBudget));
    const wanted = request.memoryFloor;
    const context = new NewestContextItems(this.deps.store, request.conversationId);
    let selection = await this.select(context, budget);
    let floor: MemoryFloor | null = null;
    let loading: Promise<Sized[]> | null = null;
    if (wanted && selection.olderLeftOut !== null) {
      const room = Math.max(0, Math.min(MEMORY_FLOOR_TOKENS, Math.floor(wanted.roomTokens)));
      // The floor's cost comes out of the budget when the budget holds it (beyond it otherwise, up to its room): what
      // it leaves is selected again, and the floor is rebuilt for what that leaves out, within the cost reserved.
      const first = await this.floorFor(request.conversationId, selection, wanted.storedMessages, room);
      if (first.tokens < budget) {
        selection = await this.select(context, budget - first.tokens);
        // The selection is loaded while its floor is built (on a server's backend, a round trip saved).
        loading = this.load([...selection.items].reverse());
        loading.catch(() => undefined);
        floor = await this.floorFor(request.conversationId, selection, wanted.storedMessages, first.tokens);
      } else {
        selection = { items: [], oversizedNewest: [], olderLeftOut: selection.newestLeftOut, newestLeftOut: selection.newestLeftOut };
        floor = first;
      }
    }
    let boundedNewest = false;
    let kept = repairToolPairing(await (loading ?? this.load([...selection.items].reverse())));
    if (kept.length === 0 && selection.oversizedNewest.length > 0) {
      // Nothing fits whole: show the newest unit bounded, if even that can be made to fit.
      const oversized = repairToolPairing(await this.load(selection.oversizedNewest.reverse()));
      const bounded = boundUnit(oversized, floor ? Math.max(0, budget - floor.tokens) : budget, this.deps.tokens);
      if (bounded) {
        kept = bounded;
        boundedNewest = true;
      } else if (wanted && !floor) {
        // Not even the newest unit can be shown: the floor stands for all of it.
        floor = await this.floorFor(request.conversationId, selection, wanted.storedMessages, Math.min(MEMORY_FLOOR_TOKENS, wanted.roomTokens));
      }
    }
    if (floor) kept = [{ message: floor.message, tokens: floor.tokens, isSummary: false, isFloor: true }, ...kept];
    const summaryCount = kept.filter((item) => item.isSummary).length;
    return {
      messages: kept.map((item) => item.message),
      estimatedTokens: kept.reduce((total, item) => total + item.tokens, 0),
      summaryCount,
      rawMessageCount: kept.length - summaryCount - (floor ? 1 : 0),
      evictedOlderItems: selection.newestLeftOut !== null,
      boundedNewest,
      items: kept.map((item) => ({ tokens: item.tokens, isSummary: item.isSummary, ...(item.isFloor ? { isFloor: true } : {}) })),
      floor: floor ? { kind: floor.kind, tokens: floor.tokens, summaryId: floor.summaryId } : null,
    };
  }

  /** The memory floor for what a selection leaves out, within `room` tokens. */
  private async floorFor(conversationId: ConversationId, selection: Selection, storedMessages: number, room: number): Promise<MemoryFloor> {
    const from = selection.olderLeftOut ?? selection.newestLeftOut;
    // One read for both (on a server's backend, one round trip; a raw history's search for a summary reads no pages).
    const older = from === null ? { newestAt: 0, newestSummary: null } : await this.deps.store.olderContext(conversationId, from, SUMMARY_SEARCH_ITEMS);
    return buildMemoryFloor({ storedMessages, summary: older.newestSummary, roomTokens: room, timestamp: older.newestAt, tokens: this.deps.tokens });
  }

  private async load(items: readonly ContextItemRecord[]): Promise<Sized[]> {
    const messageIds = items.flatMap((item) => (item.messageId === null ? [] : [item.messageId]));
    const summaryRowIds = items.flatMap((item) => (item.summaryRowId === null ? [] : [item.summaryRowId]));
    const [messages, summaries] = await Promise.all([
      this.deps.store.getMessages(messageIds),
      this.deps.store.getSummariesByRowIds(summaryRowIds),
    ]);
    const messagesById = new Map(messages.map((message) => [message.messageId, message]));
    const summariesById = new Map(summaries.map((summary) => [summary.rowId, summary]));
    const sized: Sized[] = [];
    for (const item of items) {
      if (item.summaryRowId !== null) {
        const summary = summariesById.get(item.summaryRowId);
        if (!summary) continue; // dangling item: reported by the integrity checker, never sent to the model
        sized.push({ message: summaryToMessage(summary), tokens: item.tokenCount, isSummary: true });
      } else if (item.messageId !== null) {
        const stored = messagesById.get(item.messageId);
        if (!stored) continue;
        sized.push({ message: normalizeForModel(decodeMessage(stored)), tokens: item.tokenCount, isSummary: false });
      }
    }
    return sized;
  }

  /**
   * Chooses the items, newest first, reading context items page by page: whole units while they fit. When the
   * newest unit alone does not fit, it is returned apart (`oversizedNewest`) for a bounded rendering.
   */
  private async select(context: NewestContextItems, budget: number): Promise<Selection> {
    const selected: ContextItemRecord[] = [];
    let unit: ContextItemRecord[] = [];
    let total = 0;
    let cursor: number | null = null;
    for (;;) {
      const pending = unit.reduce((sum, member) => sum + member.tokenCount, 0);
      const pageSize = pageSizeFor(budget - total - pending, selected.length + unit.length, total + pending);
      const page = await context.page(cursor, pageSize);
      for (const item of page) {
        cursor = item.ordinal;
        unit.push(item);
        // Tool results wait for the assistant message that called them: the unit is decided as a whole.
        if (item.flags & ItemFlags.toolResult) continue;
        const unitTokens = unit.reduce((sum, member) => sum + member.tokenCount, 0);
        if (total + unitTokens > budget) {
          if (selected.length > 0) return { items: selected, oversizedNewest: [], olderLeftOut: unit[0]!.ordinal, newestLeftOut: unit[0]!.ordinal };
          // The newest unit alone is too large (it may still be shown bounded): is anything older left out too?
          const [older] = await context.page(item.ordinal, 1);
          return { items: [], oversizedNewest: unit, olderLeftOut: older?.ordinal ?? null, newestLeftOut: unit[0]!.ordinal };
        }
        selected.push(...unit);
        total += unitTokens;
        unit = [];
      }
      if (page.length < pageSize) break;
    }
    // Results left in `unit` have no calling message in the context: orphans, never assembled.
    return { items: selected, oversizedNewest: [], olderLeftOut: null, newestLeftOut: null };
  }
}

/** Items to read next for `left` tokens of budget, after `items` items that cost `tokens` (module comment of PAGE_SIZE). */
function pageSizeFor(left: number, items: number, tokens: number): number {
  const perItem = items === 0 ? TOKENS_PER_ITEM_GUESS : Math.max(1, tokens / items);
  return Math.min(PAGE_SIZE, Math.max(MIN_PAGE_SIZE, Math.ceil((1.25 * Math.max(0, left)) / perItem)));
}

interface Selection {
  items: ContextItemRecord[];
  /** The newest unit, when it alone is larger than the budget (the rest of the selection is then empty). */
  oversizedNewest: ContextItemRecord[];
  /** The ordinal of the newest item left out that is older than the selection and the oversized unit (null: none). */
  olderLeftOut: number | null;
  /** The ordinal of the newest item left out, the oversized unit included (null when nothing was). */
  newestLeftOut: number | null;
}

/** Providers expect assistant content as a block array; older hosts may have stored a string. */
function normalizeForModel(message: AgentMessage): AgentMessage {
  if (message.role === "assistant" && typeof message.content === "string") {
    return { ...message, content: [{ type: "text", text: message.content }] };
  }
  return message;
}
