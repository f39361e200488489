/**
 * Builds the row of a new summary from its sources: time range, seq range, descendant and message counts,
 * source tokens and the file ids mentioned below it (found once per pass, whatever text the summarizer returns).
 * Pure apart from the random part of the summary id, which keeps ids unique even when the same text is summarized
 * twice in the same millisecond.
 */
import { createHash, randomBytes } from "node:crypto";
import type { TokenEstimator } from "../contracts.js";
import type { FileId, MessageRecord, SummaryId, SummaryLevel, SummaryRecord } from "../records.js";
import type { SummaryDraft } from "../store/compaction-store.js";

const FILE_ID_IN_TEXT = /\bfile_[a-f0-9]{16}\b/g;

export function newSummaryId(content: string, createdAt: number): SummaryId {
  const digest = createHash("sha256").update(content).update(String(createdAt)).update(randomBytes(8)).digest("hex");
  return `sum_${digest.slice(0, 16)}`;
}

/** File ids (`file_` + 16 hex) mentioned in the texts, in first-seen order, without duplicates. */
export function collectFileIds(texts: Iterable<string>): FileId[] {
  const found = new Set<FileId>();
  for (const text of texts) for (const match of text.matchAll(FILE_ID_IN_TEXT)) found.add(match[0]);
  return [...found];
}

interface DraftInput {
  content: string;
  level: SummaryLevel;
  createdAt: number;
  tokens: TokenEstimator;
}

/**
 * What a summary's row takes from its sources, whatever its text: found once per pass (the file ids of a leaf
 * are a scan of every source message), then completed with the text that each summarizer attempt returns.
 */
export type SourceFacts = Omit<SummaryDraft, "summaryId" | "content" | "tokenCount" | "level" | "createdAt">;

export function leafSourceFacts(messages: readonly MessageRecord[]): SourceFacts {
  if (messages.length === 0) throw new Error("A leaf summary needs at least one source message.");
  let earliestAt = Number.POSITIVE_INFINITY;
  let latestAt = Number.NEGATIVE_INFINITY;
  let seqStart = Number.POSITIVE_INFINITY;
  let seqEnd = Number.NEGATIVE_INFINITY;
  let sourceTokenCount = 0;
  for (const message of messages) {
    earliestAt = Math.min(earliestAt, message.createdAt);
    latestAt = Math.max(latestAt, message.createdAt);
    seqStart = Math.min(seqStart, message.seq);
    seqEnd = Math.max(seqEnd, message.seq);
    sourceTokenCount += message.tokenCount;
  }
  return {
    kind: "leaf",
    depth: 0,
    sourceTokenCount,
    earliestAt,
    latestAt,
    descendantCount: 0,
    sourceMessageCount: messages.length,
    seqStart,
    seqEnd,
    fileIds: collectFileIds(messages.map((message) => message.content)),
  };
}

export function condensedSourceFacts(parents: readonly SummaryRecord[]): SourceFacts {
  if (parents.length === 0) throw new Error("A condensed summary needs at least one source summary.");
  const fileIds = new Set<FileId>();
  for (const parent of parents) for (const fileId of parent.fileIds) fileIds.add(fileId);
  return {
    kind: "condensed",
    depth: Math.max(...parents.map((parent) => parent.depth)) + 1,
    sourceTokenCount: sum(parents.map((parent) => parent.tokenCount)),
    earliestAt: Math.min(...parents.map((parent) => parent.earliestAt)),
    latestAt: Math.max(...parents.map((parent) => parent.latestAt)),
    descendantCount: sum(parents.map((parent) => parent.descendantCount + 1)),
    sourceMessageCount: sum(parents.map((parent) => parent.sourceMessageCount)),
    seqStart: Math.min(...parents.map((parent) => parent.seqStart)),
    seqEnd: Math.max(...parents.map((parent) => parent.seqEnd)),
    fileIds: [...fileIds],
  };
}

/** The row of a summary with this text over sources with these facts (a condensed summary adds the ids its text names). */
export function draftOf(facts: SourceFacts, input: DraftInput): SummaryDraft {
  const fileIds = facts.kind === "condensed" ? [...new Set([...facts.fileIds, ...collectFileIds([input.content])])] : facts.fileIds;
  return {
    ...facts,
    summaryId: newSummaryId(input.content, input.createdAt),
    content: input.content,
    tokenCount: input.tokens.estimate(input.content),
    fileIds,
    level: input.level,
    createdAt: input.createdAt,
  };
}

export function leafDraft(messages: readonly MessageRecord[], input: DraftInput): SummaryDraft {
  return draftOf(leafSourceFacts(messages), input);
}

export function condensedDraft(parents: readonly SummaryRecord[], input: DraftInput): SummaryDraft {
  return draftOf(condensedSourceFacts(parents), input);
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
