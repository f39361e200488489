/**
 * Structured log fields of the seed spec (conversation_id, session_id, compaction_id, summary_id, trigger_reason,
 * token_before, token_after): a Logger that adds a run's fields to every line written through it, so the lines a
 * compaction writes deep inside its components carry the run they belong to. The host logger appends fields to
 * the line as JSON (runtime/host-logger.ts).
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "../contracts.js";

/** The spec's field names; other fields may be added beside them. */
export type CompactionLogFields = {
  conversation_id: number;
  session_id: string;
  compaction_id: string;
  trigger_reason: string;
  summary_id?: string | null;
  token_before?: number;
  token_after?: number;
};

/** A new compaction run's id: `cmp_` and 12 hex digits. */
export function newCompactionId(): string {
  return `cmp_${randomBytes(6).toString("hex")}`;
}

/**
 * `logger` with `fields` added to every line. A component's own `summaryId` field is renamed `summary_id`, the
 * spec's name. Contract: never throws (the underlying Logger does not).
 */
export function withLogFields(logger: Logger, fields: Record<string, unknown>): Logger {
  const merge = (own?: Record<string, unknown>): Record<string, unknown> => {
    if (!own) return { ...fields };
    const { summaryId, ...rest } = own;
    return { ...fields, ...rest, ...(summaryId !== undefined ? { summary_id: summaryId } : {}) };
  };
  return {
    debug: (message, own) => logger.debug(message, merge(own)),
    info: (message, own) => logger.info(message, merge(own)),
    warn: (message, own) => logger.warn(message, merge(own)),
    error: (message, own) => logger.error(message, merge(own)),
  };
}
