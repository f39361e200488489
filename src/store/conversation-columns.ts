/**
 * The JSON columns of a conversation row (the bootstrap cursor, the last compaction, the last reset) read in one
 * place (and what the host left the last turn, spec 023), for every reader that must not trust them: the SQLite store's row mapping (one bad row must not break
 * `lcm conversations` for the whole database), `lcm doctor` (which reports and repairs such a row) and `lcm import
 * jsonl` (which refuses a file holding one). A value that does not parse, or parses to the wrong shape, is unreadable.
 */
import type { AssemblyRecord, BootstrapState, CompactionOutcome, SessionResetRecord } from "../records.js";

/** A value the column holds: null for SQL NULL, "unreadable" for text that is not the column's shape. */
export type ColumnValue<T> = T | null | "unreadable";

export function readBootstrapState(text: string | null): ColumnValue<BootstrapState> {
  if (text === null) return null;
  const value = parseObject(text);
  if (value === null) return "unreadable";
  if (value.source === "file") {
    const isFile = typeof value.file === "string" && isCount(value.offset) && isCount(value.size) && value.offset <= value.size && isTime(value.importedAt);
    return isFile ? (value as unknown as BootstrapState) : "unreadable";
  }
  if (value.source === "host") {
    return typeof value.cursor === "string" && isTime(value.importedAt) ? (value as unknown as BootstrapState) : "unreadable";
  }
  return "unreadable";
}

export function readCompactionOutcome(text: string | null): ColumnValue<CompactionOutcome> {
  if (text === null) return null;
  const value = parseObject(text);
  return value !== null && isTime(value.at) && typeof value.trigger === "string" ? (value as unknown as CompactionOutcome) : "unreadable";
}

export function readSessionReset(text: string | null): ColumnValue<SessionResetRecord> {
  if (text === null) return null;
  const value = parseObject(text);
  return value !== null && isTime(value.at) ? (value as unknown as SessionResetRecord) : "unreadable";
}

export function readAssemblyRecord(text: string | null): ColumnValue<AssemblyRecord> {
  if (text === null) return null;
  const value = parseObject(text);
  const counts = [value?.hostBudgetTokens, value?.toolCount, value?.promptTokens, value?.budgetTokens, value?.assembledTokens];
  return value !== null && counts.every(isCount) && typeof value.floor === "string" ? (value as unknown as AssemblyRecord) : "unreadable";
}

/** The value, or null when the column is NULL or unreadable (a reader that must go on; doctor reports the row). */
export function orNull<T>(value: ColumnValue<T>): T | null {
  return value === "unreadable" ? null : value;
}

/** Which of a conversation's JSON columns are unreadable, by column name. */
export function unreadableConversationColumns(row: { bootstrap_state: string | null; last_compaction: string | null; last_reset: string | null }): string[] {
  return [
    ...(readBootstrapState(row.bootstrap_state) === "unreadable" ? ["bootstrap_state"] : []),
    ...(readCompactionOutcome(row.last_compaction) === "unreadable" ? ["last_compaction"] : []),
    ...(readSessionReset(row.last_reset) === "unreadable" ? ["last_reset"] : []),
  ];
}

/** A JSON object, or null when the text is not one. */
export function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null; // not JSON: the caller says it is unreadable
  }
}

/** A millisecond time a Date can hold. */
export function isTime(value: unknown): value is number {
  return Number.isSafeInteger(value) && Math.abs(value as number) <= 8_640_000_000_000_000;
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
