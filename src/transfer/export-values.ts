/**
 * What is wrong with one export record's values that its schema (export-schema.ts) cannot say: JSON columns no reader
 * could use (a conversation's bootstrap cursor, last compaction or last reset; message meta, part meta, tool-call
 * arguments or raw blocks, which the codec decodes when the message is served; summary file ids) and times a Date
 * cannot hold. `lcm import jsonl` refuses a file holding one before writing anything: imported, such a row broke
 * `lcm conversations` for the whole database, or failed every turn that read it.
 */
import { decodeMessage } from "../messages/message-codec.js";
import type { PartKind } from "../records.js";
import { isTime, readBootstrapState, readCompactionOutcome, readSessionReset } from "../store/conversation-columns.js";
import { describeError } from "../errors.js";
import type { ExportRecord } from "../store/export-format.js";

const PART_KINDS: ReadonlySet<string> = new Set<PartKind>(["text", "thinking", "toolCall", "image", "field", "raw"]);

/** The problem with `record`'s values, or null. */
export function valueProblem(record: ExportRecord): string | null {
  switch (record.type) {
    case "conversation": {
      const times = { createdAt: record.createdAt, updatedAt: record.updatedAt, lastIngestAt: record.lastIngestAt, sessionStartedAt: record.sessionStartedAt,
        archivedAt: record.archivedAt, endedAt: record.endedAt, "previousConversation.createdAt": record.previousConversation?.createdAt ?? null };
      const badTime = firstBadTime(times);
      if (badTime) return `the conversation's ${badTime}.`;
      if (readBootstrapState(record.bootstrapState) === "unreadable") return `the conversation's bootstrapState ${excerpt(record.bootstrapState)} is not a bootstrap cursor.`;
      if (readCompactionOutcome(record.lastCompaction) === "unreadable") return `the conversation's lastCompaction ${excerpt(record.lastCompaction)} is not a compaction record.`;
      if (readSessionReset(record.lastReset) === "unreadable") return `the conversation's lastReset ${excerpt(record.lastReset)} is not a reset record.`;
      return null;
    }
    case "message": {
      if (!isTime(record.createdAt)) return `message ${record.seq} has the time ${record.createdAt}, which a Date cannot hold.`;
      const kind = record.parts.find((part) => !PART_KINDS.has(part.kind))?.kind;
      if (kind !== undefined) return `message ${record.seq} has a part of unknown kind ${JSON.stringify(kind)}.`;
      if (!isJsonObject(record.meta)) return `message ${record.seq} has meta ${excerpt(record.meta)}, not a JSON object.`;
      try {
        decodeMessage({ ...record, parts: record.parts.map((part) => ({ ...part, kind: part.kind as PartKind })) });
      } catch (error) {
        return `message ${record.seq} cannot be read back (${describeError(error)}): a part's meta, arguments or raw block is not JSON.`;
      }
      if (record.archive && !isTime(record.archive.createdAt)) return `message ${record.seq} names an archive with the time ${record.archive.createdAt}.`;
      return null;
    }
    case "summary": {
      const badTime = firstBadTime({ earliestAt: record.earliestAt, latestAt: record.latestAt, createdAt: record.createdAt });
      if (badTime) return `summary ${record.summaryId}'s ${badTime}.`;
      return isStringArray(record.fileIds) ? null : `summary ${record.summaryId} has fileIds ${excerpt(record.fileIds)}, not a JSON array of file ids.`;
    }
    case "largeFile":
      return isTime(record.createdAt) ? null : `large file ${record.fileId} has the time ${record.createdAt}, which a Date cannot hold.`;
    default:
      return null;
  }
}

function firstBadTime(times: Record<string, number | null>): string | null {
  for (const [name, value] of Object.entries(times)) {
    if (value !== null && !isTime(value)) return `${name} ${value} is not a time a Date can hold (milliseconds within ±8.64e15)`;
  }
  return null;
}

function isJsonObject(text: string): boolean {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value);
  } catch {
    return false; // not JSON
  }
}

function isStringArray(text: string): boolean {
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) && value.every((item) => typeof item === "string");
  } catch {
    return false; // not JSON
  }
}

function excerpt(text: string | null): string {
  const value = String(text);
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}
