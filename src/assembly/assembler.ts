/**
 * The Assembler builds the model's context for one turn from a conversation's context items: summaries first
 * (as XML user messages), then raw messages, in chronological order. The fresh tail (the newest
 * `freshTailCount` raw messages) is always included; older items are added newest-first while they fit the
 * budget, and the walk stops at the first that does not, so the result is one contiguous suffix of the
 * context. Items are read newest-first in pages with their stored token counts, so the cost follows the
 * assembled context, not the stored history. A tool call and its results are one unit: kept or dropped together.
 */
import type { TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import { ItemFlags, decodeMessage } from "../messages/message-codec.js";
import type { ContextItemRecord, ConversationId } from "../records.js";
import type { ContextStore, MessageStore, SummaryReadStore } from "../store/store.js";
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
  tokenBudget: number;
  freshTailCount: number;
}

export interface AssembledContext {
  messages: AgentMessage[];
  estimatedTokens: number;
  summaryCount: number;
  rawMessageCount: number;
  /** True when older context items were left out because they did not fit the budget. */
  evictedOlderItems: boolean;
  /** Tokens of the fresh tail alone (it is included even when it exceeds the budget). */
  freshTailTokens: number;
}

export class Assembler {
  constructor(private readonly deps: AssemblerDeps) {}

  async assemble(request: AssembleRequest): Promise<AssembledContext> {
    const selection = await this.select(request);
    const items = selection.items.reverse();
    const messageIds = items.flatMap((item) => (item.messageId === null ? [] : [item.messageId]));
    const summaryRowIds = items.flatMap((item) => (item.summaryRowId === null ? [] : [item.summaryRowId]));
    const [messages, summaries] = await Promise.all([
      this.deps.store.getMessages(messageIds),
      this.deps.store.getSummariesByRowIds(summaryRowIds),
    ]);
    const messagesById = new Map(messages.map((message) => [message.messageId, message]));
    const summariesById = new Map(summaries.map((summary) => [summary.rowId, summary]));

    const sized: Sized[] = [];
    let summaryCount = 0;
    for (const item of items) {
      if (item.summaryRowId !== null) {
        const summary = summariesById.get(item.summaryRowId);
        if (!summary) continue; // dangling item: reported by the integrity checker, never sent to the model
        sized.push({ message: summaryToMessage(summary), tokens: item.tokenCount });
        summaryCount++;
      } else if (item.messageId !== null) {
        const stored = messagesById.get(item.messageId);
        if (!stored) continue;
        sized.push({ message: normalizeForModel(decodeMessage(stored)), tokens: item.tokenCount });
      }
    }
    const repaired = repairToolPairing(sized);
    return {
      messages: repaired.map((item) => item.message),
      estimatedTokens: repaired.reduce((total, item) => total + item.tokens, 0),
      summaryCount,
      rawMessageCount: repaired.length - summaryCount,
      evictedOlderItems: selection.evicted,
      freshTailTokens: selection.freshTailTokens,
    };
  }

  /** Chooses the items, newest first, reading context items page by page. */
  private async select(request: AssembleRequest): Promise<{ items: ContextItemRecord[]; evicted: boolean; freshTailTokens: number }> {
    const selected: ContextItemRecord[] = [];
    let unit: ContextItemRecord[] = [];
    let total = 0;
    let freshTailTokens = 0;
    let rawSeen = 0;
    let cursor: number | null = null;
    for (;;) {
      const pageSize = cursor === null ? FIRST_PAGE_SIZE : PAGE_SIZE;
      const page = await this.deps.store.listContextNewestFirst(request.conversationId, cursor, pageSize);
      for (const item of page) {
        cursor = item.ordinal;
        unit.push(item);
        // Tool results wait for the assistant message that called them: the unit is decided as a whole.
        if (item.flags & ItemFlags.toolResult) continue;
        const unitTokens = unit.reduce((sum, member) => sum + member.tokenCount, 0);
        const isRaw = unit.every((member) => member.messageId !== null);
        const isFresh = isRaw && rawSeen < request.freshTailCount;
        if (!isFresh && total + unitTokens > request.tokenBudget) {
          return { items: selected, evicted: true, freshTailTokens };
        }
        selected.push(...unit);
        total += unitTokens;
        if (isFresh) freshTailTokens += unitTokens;
        if (isRaw) rawSeen += unit.length;
        unit = [];
      }
      if (page.length < pageSize) break;
    }
    // Results left in `unit` have no calling message in the context: orphans, never assembled.
    return { items: selected, evicted: false, freshTailTokens };
  }
}

/** Providers expect assistant content as a block array; older hosts may have stored a string. */
function normalizeForModel(message: AgentMessage): AgentMessage {
  if (message.role === "assistant" && typeof message.content === "string") {
    return { ...message, content: [{ type: "text", text: message.content }] };
  }
  return message;
}
