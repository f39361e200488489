/**
 * The storage invariants of compaction checked through the store contracts only, so they hold on every backend
 * (dag-invariants.ts checks the same straight from SQLite): counters equal the sums over context items, every context
 * item points to a stored row, every summary reachable from the context links to sources that exist and its metadata
 * matches its lineage, and every stored (non-excluded) message is covered exactly once, in order, by the context.
 */
import { MessageFlags } from "../../src/messages/message-codec.js";
import type { LcmBackend } from "../../src/store/backend.js";

/** Returns the violated invariants (empty when all hold). */
export async function checkStoreInvariants(backend: Pick<LcmBackend, "store" | "compaction">, conversationId: number): Promise<string[]> {
  const { store, compaction } = backend;
  const problems: string[] = [];
  const conversation = await store.getConversation(conversationId);
  if (!conversation) return [`conversation ${conversationId} does not exist`];
  const items = await compaction.listCompactionItems(conversationId);
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  if (conversation.contextTokens !== sum(items.map((item) => item.tokenCount))) problems.push("context_tokens counter drifted");
  if (conversation.contextRawTokens !== sum(items.filter((item) => item.messageId !== null).map((item) => item.tokenCount))) {
    problems.push("context_raw_tokens counter drifted");
  }
  if (conversation.contextItemCount !== items.length) problems.push("context_items counter drifted");

  const stored = await store.getMessagesBySeq(conversationId, 1, Number.MAX_SAFE_INTEGER, 1_000_000);
  if (stored.length !== conversation.messageCount) problems.push(`message_count says ${conversation.messageCount}, ${stored.length} stored`);
  if (stored.some((message, index) => message.seq !== index + 1)) problems.push("seqs are not dense 1..N");
  const seqOf = new Map(stored.map((message) => [message.messageId, message.seq]));

  /** Every raw message below a summary, oldest first, and how many summaries lie below it. */
  const lineageOf = async (rowId: number, path: Set<number>): Promise<{ messageIds: number[]; summaryCount: number }> => {
    if (path.has(rowId)) {
      problems.push(`summary ${rowId} is its own ancestor`);
      return { messageIds: [], summaryCount: 0 };
    }
    const [summary] = await store.getSummariesByRowIds([rowId]);
    if (!summary) {
      problems.push(`summary ${rowId} is not stored`);
      return { messageIds: [], summaryCount: 0 };
    }
    const sources = await compaction.getSummarySources(rowId);
    const isLinked = summary.kind === "leaf"
      ? sources.messageIds.length > 0 && sources.parentRowIds.length === 0
      : sources.parentRowIds.length > 0 && sources.messageIds.length === 0;
    if (!isLinked) problems.push(`summary ${rowId} (${summary.kind}) is not linked to its sources`);
    const lineage = { messageIds: [...sources.messageIds], summaryCount: 0 };
    for (const messageId of sources.messageIds) if (!seqOf.has(messageId)) problems.push(`summary ${rowId}: source message ${messageId} is not stored`);
    for (const parent of sources.parentRowIds) {
      const below = await lineageOf(parent, new Set([...path, rowId]));
      lineage.messageIds.push(...below.messageIds);
      lineage.summaryCount += below.summaryCount + 1;
    }
    const seqs = lineage.messageIds.map((id) => seqOf.get(id) ?? Number.NaN);
    if (summary.sourceMessageCount !== lineage.messageIds.length) problems.push(`summary ${rowId}: source_message_count`);
    if (summary.descendantCount !== lineage.summaryCount) problems.push(`summary ${rowId}: descendant_count`);
    if (summary.seqStart !== Math.min(...seqs) || summary.seqEnd !== Math.max(...seqs)) problems.push(`summary ${rowId}: seq range`);
    return lineage;
  };

  const covered: number[] = [];
  for (const item of items) {
    if (item.messageId !== null) {
      if (!seqOf.has(item.messageId)) problems.push(`item ${item.ordinal}: missing message`);
      covered.push(item.messageId);
    } else if (item.summaryRowId !== null) {
      covered.push(...(await lineageOf(item.summaryRowId, new Set())).messageIds);
    }
  }
  const expected = stored.filter((message) => !(message.flags & MessageFlags.excluded)).map((message) => message.messageId);
  if (JSON.stringify(covered) !== JSON.stringify(expected)) {
    problems.push(`context covers ${covered.length} messages, expected each of ${expected.length} exactly once and in order`);
  }
  return problems;
}
