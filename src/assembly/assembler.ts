/**
 * The Assembler builds the model's context for one turn from a conversation's context items: summaries first
 * (as XML user messages), then raw messages, in chronological order, never over the budget (spec 011). Items are
 * taken newest-first while they fit, and the walk stops at the first that does not, so the result is one
 * contiguous suffix of the context; a tool call and its results are one unit, kept or left out together. When
 * even the newest unit alone is larger than the budget, it is shown in a bounded form (the head and tail of its
 * text with a note that the rest is stored) rather than not at all. Items are read newest-first in pages with
 * their stored token counts, so the cost follows the assembled context, not the stored history.
 */
import type { TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import { ItemFlags, decodeMessage } from "../messages/message-codec.js";
import type { ContextItemRecord, ConversationId } from "../records.js";
import type { ContextStore, MessageStore, SummaryReadStore } from "../store/store.js";
import { boundUnit } from "./bounded-message.js";
import { summaryToMessage } from "./summary-message.js";
import { type Sized, repairToolPairing } from "./tool-pairing.js";

/** Context items per read: the first page covers a typical turn, later pages are larger (fewer queries). */
const FIRST_PAGE_SIZE = 256;
const PAGE_SIZE = 1_024;

export interface AssemblerDeps {
  store: ContextStore & MessageStore & SummaryReadStore;
  tokens: TokenEstimator;
}

export interface AssembleRequest {
  conversationId: ConversationId;
  /** Most tokens the assembled messages may cost (by the plugin's estimate). */
  tokenBudget: number;
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
  /** Per message (same order): its stored token count and whether it renders a summary (`lcm context`'s breakdown). */
  items: { tokens: number; isSummary: boolean }[];
}

export class Assembler {
  constructor(private readonly deps: AssemblerDeps) {}

  async assemble(request: AssembleRequest): Promise<AssembledContext> {
    const budget = Math.max(0, Math.floor(request.tokenBudget));
    const selection = await this.select(request.conversationId, budget);
    const items = selection.items.reverse();
    const sized = await this.load(items);
    let boundedNewest = false;
    let kept = repairToolPairing(sized);
    if (kept.length === 0 && selection.oversizedNewest.length > 0) {
      // Nothing fits whole: show the newest unit bounded, if even that can be made to fit.
      const oversized = repairToolPairing(await this.load(selection.oversizedNewest.reverse()));
      const bounded = boundUnit(oversized, budget, this.deps.tokens);
      if (bounded) {
        kept = bounded;
        boundedNewest = true;
      }
    }
    const summaryCount = kept.filter((item) => item.isSummary).length;
    return {
      messages: kept.map((item) => item.message),
      estimatedTokens: kept.reduce((total, item) => total + item.tokens, 0),
      summaryCount,
      rawMessageCount: kept.length - summaryCount,
      evictedOlderItems: selection.leftOut,
      boundedNewest,
      items: kept.map((item) => ({ tokens: item.tokens, isSummary: item.isSummary })),
    };
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
  private async select(conversationId: ConversationId, budget: number): Promise<Selection> {
    const selected: ContextItemRecord[] = [];
    let unit: ContextItemRecord[] = [];
    let total = 0;
    let cursor: number | null = null;
    for (;;) {
      const pageSize = cursor === null ? FIRST_PAGE_SIZE : PAGE_SIZE;
      const page = await this.deps.store.listContextNewestFirst(conversationId, cursor, pageSize);
      for (const item of page) {
        cursor = item.ordinal;
        unit.push(item);
        // Tool results wait for the assistant message that called them: the unit is decided as a whole.
        if (item.flags & ItemFlags.toolResult) continue;
        const unitTokens = unit.reduce((sum, member) => sum + member.tokenCount, 0);
        if (total + unitTokens > budget) {
          return { items: selected, leftOut: true, oversizedNewest: selected.length === 0 ? unit : [] };
        }
        selected.push(...unit);
        total += unitTokens;
        unit = [];
      }
      if (page.length < pageSize) break;
    }
    // Results left in `unit` have no calling message in the context: orphans, never assembled.
    return { items: selected, leftOut: false, oversizedNewest: [] };
  }
}

interface Selection {
  items: ContextItemRecord[];
  /** Whether older items were left out because they did not fit. */
  leftOut: boolean;
  oversizedNewest: ContextItemRecord[];
}

/** Providers expect assistant content as a block array; older hosts may have stored a string. */
function normalizeForModel(message: AgentMessage): AgentMessage {
  if (message.role === "assistant" && typeof message.content === "string") {
    return { ...message, content: [{ type: "text", text: message.content }] };
  }
  return message;
}
