/**
 * Measures retention on a 100k-message database (not a timed test): the longest event-loop block while an age-cap
 * run archives and prunes every covered message (wall-clock, and the main thread's CPU time in it: bench/loop-probe.ts),
 * and the space it gives back. `npx tsx bench/retention-block.ts` (MESSAGES=… for another size; THREAD=worker runs it
 * the way `maintain` does in a gateway, on retention's worker thread, and the block is then the main thread's).
 */
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import os from "node:os";
import { resolveConfig } from "../src/config.js";
import { openSharedDatabase } from "../src/sqlite/connection-registry.js";
import { encodeMessage } from "../src/messages/message-codec.js";
import { GzipJsonlArchiveWriter } from "../src/retention/archive-writer.js";
import { runOnRetentionThread } from "../src/retention/retention-thread.js";
import { RetentionService, UNBOUNDED_BUDGET } from "../src/retention/retention-service.js";
import { storageStatus } from "../src/retention/storage-status.js";
import { SqliteRetentionStore } from "../src/sqlite/sqlite-retention-store.js";
import { SqliteSearchIndex } from "../src/sqlite/sqlite-search-index.js";
import { SqliteStore } from "../src/sqlite/sqlite-store.js";
import { DefaultTokenEstimator } from "../src/tokens/default-token-estimator.js";
import { exportConversationRecords } from "../src/transfer/jsonl-export.js";
import { SqliteExportStore } from "../src/sqlite/sqlite-export-store.js";
import { round, startLoopProbe } from "./loop-probe.js";

const CONVERSATIONS = 10;
const PER_CONVERSATION = Number(process.env.MESSAGES ?? 100_000) / CONVERSATIONS;
const LEAF = 20;
const directory = mkdtempSync(join(tmpdir(), "lcm-retention-"));
const config = resolveConfig({ databasePath: join(directory, "lcm.db"), retentionMaxAgeDays: 30, retentionPruneEndedSessions: true }, {});
const db = openSharedDatabase(config.databasePath);
const store = new SqliteStore(db);
const tokens = new DefaultTokenEstimator();
const old = Date.UTC(2026, 0, 1);
const words = "deploy service config gateway retention archive message summary token budget".split(" ");
const text = (seed: number) => Array.from({ length: 60 }, (_, index) => words[(seed * 7 + index * 3) % words.length]).join(" ") + ` id${seed}`;

for (let conversation = 0; conversation < CONVERSATIONS; conversation++) {
  const record = await store.getOrCreateConversation({ agentId: "main", sessionId: `s${conversation}`, sessionKey: `agent:main:s${conversation}` }, old);
  const messages = Array.from({ length: PER_CONVERSATION }, (_, index) => encodeMessage(
    index % 2 === 0 ? { role: "user", content: text(index), timestamp: old + index * 1_000 }
      : { role: "assistant", content: [{ type: "text", text: text(index) }], timestamp: old + index * 1_000 } as never,
    tokens, old,
  ));
  await store.appendMessages(record.conversationId, messages, old);
  // Leaf summaries over all but the newest 40 messages, written as compaction leaves them.
  db.writeNow(() => {
    const rows = db.all<{ message_id: number; seq: number; token_count: number; created_at: number }>(
      "SELECT message_id, seq, token_count, created_at FROM messages WHERE conversation_id = ? ORDER BY seq", record.conversationId,
    );
    const covered = rows.slice(0, rows.length - 40);
    for (let start = 0; start < covered.length; start += LEAF) {
      const chunk = covered.slice(start, start + LEAF);
      const id = db.run(
        `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at,
           descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
         VALUES (?, ?, 'leaf', 0, ?, 50, ?, ?, ?, 0, ?, ?, ?, '[]', 'normal', ?)`,
        `sum_${(conversation * 1_000_000 + start).toString(16).padStart(16, "0")}`, record.conversationId, `summary ${start}`,
        chunk.reduce((sum, row) => sum + row.token_count, 0), chunk[0]!.created_at, chunk.at(-1)!.created_at, chunk.length,
        chunk[0]!.seq, chunk.at(-1)!.seq, chunk.at(-1)!.created_at,
      ).lastInsertRowid;
      chunk.forEach((row, ordinal) => db.run("INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)", id, row.message_id, ordinal));
      const first = db.get<{ ordinal: number }>("SELECT ordinal FROM context_items WHERE message_id = ? AND conversation_id = ?", chunk[0]!.message_id, record.conversationId)!.ordinal;
      db.run("DELETE FROM context_items WHERE conversation_id = ? AND message_id IN (SELECT value FROM json_each(?))", record.conversationId, JSON.stringify(chunk.map((row) => row.message_id)));
      db.run("INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count) VALUES (?, ?, ?, 50)", record.conversationId, first, id);
    }
    db.run(`UPDATE conversations SET context_tokens = (SELECT sum(token_count) FROM context_items WHERE conversation_id = ?1),
      context_raw_tokens = (SELECT coalesce(sum(token_count), 0) FROM context_items WHERE conversation_id = ?1 AND message_id IS NOT NULL),
      context_items = (SELECT count(*) FROM context_items WHERE conversation_id = ?1) WHERE conversation_id = ?1`, record.conversationId);
  });
}
// One conversation's session is gone: archived whole.
db.run("UPDATE conversations SET ended_at = ? WHERE session_id = 's0'", old);
await new SqliteSearchIndex(db).indexPending();
await checkpointFully();
const before = statSync(config.databasePath).size;
// What the two indexes schema 10 added for retention take, before the run.
const indexBytes = Object.fromEntries(db.all<{ name: string; bytes: number }>(
  `SELECT name, sum(pgsize) AS bytes FROM dbstat WHERE name IN
     ('summary_messages', 'summary_messages_message', 'context_items', 'context_items_message', 'messages') GROUP BY name`,
).map((row) => [row.name, row.bytes]));
const indexedRows = {
  summaryMessages: db.get<{ n: number }>("SELECT count(*) AS n FROM summary_messages")!.n,
  contextItemsWithMessage: db.get<{ n: number }>("SELECT count(*) AS n FROM context_items WHERE message_id IS NOT NULL")!.n,
};

const retentionStore = new SqliteRetentionStore(db);
// What `/lcm status` adds for the database's size, growth and retention outlook (retention/storage-status.ts).
const statusStarted = performance.now();
const outlook = await storageStatus(retentionStore, config, Date.UTC(2026, 6, 1));
const storageStatusMs = round(performance.now() - statusStarted);
const slowest: Record<string, number> = {};
for (const name of Object.getOwnPropertyNames(SqliteRetentionStore.prototype)) {
  const method = (retentionStore as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!;
  if (name === "constructor" || typeof method !== "function") continue;
  (retentionStore as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
    const started = performance.now();
    const result = method.apply(retentionStore, args);
    slowest[name] = Math.max(slowest[name] ?? 0, Math.round((performance.now() - started) * 10) / 10);
    return result;
  };
}
const service = new RetentionService({
  store: retentionStore, conversations: store, exportConversation: (id) => exportConversationRecords(new SqliteExportStore(db), id),
  archives: new GzipJsonlArchiveWriter(config.retentionArchiveDirectory), config, clock: { now: () => Date.UTC(2026, 6, 1) },
  logger: console,
});
const onWorker = process.env.THREAD === "worker";
// The write-ahead log's largest size while the run goes (spec 012 bounds it at 16 MB plus one transaction).
let walMaxBytes = 0;
const walSampler = setInterval(() => {
  try {
    walMaxBytes = Math.max(walMaxBytes, statSync(`${config.databasePath}-wal`).size);
  } catch {
    // no log file at this instant
  }
}, 5);
const probe = startLoopProbe();
const report = onWorker
  ? await runOnRetentionThread({
    databasePath: config.databasePath, archiveDirectory: config.retentionArchiveDirectory, budget: UNBOUNDED_BUDGET,
    settings: { retentionMaxDatabaseMb: 0, retentionMaxAgeDays: config.retentionMaxAgeDays, retentionPruneEndedSessions: true },
  }, { logger: console, onCallingThread: () => Promise.reject(new Error("no worker thread")) })
  : await service.run({ apply: true });
const loop = probe.stop();
clearInterval(walSampler);
await checkpointFully();
const after = statSync(config.databasePath).size;
const space = await retentionStore.space();
console.log(JSON.stringify({
  messages: CONVERSATIONS * PER_CONVERSATION, thread: report.thread, runLongestSliceMs: report.longestSliceMs, conversationsArchived: report.conversations.length, messagesPruned: report.messages.count,
  archives: report.messages.archivePaths.length, durationMs: report.durationMs,
  longestBlockMs: round(loop.longest.wallMs), longestBlockCpuMs: round(loop.longest.cpuMs), mostCpuInOneBlockMs: round(loop.longestCpu.cpuMs),
  loopDelayMaxMs: round(loop.delayMaxMs), loopDelayP99Ms: round(loop.delayP99Ms), loadAverage: os.loadavg().map(round),
  storageStatusMs, outlook: outlook.retention, indexBytes, indexedRows, slowestStoreCallMs: slowest, fileBytesBefore: before, fileBytesAfter: after, vacuumedBytes: report.vacuumedBytes, walMaxBytes,
  pagesInUseAfter: space.usedBytes / space.vacuumUnitBytes,
}, null, 1));

/** Copies the write-ahead log into the file; the connection's checkpoint worker may be busy checkpointing: retried. */
async function checkpointFully(): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (db.get<{ busy: number }>("PRAGMA wal_checkpoint(TRUNCATE)")?.busy === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
