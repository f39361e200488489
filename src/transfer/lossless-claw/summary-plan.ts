/**
 * Plans how a conversation's lossless-claw summaries become LCM summaries: which can be mapped, in an order where
 * every summary comes after the summaries it condenses, with the metadata LCM derives from sources (depth, seq
 * range, descendant and message counts, time range, token counts: the integrity checker verifies them against the
 * edges, so they are computed here rather than copied from the peer's columns). Pure, apart from the `checkpoint` it
 * awaits between summaries: a long conversation's plan (a thousand summaries over a hundred thousand edges) takes
 * longer than a time slice, and the caller lets the event loop run there.
 *
 * The peer's summary ids have LCM's form (`sum_` + 16 hex) and are kept, so ids the model saw in earlier turns
 * still resolve; any other id gets a stable `sum_` id derived from it.
 */
import { createHash } from "node:crypto";
import { summaryContextTokens } from "../../assembly/summary-message.js";
import type { TokenEstimator } from "../../contracts.js";
import { FILE_ID_PATTERN } from "../../records.js";
import type { ImportedMessage, PlannedSummary } from "../../store/peer-import-store.js";
import { peerTimeToMillis } from "./message-rebuild.js";
import type { PeerSummary } from "./peer-reader.js";

export interface SummaryPlan {
  /** Mappable summaries, every one after the summaries it condenses. */
  summaries: PlannedSummary[];
  unmapped: { peerSummaryId: string; reason: string }[];
  /** Edges left out (to messages not stored or excluded, to summaries of another conversation or not mapped). */
  droppedEdges: number;
}

/** The peer's summary edges, grouped by the summary they start from, each list in the peer's ordinal order. */
export interface SummaryEdges {
  /** Leaf summary → peer ids of its source messages. */
  messages: ReadonlyMap<string, readonly number[]>;
  /** Condensed summary → peer ids of the summaries it condenses (the peer calls them parents). */
  parents: ReadonlyMap<string, readonly string[]>;
}

const SUMMARY_ID = /^sum_[0-9a-f]{16}$/;

export async function planSummaries(
  summaries: readonly PeerSummary[],
  edges: SummaryEdges,
  messages: ReadonlyMap<number, ImportedMessage>,
  tokens: TokenEstimator,
  checkpoint: () => Promise<void> = async () => undefined,
): Promise<SummaryPlan> {
  const peerIds = new Set(summaries.map((summary) => summary.summaryId));
  const planned = new Map<string, PlannedSummary>();
  const unmapped: SummaryPlan["unmapped"] = [];
  const unmappedIds = new Set<string>();
  const refuse = (peerSummaryId: string, reason: string) => {
    unmapped.push({ peerSummaryId, reason });
    unmappedIds.add(peerSummaryId);
  };
  let droppedEdges = 0;

  for (const peer of summaries.filter((summary) => summary.kind === "leaf")) {
    await checkpoint();
    const sources: ImportedMessage[] = [];
    for (const messageId of edges.messages.get(peer.summaryId) ?? []) {
      const message = messages.get(messageId);
      if (message && !message.excluded) sources.push(message);
      else droppedEdges++;
    }
    if (sources.length === 0) {
      refuse(peer.summaryId, "leaf summary with no stored source message");
      continue;
    }
    planned.set(peer.summaryId, leafPlan(peer, sources, tokens));
  }

  // Condensed summaries in rounds: each round plans those whose condensed summaries are all planned.
  let waiting = summaries.filter((summary) => summary.kind === "condensed");
  while (waiting.length > 0) {
    const next: PeerSummary[] = [];
    for (const peer of waiting) {
      await checkpoint();
      const parentIds = edges.parents.get(peer.summaryId) ?? [];
      const known = parentIds.filter((id) => peerIds.has(id));
      if (known.some((id) => !planned.has(id) && !unmappedIds.has(id))) {
        next.push(peer);
        continue;
      }
      const parents = known.flatMap((id) => planned.get(id) ?? []);
      droppedEdges += parentIds.length - parents.length;
      if (parents.length === 0) {
        refuse(peer.summaryId, "condensed summary with no mapped source summary");
        continue;
      }
      planned.set(peer.summaryId, condensedPlan(peer, parents, tokens));
    }
    if (next.length === waiting.length) {
      for (const peer of next) refuse(peer.summaryId, "condensed summary in a cycle of summaries");
      break;
    }
    waiting = next;
  }
  for (const peer of summaries) {
    if (peer.kind !== "leaf" && peer.kind !== "condensed") refuse(peer.summaryId, `unknown summary kind ${peer.kind}`);
  }
  const ordered = [...planned.values()].sort((a, b) => a.depth - b.depth || a.seqStart - b.seqStart || a.createdAt - b.createdAt);
  return { summaries: ordered, unmapped, droppedEdges };
}

/** LCM's id for a peer summary: the same when it has LCM's form, else a stable one derived from it. */
export function summaryIdFor(peerSummaryId: string): string {
  return SUMMARY_ID.test(peerSummaryId) ? peerSummaryId : `sum_${createHash("sha256").update(peerSummaryId).digest("hex").slice(0, 16)}`;
}

function leafPlan(peer: PeerSummary, sources: ImportedMessage[], tokens: TokenEstimator): PlannedSummary {
  const earliestAt = Math.min(...sources.map((message) => message.createdAt));
  const latestAt = Math.max(...sources.map((message) => message.createdAt));
  return withContextTokens({
    peerSummaryId: peer.summaryId,
    summaryId: summaryIdFor(peer.summaryId),
    kind: "leaf",
    depth: 0,
    content: peer.content,
    tokenCount: tokens.estimate(peer.content),
    sourceTokenCount: sum(sources.map((message) => message.tokenCount)),
    earliestAt,
    latestAt,
    descendantCount: 0,
    sourceMessageCount: sources.length,
    seqStart: Math.min(...sources.map((message) => message.seq)),
    seqEnd: Math.max(...sources.map((message) => message.seq)),
    fileIds: fileIdsOf(peer.fileIds),
    createdAt: peerTimeToMillis(peer.createdAt) ?? latestAt,
    messageIds: sources.map((message) => message.messageId),
    parentPeerIds: [],
    contextTokens: 0,
  }, [], tokens);
}

function condensedPlan(peer: PeerSummary, parents: PlannedSummary[], tokens: TokenEstimator): PlannedSummary {
  const latestAt = Math.max(...parents.map((parent) => parent.latestAt));
  const fileIds = new Set<string>();
  for (const parent of parents) for (const fileId of parent.fileIds) fileIds.add(fileId);
  for (const fileId of fileIdsOf(peer.fileIds)) fileIds.add(fileId);
  return withContextTokens({
    peerSummaryId: peer.summaryId,
    summaryId: summaryIdFor(peer.summaryId),
    kind: "condensed",
    depth: Math.max(...parents.map((parent) => parent.depth)) + 1,
    content: peer.content,
    tokenCount: tokens.estimate(peer.content),
    sourceTokenCount: sum(parents.map((parent) => parent.tokenCount)),
    earliestAt: Math.min(...parents.map((parent) => parent.earliestAt)),
    latestAt,
    descendantCount: sum(parents.map((parent) => parent.descendantCount + 1)),
    sourceMessageCount: sum(parents.map((parent) => parent.sourceMessageCount)),
    seqStart: Math.min(...parents.map((parent) => parent.seqStart)),
    seqEnd: Math.max(...parents.map((parent) => parent.seqEnd)),
    fileIds: [...fileIds],
    createdAt: peerTimeToMillis(peer.createdAt) ?? latestAt,
    messageIds: [],
    parentPeerIds: parents.map((parent) => parent.peerSummaryId),
    contextTokens: 0,
  }, parents.map((parent) => parent.summaryId), tokens);
}

function withContextTokens(plan: PlannedSummary, parentSummaryIds: string[], tokens: TokenEstimator): PlannedSummary {
  return { ...plan, contextTokens: summaryContextTokens({ ...plan, parentSummaryIds }, tokens) };
}

function fileIdsOf(json: string): string[] {
  try {
    const value = JSON.parse(json) as unknown;
    return Array.isArray(value) ? [...new Set(value.filter((id): id is string => typeof id === "string" && FILE_ID_PATTERN.test(id)))] : [];
  } catch {
    return []; // a file_ids column that is not JSON names no file
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
