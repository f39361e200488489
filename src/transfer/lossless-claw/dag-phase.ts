/**
 * The summary DAG and the context of one peer conversation, after its messages are stored: the summaries planned
 * (summary-plan.ts) with the tool results the peer left at the head of its fresh tail moved under the summary that
 * took their call (orphan-results.ts), stored a time slice per transaction; then the peer's context items in order,
 * mapped to this conversation's rows. A context item naming another conversation's summary (the peer carried a
 * summary over to a new conversation), a message never stored or one LCM never assembles is left out and reported.
 * Planned again on a resumed run (cheap next to writing): the context needs the summaries' token counts.
 */
import { ItemFlags } from "../../messages/message-codec.js";
import type { ContextItemInput, ImportedMessage, ImportPhase } from "../../store/peer-import-store.js";
import type { MessagePhase } from "./message-phase.js";
import { attachOrphanResults } from "./orphan-results.js";
import type { PeerContextItem, PeerReader } from "./peer-reader.js";
import { planSummaries, type SummaryEdges, summaryIdFor } from "./summary-plan.js";
import type { TimeSlicer } from "../../runtime/time-slice.js";

/** Rows per read of the source's summary edges (2-5 ms each). */
export const EDGE_PAGE = 2_000;

/** What the context phase needs from the summaries phase. */
export interface PlannedDag {
  messages: ReadonlyMap<number, ImportedMessage>;
  /** This conversation's summaries: peer id → context tokens. */
  summaryTokens: ReadonlyMap<string, number>;
  peerItems: readonly PeerContextItem[];
  /** Peer message ids moved under a summary (not in the context). */
  attached: ReadonlySet<number>;
  /** Every summary the peer kept for this conversation (planned or not). */
  ownSummaryIds: ReadonlySet<string>;
}

export async function importSummaries(phase: MessagePhase, fingerprint: string, committed: (phase: ImportPhase) => void): Promise<PlannedDag> {
  const { reader, store, sourceId, conversation, conversationId, cursor, unmapped, written, slicer } = phase;
  const messages = await store.importedMessages(sourceId, conversation.conversationId);
  await slicer.checkpoint();
  const peerSummaries = reader.summaries(conversation.conversationId);
  const peerItems = reader.contextItems(conversation.conversationId);
  await slicer.checkpoint();
  const peerEdges: SummaryEdges = { messages: await summaryMessagesOf(reader, conversation.conversationId, slicer), parents: summaryParentsOf(reader, conversation.conversationId) };
  const isToolResult = (peerMessageId: number) => ((messages.get(peerMessageId)?.itemFlags ?? 0) & ItemFlags.toolResult) !== 0;
  const ownSummaryIds = new Set(peerSummaries.map((summary) => summary.summaryId));
  const orphans = attachOrphanResults(peerItems, isToolResult, ownSummaryIds, peerEdges);
  const plan = await planSummaries(peerSummaries, orphans.edges, messages, phase.tokens, () => slicer.checkpoint());
  if (cursor.phase === "summaries") {
    for (const messageId of orphans.attached) {
      unmapped.add("context item: tool result whose call the peer summarized: kept under that summary (lcm_expand shows it)", `${conversation.conversationId}/${messageId}`);
    }
    for (const messageId of orphans.unattached) {
      unmapped.add("context item: tool result that follows no call and no summary of this conversation: left in the context as the peer had it (the assembler drops it)", `${conversation.conversationId}/${messageId}`);
    }
    for (const entry of plan.unmapped) unmapped.add(`summary: ${entry.reason}`, entry.peerSummaryId);
    if (plan.droppedEdges > 0) unmapped.add("summary edge to a source not imported (another conversation's, or excluded)", `conversation ${conversation.conversationId}`, plan.droppedEdges);
    await slicer.checkpoint();
    const done = await store.summaryRowIds(sourceId, plan.summaries.map((summary) => summary.peerSummaryId));
    const waiting = plan.summaries.filter((summary) => !done.has(summary.peerSummaryId));
    for (let index = 0; index < waiting.length;) {
      phase.signal?.throwIfAborted();
      await slicer.checkpoint();
      const stored = await store.storeSummaries(sourceId, conversationId, waiting.slice(index), (peerId) => summaryIdFor(`${fingerprint}:${peerId}`), slicer);
      for (const summary of waiting.slice(index, index + stored)) {
        written.summaryMessages += summary.messageIds.length;
        written.summaryParents += summary.parentPeerIds.length;
      }
      written.summaries += stored;
      index += stored;
      committed("summaries");
      await slicer.yield();
    }
    await store.endSummaries(sourceId, conversation.conversationId);
    cursor.phase = "context";
    committed("summaries");
  }
  return {
    messages, peerItems, attached: orphans.attached, ownSummaryIds,
    summaryTokens: new Map(plan.summaries.map((summary) => [summary.peerSummaryId, summary.contextTokens])),
  };
}

/** The peer's context, in its order, as LCM context items; resumes after the items already written. */
export async function importContext(phase: MessagePhase, dag: PlannedDag, committed: (phase: ImportPhase) => void): Promise<void> {
  const { store, sourceId, conversation, conversationId, cursor, unmapped, written, slicer } = phase;
  if (cursor.phase !== "context") return;
  // Only this conversation's summaries: the map is per source, and a peer context item may name another conversation's.
  const summaryRows = await store.summaryRowIds(sourceId, [...dag.summaryTokens.keys()]);
  const items: ContextItemInput[] = [];
  for (const item of dag.peerItems) {
    const example = `${conversation.conversationId}#${item.ordinal}`;
    if (item.messageId !== null) {
      const message = dag.messages.get(item.messageId);
      if (dag.attached.has(item.messageId)) continue;
      if (!message) unmapped.add("context item: message not stored in this conversation (another's, or refused)", example);
      else if (message.excluded) unmapped.add("context item: message LCM never assembles (system or unknown role)", example);
      else items.push({ messageId: message.messageId, summaryRowId: null, tokenCount: message.tokenCount, flags: message.itemFlags, isMessage: true });
    } else if (item.summaryId !== null) {
      const rowId = summaryRows.get(item.summaryId);
      if (rowId !== undefined) items.push({ messageId: null, summaryRowId: rowId, tokenCount: dag.summaryTokens.get(item.summaryId) ?? 0, flags: 0, isMessage: false });
      else if (!dag.ownSummaryIds.has(item.summaryId)) unmapped.add("context item: summary of another conversation (it stays with its own conversation)", example);
      else unmapped.add("context item: summary not imported", example);
    }
  }
  for (let index = cursor.contextItems; index < items.length;) {
    phase.signal?.throwIfAborted();
    await slicer.checkpoint();
    const stored = await store.storeContext(sourceId, conversationId, conversation.conversationId, items.slice(index), index, slicer);
    written.contextItems += stored;
    index += stored;
    committed("context");
    await slicer.yield();
  }
  cursor.contextItems = items.length;
}

/** Every leaf → message edge of the conversation, grouped by leaf, read in pages within the time slices. */
async function summaryMessagesOf(reader: PeerReader, conversationId: number, slicer: TimeSlicer): Promise<SummaryEdges["messages"]> {
  const edges = new Map<string, number[]>();
  for (let page = reader.summaryMessagesAfter(conversationId, null, EDGE_PAGE); page.length > 0;) {
    for (const edge of page) {
      const list = edges.get(edge.summaryId);
      if (list) list.push(edge.messageId);
      else edges.set(edge.summaryId, [edge.messageId]);
    }
    if (page.length < EDGE_PAGE) break;
    await slicer.checkpoint();
    page = reader.summaryMessagesAfter(conversationId, page.at(-1)!, EDGE_PAGE);
  }
  return edges;
}

/** Every condensed → summary edge of the conversation, grouped by condensed summary (one per ten summaries or so). */
function summaryParentsOf(reader: PeerReader, conversationId: number): SummaryEdges["parents"] {
  const edges = new Map<string, string[]>();
  for (const edge of reader.summaryParents(conversationId)) {
    const list = edges.get(edge.summaryId);
    if (list) list.push(edge.parentSummaryId);
    else edges.set(edge.summaryId, [edge.parentSummaryId]);
  }
  return edges;
}
