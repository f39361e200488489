/**
 * Retention's policy effects on both backends, with the real RetentionService over the backend's stores and rows
 * planted with SQL: off by default; an age cap empties only covered messages older than it (stubs stay, naming their
 * archive; summaries and the context stay; the archive holds the text, NUL included); an ended conversation goes
 * whole, its stored file with it; a conversation that changed since it was planned stays. PostgreSQL only: a
 * conversation whose advisory lock another connection holds is skipped at once and reported so, then taken next run.
 */
import { mkdirSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isLcmError } from "../../src/errors.js";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import type { SummaryDescription } from "../../src/retrieval/describe.js";
import { createRecallServices } from "../../src/retrieval/recall-services.js";
import { RecallService } from "../../src/services/recall-service.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { LCM_LOCK_NAMESPACE } from "../../src/postgres/pg-queryable.js";
import { GzipJsonlArchiveWriter } from "../../src/retention/archive-writer.js";
import { retentionServiceFor } from "../../src/plugin.js";
import { RetentionService } from "../../src/retention/retention-service.js";
import { resolveConfig } from "../../src/config.js";
import { exportConversationRecords } from "../../src/transfer/jsonl-export.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { type BackendSql, backendSql } from "../helpers/backend-sql.js";
import { RecordingLogger } from "../helpers/engine.js";
import { PLANTED_BASE_TIME, plantConversation } from "../helpers/planted-conversation.js";
import { tempDir } from "../helpers/temp-dir.js";
import { readArchive } from "../retention/retention-helpers.js";

const DAY = 24 * 60 * 60 * 1_000;
const OPERATOR = { kind: "operator" } as const;
const NOW = PLANTED_BASE_TIME + 100 * DAY;
const ODD = (seq: number) => `message ${seq}: NUL\u0000here, line\u2028sep, crab 🦀`;

describe.each(backendKinds())("retention on %s", (kind) => {
  let opened: TestBackend;
  let sql: BackendSql;
  let directory: string;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
    sql = backendSql(opened);
    directory = tempDir();
  });
  afterEach(async () => {
    await opened.close();
  });

  const service = (settings: Record<string, unknown>, logger = new RecordingLogger()) => {
    const config = resolveConfig({ databasePath: join(directory, "lcm.db"), retentionArchiveDirectory: join(directory, "archives"), ...settings }, {});
    return new RetentionService({
      store: opened.backend.retention, conversations: opened.backend.store,
      exportConversation: (id) => exportConversationRecords(opened.backend.exports, id),
      archives: new GzipJsonlArchiveWriter(config.retentionArchiveDirectory), config, clock: { now: () => NOW }, logger,
    });
  };
  const findings = async () => (await new IntegrityChecker({
    store: opened.backend.integrity, clock: { now: () => NOW }, fileExists: async (path) => existsSync(path),
  }).check({ includeIndexes: false })).findings;
  const messageRows = (conversationId: number) => sql.rows<{ seq: number; content: string; archive_id: number | null }>(
    "SELECT seq, content, archive_id FROM messages WHERE conversation_id = $1 ORDER BY seq", [conversationId],
  );

  it("does nothing when no retention setting is on", async () => {
    const planted = await plantConversation(sql);
    const report = await service({}).run({ apply: true });
    expect(report).toMatchObject({ enabled: false, conversations: [], messages: { count: 0 }, busyConversations: [] });
    expect((await messageRows(planted.conversationId)).every((row) => row.archive_id === null)).toBe(true);
  });

  it("under an age cap empties the covered messages older than it into an archive; stubs, summaries and the context stay", async () => {
    const planted = await plantConversation(sql, { texts: ODD });
    const young = await plantConversation(sql, { sessionId: "young" });
    // The second conversation is 10 days old: younger than the 30-day cap.
    await sql.run("UPDATE messages SET created_at = created_at + $1 WHERE conversation_id = $2", [90 * DAY, young.conversationId]);
    await sql.run("UPDATE summaries SET earliest_at = earliest_at + $1, latest_at = latest_at + $1 WHERE conversation_id = $2", [90 * DAY, young.conversationId]);
    const report = await service({ retentionMaxAgeDays: 30 }).run({ apply: true });
    expect(report.messages.count).toBe(8);
    expect(report.busyConversations).toEqual([]);
    const rows = await messageRows(planted.conversationId);
    expect(rows.slice(0, 8).map((row) => row.content)).toEqual(Array(8).fill(""));
    expect(rows.slice(0, 8).every((row) => row.archive_id !== null)).toBe(true);
    // The raw messages the context shows stay whole.
    expect(rows.slice(8).map((row) => row.archive_id)).toEqual([null, null, null, null]);
    expect((await messageRows(young.conversationId)).every((row) => row.archive_id === null)).toBe(true);
    const [archive] = report.messages.archivePaths;
    const records = readArchive(archive!).filter((record) => record.type === "message");
    expect(records.map((record) => record.content)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map(ODD));
    expect(await opened.backend.retention.lastArchiveAt()).toBe(NOW);
    expect(await findings()).toEqual([]);
    // A second run finds nothing more to do.
    expect((await service({ retentionMaxAgeDays: 30 }).run({ apply: true })).messages.count).toBe(0);
  });

  it("runs maintain's background run on a worker thread with a connection of its own, to the same effect", async () => {
    const planted = await plantConversation(sql, { texts: ODD });
    // The plugin's settings for this backend: the file, or the server's URL (the worker opens a pool of its own).
    const config = resolveConfig({
      databasePath: kind === "sqlite" ? opened.location : join(directory, "unused.db"), ...(kind === "postgres" ? { databaseUrl: opened.location } : {}),
      retentionArchiveDirectory: join(directory, "archives"), retentionMaxAgeDays: 30,
    }, {});
    const logger = new RecordingLogger();
    // The worker's clock is the real one: the planted messages (2026-01-01) are months older than the cap.
    const report = await retentionServiceFor(opened.backend, config, logger).runInBackground();
    expect(report).toMatchObject({ thread: "worker", applied: true, messages: { count: 8 } });
    expect(report!.callerBusyMs).toBeGreaterThan(0);
    const rows = await messageRows(planted.conversationId);
    expect(rows.slice(0, 8).every((row) => row.content === "" && row.archive_id !== null)).toBe(true);
    const records = readArchive(report!.messages.archivePaths[0]!).filter((record) => record.type === "message");
    expect(records.map((record) => record.content)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map(ODD));
    expect(logger.lines.map((line) => line.message)).toEqual([expect.stringMatching(/archived 8 covered message\(s\).* on a worker thread/)]);
    expect(await findings()).toEqual([]);
  });

  it("archives an ended conversation whole and removes its rows and stored file", async () => {
    const kept = await plantConversation(sql);
    const gone = await plantConversation(sql, { sessionId: "gone", endedAt: PLANTED_BASE_TIME + 20_000 });
    const file = join(directory, "files", "file_gone.txt");
    mkdirSync(join(directory, "files"), { recursive: true });
    writeFileSync(file, "stored aside");
    await sql.run(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, byte_size, token_count, storage_path, exploration_summary, explorer, origin, created_at)
       VALUES ('file_gone', $1, 'hash', 12, 3, $2, 'a file', 'none', 'tool', 0)`, [gone.conversationId, file],
    );
    await sql.run("INSERT INTO committed_turns (conversation_id, advancement_key, committed_at, message_count) VALUES ($1, 'turn-1', 0, 12)", [gone.conversationId]);
    // A repair was once made to one of its summaries: its undo record names the conversation.
    await sql.run(
      "INSERT INTO summary_repairs (conversation_id, summary_id, kind, created_at, detail, before, after) VALUES ($1, $2, 'rewrite', 0, '{}', '{}', '{}')",
      [gone.conversationId, gone.summaryIds.leaves[0]],
    );
    const report = await service({ retentionPruneEndedSessions: true }).run({ apply: true });
    expect(report.conversations.map((entry) => [entry.conversationId, entry.messages])).toEqual([[gone.conversationId, 12]]);
    expect(report.removedFiles).toBe(1);
    expect(existsSync(file)).toBe(false);
    for (const table of ["messages", "summaries", "context_items", "large_files", "committed_turns", "summary_repairs", "conversations"]) {
      expect(await sql.rows(`SELECT 1 FROM ${table} WHERE conversation_id = $1`, [gone.conversationId])).toEqual([]);
    }
    expect((await messageRows(kept.conversationId)).length).toBe(12);
    expect(await opened.backend.retention.unfinishedDeletions()).toEqual([]);
    expect(await opened.backend.retention.archivePathsOf(gone.conversationId)).toEqual([report.conversations[0]!.archivePath]);
    expect(await findings()).toEqual([]);
  });

  it("does not begin deleting a conversation that changed since it was planned", async () => {
    const gone = await plantConversation(sql, { sessionId: "gone", endedAt: PLANTED_BASE_TIME + 20_000 });
    const [candidate] = await opened.backend.retention.endedConversations(NOW, 10);
    expect(candidate?.conversationId).toBe(gone.conversationId);
    const archive = {
      kind: "conversation" as const, path: join(directory, "a.jsonl.gz"), createdAt: NOW, conversationId: gone.conversationId, reason: "ended-session",
      messageCount: 12, seqStart: null, seqEnd: null, byteSize: 1,
    };
    expect(await opened.backend.retention.beginConversationDeletion(archive, candidate!.updatedAt - 1)).toBeNull();
    expect(await opened.backend.retention.unfinishedDeletions()).toEqual([]);
    expect(typeof await opened.backend.retention.beginConversationDeletion(archive, candidate!.updatedAt)).toBe("number");
    expect((await opened.backend.retention.unfinishedDeletions()).map((entry) => [entry.conversationId, entry.state])).toEqual([[gone.conversationId, "deleting"]]);
  });

  it("states the space it takes in bytes, and how freed room goes back", async () => {
    await plantConversation(sql);
    const space = await opened.backend.retention.space();
    expect(space.usedBytes).toBeGreaterThan(0);
    expect(space.freeBytes).toBeGreaterThanOrEqual(0);
    expect(space.autoVacuum).toBe(kind === "postgres" ? "server" : "incremental");
    const file = await opened.backend.operator.fileInfo();
    expect(file).toMatchObject({ backend: kind === "postgres" ? "postgresql" : "sqlite" });
    expect(file.sizeBytes).toBeGreaterThan(0);
    await opened.backend.retention.reclaimSpace({ full: false });
  });

  const recall = () => {
    const { store, retrieval, grants } = opened.backend;
    const config = resolveConfig({ databasePath: join(directory, "lcm.db") }, {});
    const services = createRecallServices({ store, retrievalStore: retrieval, grants, config, tokens: new DefaultTokenEstimator(), clock: { now: () => NOW }, logger: new RecordingLogger() });
    return new RecallService({
      recall: services, clock: { now: () => NOW },
      conversations: { listRecallConversationIds: (agentId) => retrieval.listRecallConversationIds(agentId), getConversation: (id) => store.getConversation(id) },
    });
  };

  it("recall says where pruned sources and a conversation archived whole went", async () => {
    const pruned = await plantConversation(sql);
    const gone = await plantConversation(sql, { sessionId: "gone", endedAt: PLANTED_BASE_TIME + 20_000 });
    const report = await service({ retentionMaxAgeDays: 30, retentionPruneEndedSessions: true }).run({ apply: true });
    const messagesArchive = report.messages.archivePaths[0]!;
    const conversationArchive = report.conversations.find((entry) => entry.conversationId === gone.conversationId)!.archivePath!;
    const description = (await recall().describe(OPERATOR, pruned.summaryIds.leaves[0], {})) as SummaryDescription;
    expect(description.archivedSources).toEqual([{
      archivePath: messagesArchive, archivedAt: new Date(NOW).toISOString(), conversationId: pruned.conversationId, messageIds: pruned.messageIds.slice(0, 4),
    }]);
    const walked = await recall().walk(OPERATOR, { summaryId: pruned.summaryIds.leaves[0], depth: 1, includeMessages: true });
    const messages = walked.items.filter((item) => item.type === "message");
    expect(messages).toHaveLength(4);
    for (const item of messages) expect(item.content).toContain(messagesArchive);
    const error = await recall().describe(OPERATOR, gone.summaryIds.condensed, {}).then(() => null, (caught: unknown) => caught);
    expect(isLcmError(error, "not_found")).toBe(true);
    expect((error as Error).message).toContain(conversationArchive);
    expect((error as Error).message).toContain(`conversation ${gone.conversationId}`);
  });

  /** Holds conversations' advisory locks on a connection of its own, as another gateway compacting them would. */
  const holdLocks = async (conversationIds: number[]) => {
    const other = new PgDatabase(opened.location, { poolSize: 1 });
    const client = await (await other.pool()).connect();
    for (const id of conversationIds) await client.query("SELECT pg_advisory_lock($1, $2)", [LCM_LOCK_NAMESPACE, id]);
    return {
      release: async () => {
        await client.query("SELECT pg_advisory_unlock_all()");
        client.release();
        await other.close();
      },
    };
  };

  it.runIf(kind === "postgres")("skips a conversation another gateway holds, at once, reports it skipped, and prunes it on the next run", async () => {
    const held = await plantConversation(sql);
    const free = await plantConversation(sql, { sessionId: "free" });
    const locks = await holdLocks([held.conversationId]);
    try {
      const started = Date.now();
      // As maintain starts it: in the background, its report logged.
      const logger = new RecordingLogger();
      const report = (await service({ retentionMaxAgeDays: 30 }, logger).runInBackground())!;
      expect(Date.now() - started).toBeLessThan(10_000); // no wait for the lock (the statement timeout is 30 s)
      expect(report.busyConversations).toEqual([held.conversationId]);
      expect(logger.lines.map((line) => line.message).join("\n"))
        .toContain("skipped 1 conversation(s) another gateway was compacting or repairing (the next run takes them)");
      expect(logger.lines.filter((line) => line.level === "warn")).toEqual([]);
      expect(report.messages.count).toBe(8);
      expect((await messageRows(held.conversationId)).every((row) => row.archive_id === null)).toBe(true);
      expect((await messageRows(free.conversationId)).filter((row) => row.archive_id !== null).length).toBe(8);
    } finally {
      await locks.release();
    }
    const next = await service({ retentionMaxAgeDays: 30 }).run({ apply: true });
    expect(next.busyConversations).toEqual([]);
    expect(next.messages.count).toBe(8);
    expect((await messageRows(held.conversationId)).filter((row) => row.archive_id !== null).length).toBe(8);
    expect(await findings()).toEqual([]);
  });

  it.runIf(kind === "postgres")("logs a background run that only skipped, rather than saying nothing", async () => {
    const held = await plantConversation(sql);
    const locks = await holdLocks([held.conversationId]);
    const logger = new RecordingLogger();
    try {
      const report = (await service({ retentionMaxAgeDays: 30 }, logger).runInBackground())!;
      expect(report).toMatchObject({ busyConversations: [held.conversationId], messages: { count: 0 } });
    } finally {
      await locks.release();
    }
    expect(logger.lines.map((line) => [line.level, line.message.includes("skipped 1 conversation(s) another gateway was compacting or repairing")]))
      .toEqual([["info", true]]);
  });

  it.runIf(kind === "postgres")("neither begins nor steps a whole-conversation deletion while another gateway holds it", async () => {
    const gone = await plantConversation(sql, { sessionId: "gone", endedAt: PLANTED_BASE_TIME + 20_000 });
    const [candidate] = await opened.backend.retention.endedConversations(NOW, 10);
    const archive = {
      kind: "conversation" as const, path: join(directory, "a.jsonl.gz"), createdAt: NOW, conversationId: gone.conversationId, reason: "ended-session",
      messageCount: 12, seqStart: null, seqEnd: null, byteSize: 1,
    };
    let locks = await holdLocks([gone.conversationId]);
    try {
      expect(await opened.backend.retention.beginConversationDeletion(archive, candidate!.updatedAt)).toBe("busy");
      expect(await opened.backend.retention.unfinishedDeletions()).toEqual([]);
    } finally {
      await locks.release();
    }
    const archiveId = await opened.backend.retention.beginConversationDeletion(archive, candidate!.updatedAt);
    expect(typeof archiveId).toBe("number");
    locks = await holdLocks([gone.conversationId]);
    const slice = { expired: () => false, waitFor: <T>(work: () => Promise<T>) => work() };
    try {
      expect(await opened.backend.retention.deleteConversationStep(archiveId as number, slice)).toEqual({ deleted: 0, removedFilePaths: [], finished: false, busy: true });
      expect(await messageRows(gone.conversationId)).toHaveLength(12);
    } finally {
      await locks.release();
    }
    const step = await opened.backend.retention.deleteConversationStep(archiveId as number, slice);
    expect(step).toMatchObject({ finished: true, busy: false });
    expect(await sql.rows("SELECT 1 FROM conversations WHERE conversation_id = $1", [gone.conversationId])).toEqual([]);
    expect(await opened.backend.retention.unfinishedDeletions()).toEqual([]);
  });
});
