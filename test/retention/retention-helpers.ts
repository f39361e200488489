/** A database with old, summarized history and a retention service over it, for the retention tests. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { LcmConfig } from "../../src/config.js";
import type { Clock } from "../../src/contracts.js";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import { GzipJsonlArchiveWriter } from "../../src/retention/archive-writer.js";
import { RetentionService } from "../../src/retention/retention-service.js";
import { SqliteIntegrityStore } from "../../src/sqlite/sqlite-integrity-store.js";
import { SqliteRetentionStore } from "../../src/sqlite/sqlite-retention-store.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { exportConversationRecords } from "../../src/transfer/jsonl-export.js";
import { SqliteExportStore } from "../../src/sqlite/sqlite-export-store.js";
import { RecordingLogger, createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { insertLeafSummary } from "../helpers/summaries.js";
import { tempDir } from "../helpers/temp-dir.js";

export const DAY = 24 * 60 * 60 * 1_000;
/** Messages are stamped from 2026-11-01 on (test/helpers/messages.ts); "now" is 100 days later. */
export const NOW = Date.UTC(2027, 1, 9);

export class FixedClock implements Clock {
  constructor(public current = NOW) {}
  now(): number {
    return this.current;
  }
}

export function retentionSetup(config: Partial<Record<keyof LcmConfig, unknown>> = {}) {
  const directory = tempDir();
  const setup = createTestEngine({ databasePath: join(directory, "lcm.db"), config });
  const clock = new FixedClock();
  const logger = new RecordingLogger();
  const store = new SqliteRetentionStore(setup.db);
  /** `sliceMs` 0: every read and transaction stops after its first row (the cuts become countable). */
  const serviceWith = (overrides: Partial<LcmConfig> = {}, options: { sliceMs?: number } = {}) => new RetentionService({
    store, conversations: setup.store, exportConversation: (id) => exportConversationRecords(new SqliteExportStore(setup.db), id),
    archives: new GzipJsonlArchiveWriter(setup.config.retentionArchiveDirectory), config: { ...setup.config, ...overrides }, clock, logger,
    ...options,
  });
  const service = serviceWith();
  const checker = new IntegrityChecker({ store: new SqliteIntegrityStore(setup.db), clock, fileExists: async (path) => existsSync(path) });
  return { ...setup, clock, logger, retentionStore: store, service, serviceWith, checker, directory };
}

/** Stores `pairs` user/assistant exchanges (old timestamps) in a session; returns the conversation id. */
export async function storeExchanges(setup: ReturnType<typeof retentionSetup>, sessionId: string, pairs: number, words = "ordinary words"): Promise<number> {
  const messages = Array.from({ length: pairs }, (_, index) => [
    userMessage(`question ${index} about ${words} needle${index}`), assistantMessage(`answer ${index} with ${words} ${"filler ".repeat(40)}`),
  ]).flat();
  await setup.newEngine().ingestBatch({ sessionId, messages });
  return setup.db.get<{ id: number }>("SELECT conversation_id AS id FROM conversations WHERE session_id = ?", sessionId)!.id;
}

/** Summarizes seqs [from, to] into leaf summaries of `size` messages each; returns their ids. */
export function summarize(setup: ReturnType<typeof retentionSetup>, conversationId: number, from: number, to: number, size = 10): string[] {
  const ids: string[] = [];
  for (let start = from; start <= to; start += size) {
    ids.push(insertLeafSummary(setup.db, conversationId, start, Math.min(to, start + size - 1), `summary of ${start}-${Math.min(to, start + size - 1)}`));
  }
  return ids;
}

/**
 * Copies the write-ahead log into the file and truncates it, so the file's size is what its pages take. The
 * connection's checkpoint worker may be checkpointing at that moment (SQLite answers busy): then it tries again.
 */
export async function checkpointFully(db: ReturnType<typeof retentionSetup>["db"]): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (db.get<{ busy: number }>("PRAGMA wal_checkpoint(TRUNCATE)")?.busy === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("The write-ahead log could not be checkpointed in 1 s.");
}

/**
 * Tool-output-like history: 1,200 messages of ~2 KB (long, few distinct words: the text, not the word index, is most
 * of the file), 1,150 of them under leaf summaries of 25; indexed and checkpointed, so the file is what its pages
 * take (about 4 MB). Returns the conversation id.
 */
export async function storeLargeCoveredHistory(setup: ReturnType<typeof retentionSetup>): Promise<number> {
  const conversationId = await storeExchanges(setup, "big", 600, "x".repeat(2_000));
  summarize(setup, conversationId, 1, 1_150, 25);
  await new SqliteSearchIndex(setup.db).indexPending();
  await checkpointFully(setup.db);
  return conversationId;
}

/** Counts turns of the event loop (setImmediate callbacks) until `stop` is called. */
export function countEventLoopTurns(): { stop: () => number } {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      running = false;
      return turns;
    },
  };
}

/** Every record of a gzip JSONL archive. */
export function readArchive(path: string): Record<string, unknown>[] {
  return gunzipSync(readFileSync(path)).toString("utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Rows anything points at that are gone: the orphan checks retention must keep at zero. */
export function orphans(db: ReturnType<typeof retentionSetup>["db"]): Record<string, number> {
  const count = (sql: string) => db.get<{ n: number }>(sql)!.n;
  return {
    summaryMessages: count("SELECT count(*) AS n FROM summary_messages sm LEFT JOIN messages m ON m.message_id = sm.message_id LEFT JOIN summaries s ON s.id = sm.summary_id WHERE m.message_id IS NULL OR s.id IS NULL"),
    summaryParents: count("SELECT count(*) AS n FROM summary_parents sp LEFT JOIN summaries a ON a.id = sp.summary_id LEFT JOIN summaries b ON b.id = sp.parent_summary_id WHERE a.id IS NULL OR b.id IS NULL"),
    contextItems: count("SELECT count(*) AS n FROM context_items ci LEFT JOIN messages m ON m.message_id = ci.message_id LEFT JOIN summaries s ON s.id = ci.summary_id WHERE (ci.message_id IS NOT NULL AND m.message_id IS NULL) OR (ci.summary_id IS NOT NULL AND s.id IS NULL)"),
    messageParts: count("SELECT count(*) AS n FROM message_parts p LEFT JOIN messages m ON m.message_id = p.message_id WHERE m.message_id IS NULL"),
    prunedParts: count("SELECT count(*) AS n FROM message_parts p JOIN messages m ON m.message_id = p.message_id WHERE m.archive_id IS NOT NULL"),
    largeFiles: count("SELECT count(*) AS n FROM large_files f LEFT JOIN conversations c ON c.conversation_id = f.conversation_id WHERE c.conversation_id IS NULL"),
    messages: count("SELECT count(*) AS n FROM messages m LEFT JOIN conversations c ON c.conversation_id = m.conversation_id WHERE c.conversation_id IS NULL"),
    ftsRowsWithoutMessage: count(`SELECT count(*) AS n FROM messages_fts_docsize d LEFT JOIN messages m ON m.message_id = d.id WHERE m.message_id IS NULL`),
  };
}
