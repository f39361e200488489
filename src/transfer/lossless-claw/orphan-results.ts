/**
 * A tool result the peer left at the head of its fresh tail while a summary took its call (lossless-claw compacts
 * by token chunks and cuts between a call and its result): in LCM a call and its result are one unit, and a result
 * that follows no call is dropped by the assembler (and reported by `lcm doctor`). Such a result is mapped to the
 * summary that took its call: it becomes a source of that summary's last leaf (lcm_expand shows it there) and leaves
 * the context, so the unit stays together and the context stays valid for strict providers. Pure.
 */
import type { PeerContextItem } from "./peer-reader.js";
import type { SummaryEdges } from "./summary-plan.js";

export interface OrphanAttachment {
  /** The edges with each orphan result added to the end of its leaf's sources. */
  edges: SummaryEdges;
  /** Peer message ids of the results moved under a summary (left out of the context). */
  attached: Set<number>;
  /** Tool results that follow no call and no summary of this conversation: left in the context as the peer had them. */
  unattached: number[];
}

/**
 * Finds the context's tool results that follow a summary (with only other tool results between) and attaches each to
 * the last leaf under that summary. `isToolResult` says whether a peer message is one; `summaryIds` are this
 * conversation's summaries (a summary of another conversation takes nothing).
 */
export function attachOrphanResults(
  items: readonly PeerContextItem[], isToolResult: (peerMessageId: number) => boolean, summaryIds: ReadonlySet<string>, edges: SummaryEdges,
): OrphanAttachment {
  const messages = new Map<string, number[]>([...edges.messages].map(([summaryId, sources]) => [summaryId, [...sources]]));
  const attached = new Set<number>();
  const unattached: number[] = [];
  let summaryBefore: string | null = null;
  let afterCall = false;
  for (const item of items) {
    if (item.summaryId !== null) {
      summaryBefore = item.summaryId;
      afterCall = false;
      continue;
    }
    if (item.messageId === null) continue;
    if (!isToolResult(item.messageId)) {
      summaryBefore = null;
      afterCall = true;
      continue;
    }
    if (afterCall) continue; // results after a message: the call is in the context (doctor judges the ids)
    const leaf = summaryBefore !== null && summaryIds.has(summaryBefore) ? lastLeafOf(summaryBefore, edges) : null;
    if (leaf === null) {
      unattached.push(item.messageId);
      continue;
    }
    messages.set(leaf, [...(messages.get(leaf) ?? []), item.messageId]);
    attached.add(item.messageId);
  }
  return { edges: { messages, parents: edges.parents }, attached, unattached };
}

/** The newest leaf under a summary: itself when it is a leaf, else the last summary it condensed, recursively. */
function lastLeafOf(summaryId: string, edges: SummaryEdges): string | null {
  const seen = new Set<string>();
  for (let current: string | undefined = summaryId; current !== undefined && !seen.has(current);) {
    seen.add(current);
    if (edges.messages.has(current)) return current;
    current = edges.parents.get(current)?.at(-1);
  }
  return null;
}
