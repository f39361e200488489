/**
 * Builds the row of a new summary from its sources: time range, seq range, descendant and message counts,
 * source tokens and the file ids mentioned below it. Pure apart from the random part of the summary id, which
 * keeps ids unique even when the same text is summarized twice in the same millisecond.
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

export function leafDraft(messages: readonly MessageRecord[], input: DraftInput): SummaryDraft {
  if (messages.length === 0) throw new Error("A leaf summary needs at least one source message.");
  return {
    summaryId: newSummaryId(input.content, input.createdAt),
    kind: "leaf",
    depth: 0,
    content: input.content,
    tokenCount: input.tokens.estimate(input.content),
    sourceTokenCount: sum(messages.map((message) => message.tokenCount)),
    earliestAt: Math.min(...messages.map((message) => message.createdAt)),
    latestAt: Math.max(...messages.map((message) => message.createdAt)),
    descendantCount: 0,
    sourceMessageCount: messages.length,
    seqStart: Math.min(...messages.map((message) => message.seq)),
    seqEnd: Math.max(...messages.map((message) => message.seq)),
    fileIds: collectFileIds(messages.map((message) => message.content)),
    level: input.level,
    createdAt: input.createdAt,
  };
}

export function condensedDraft(parents: readonly SummaryRecord[], input: DraftInput): SummaryDraft {
  if (parents.length === 0) throw new Error("A condensed summary needs at least one source summary.");
  const fileIds = new Set<FileId>();
  for (const parent of parents) for (const fileId of parent.fileIds) fileIds.add(fileId);
  for (const fileId of collectFileIds([input.content])) fileIds.add(fileId);
  return {
    summaryId: newSummaryId(input.content, input.createdAt),
    kind: "condensed",
    depth: Math.max(...parents.map((parent) => parent.depth)) + 1,
    content: input.content,
    tokenCount: input.tokens.estimate(input.content),
    sourceTokenCount: sum(parents.map((parent) => parent.tokenCount)),
    earliestAt: Math.min(...parents.map((parent) => parent.earliestAt)),
    latestAt: Math.max(...parents.map((parent) => parent.latestAt)),
    descendantCount: sum(parents.map((parent) => parent.descendantCount + 1)),
    sourceMessageCount: sum(parents.map((parent) => parent.sourceMessageCount)),
    seqStart: Math.min(...parents.map((parent) => parent.seqStart)),
    seqEnd: Math.max(...parents.map((parent) => parent.seqEnd)),
    fileIds: [...fileIds],
    level: input.level,
    createdAt: input.createdAt,
  };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
