/**
 * A backlog indexed on a worker thread of its own (issue 30, sqlite/backlog-index-thread.ts): maintain hands a bulk
 * backlog to the worker and turns go on committing meanwhile; lcm_grep during it covers the whole history and says
 * so; the worker stops when the connection closes, a killed gateway's backlog is resumed by the next one (killed
 * during the trigram fill too: spec 030, 2b), two
 * gateways on one file do not both index, and a failed worker leaves indexing to maintain, logged once.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { GrepMatch } from "../../src/search/grep.js";
import { closeSharedDatabase, openDatabase } from "../../src/sqlite/connection-registry.js";
import { BACKLOG_WORKER_MESSAGES, type BacklogIndexThread } from "../../src/sqlite/backlog-index-thread.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import type { Database } from "../../src/sqlite/database.js";
import { RecordingLogger } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, sessionOf } from "../helpers/recall.js";

const indexed = (db: Database) => db.get<{ n: number }>("SELECT count(*) AS n FROM messages_fts_docsize")!.n;
const stored = (db: Database) => db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n;
const lease = (db: Database) => db.get<{ holder: string }>("SELECT holder FROM index_worker_lease");
/** Bulk backlogs of 12,000-60,000 messages, stored and indexed on a machine shared with other work. */
const HEAVY_TIMEOUT_MS = 180_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A bulk backlog of `count` messages, the oldest saying "firstling", the newest "lastling". */
async function bulkBacklog(env: ReturnType<typeof createRecallEnv>, count: number): Promise<void> {
  const messages = Array.from({ length: count }, (_, index) =>
    index % 2 ? assistantMessage(`reply ${index} about the plan`) : userMessage(`note ${index} on the ${index === 0 ? "firstling" : index === count - 2 ? "lastling" : "middle"} item`),
  );
  await env.api.engine().ingestBatch({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages });
}

async function until(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * The connection's backlog worker once maintain started it: maintain compacts a large history first, and may answer
 * the host before it gets to the index (it goes on in the background).
 */
async function startedWorker(db: Database): Promise<BacklogIndexThread> {
  await until(() => db.backlogIndexer !== null, "maintain to start the backlog worker");
  return db.backlogIndexer as BacklogIndexThread;
}

describe("backlog indexing on a worker thread", () => {
  it("maintain hands a bulk backlog to the worker; turns commit meanwhile and lcm_grep covers the whole history", async () => {
    const env = createRecallEnv();
    const total = BACKLOG_WORKER_MESSAGES + 2_000;
    await bulkBacklog(env, total);
    expect(indexed(env.db)).toBe(0);
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    const thread = await startedWorker(env.db);
    // maintain left the backlog to the worker: it indexed nothing itself.
    expect(indexed(env.db)).toBeLessThan(total);

    const live = sessionOf("main", "live");
    let turns = 0;
    let searches = 0;
    while (thread.isRunning) {
      await env.commit(live, [userMessage(`live question ${turns}`), assistantMessage(`live answer ${turns}`)]);
      await env.api.engine().maintain({ sessionId: live.sessionId, sessionKey: live.sessionKey });
      turns++;
      if (indexed(env.db) < total && searches < 3) {
        const found = detailsOf<{ matches: GrepMatch[]; truncated: boolean }>(await env.call("lcm_grep", { pattern: "firstling", mode: "full_text" }));
        expect(found.matches).toHaveLength(1);
        expect(found.truncated).toBe(false);
        searches++;
      }
    }
    await thread.exited;
    expect(turns).toBeGreaterThan(1);
    expect(searches).toBeGreaterThan(0);
    expect(thread.lastRun).toMatchObject({ ending: "caught-up" });
    expect(thread.lastRun!.indexed).toBeGreaterThanOrEqual(total);
    // Every turn stored, in order, with dense sequence numbers; and every message indexed once the maintains caught up.
    const seqs = env.db.all<{ seq: number }>(
      "SELECT m.seq FROM messages m JOIN conversations c USING (conversation_id) WHERE c.session_id = ? ORDER BY m.seq", live.sessionId,
    ).map((row) => row.seq);
    expect(seqs).toEqual(Array.from({ length: turns * 2 }, (_, index) => index + 1));
    // The last turns' few messages are below maintain's batch: a search indexes them before it reads.
    await new SqliteSearchIndex(env.db).indexPending();
    expect(indexed(env.db)).toBe(stored(env.db));
    expect(lease(env.db)).toBeUndefined();
    expect(await new SqliteSearchIndex(env.db).verify("messages_fts")).toBeNull();
    for (const pattern of ["firstling", "lastling"]) {
      expect(detailsOf<{ matches: GrepMatch[] }>(await env.call("lcm_grep", { pattern, mode: "full_text" })).matches, pattern).toHaveLength(1);
    }
  }, HEAVY_TIMEOUT_MS);

  it("stops after its slice when the connection closes; the next start resumes where it stopped", async () => {
    const env = createRecallEnv();
    const total = 4 * BACKLOG_WORKER_MESSAGES;
    await bulkBacklog(env, total);
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    const thread = await startedWorker(env.db);
    await until(() => indexed(env.db) > 0, "the first slice");
    closeSharedDatabase(env.databasePath);
    await thread.exited;
    expect(thread.lastRun).toMatchObject({ ending: "stopped" });

    const db = openDatabase(env.databasePath);
    const stoppedAt = indexed(db);
    expect(stoppedAt).toBeGreaterThan(0);
    expect(stoppedAt).toBeLessThan(total);
    expect(lease(db)).toBeUndefined();
    await sleep(300);
    expect(indexed(db)).toBe(stoppedAt); // nothing indexes after the stop
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    await until(() => indexed(db) === total, "the resumed run");
    expect(await new SqliteSearchIndex(db).verify("messages_fts")).toBeNull();
    db.close();
  }, HEAVY_TIMEOUT_MS);

  it("a killed gateway's backlog is resumed by the next start, without waiting for its lease to expire", async () => {
    const env = createRecallEnv();
    const total = 6 * BACKLOG_WORKER_MESSAGES;
    await bulkBacklog(env, total);
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./backlog-child.ts", import.meta.url)), env.databasePath], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await until(() => indexed(env.db) > 0, "the child's first slice", 60_000);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const killedAt = indexed(env.db);
    expect(killedAt).toBeLessThan(total);
    expect(lease(env.db)!.holder).toContain(`:${child.pid}:`); // the dead process still "holds" it
    // maintain compacts this history first (it may answer before it gets to the index, and go on in the background).
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    const thread = await startedWorker(env.db);
    await thread.exited;
    expect(thread.lastRun).toMatchObject({ ending: "caught-up" }); // this process's worker did it
    expect(indexed(env.db)).toBe(total);
    expect(await new SqliteSearchIndex(env.db).verify("messages_fts")).toBeNull();
  }, HEAVY_TIMEOUT_MS);

  it("a gateway killed while its worker fills the trigram index: the next start finishes it, indexes, and empties it", async () => {
    const env = createRecallEnv();
    const total = 6 * BACKLOG_WORKER_MESSAGES;
    await bulkBacklog(env, total);
    const trigramThrough = () => env.db.get<{ through: number }>("SELECT through FROM search_index_state WHERE name = 'backlog_trigram'")!.through;
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./backlog-child.ts", import.meta.url)), env.databasePath], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await until(() => trigramThrough() > 0, "the child's first trigram slice", 60_000);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const killedAt = trigramThrough();
    expect(killedAt).toBeLessThan(total);
    expect(indexed(env.db)).toBe(0);
    // Meanwhile a search covers the rows it holds and the rest, directly.
    const found = detailsOf<{ matches: GrepMatch[]; truncated: boolean }>(await env.call("lcm_grep", { pattern: "firstling", mode: "full_text" }));
    expect(found).toMatchObject({ truncated: false, matches: [expect.anything()] });
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    const thread = await startedWorker(env.db);
    await thread.exited;
    expect(thread.lastRun).toMatchObject({ ending: "caught-up" });
    expect(indexed(env.db)).toBe(total);
    expect(await new SqliteSearchIndex(env.db).verify("messages_fts")).toBeNull();
    // Caught up: emptied (only FTS5's own records left), its watermark back to 0.
    expect(trigramThrough()).toBe(0);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM backlog_trigram_data WHERE id > 10")!.n).toBe(0);
  }, HEAVY_TIMEOUT_MS);

  it("two gateways on one file: while one's worker holds the lease, the other neither indexes nor starts a worker", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env, 4 * BACKLOG_WORKER_MESSAGES);
    const first = openDatabase(env.databasePath);
    const second = openDatabase(env.databasePath);
    const logger = new RecordingLogger();
    expect(await new SqliteSearchIndex(first).indexBacklogInBackground(logger)).toBe(true);
    await until(() => lease(first) !== undefined, "the first worker's lease");
    const before = indexed(second);
    expect(await new SqliteSearchIndex(second).indexBacklogInBackground(logger)).toBe(true);
    expect((second.backlogIndexer as BacklogIndexThread).isRunning).toBe(false);
    const firstThread = first.backlogIndexer as BacklogIndexThread;
    await firstThread.exited;
    expect(firstThread.lastRun!.indexed).toBeGreaterThanOrEqual(4 * BACKLOG_WORKER_MESSAGES - before);
    first.close();
    second.close();
  }, HEAVY_TIMEOUT_MS);

  it("a worker that fails leaves the backlog to maintain's in-turn indexing, and says so once", async () => {
    const env = createRecallEnv();
    await bulkBacklog(env, BACKLOG_WORKER_MESSAGES + 10);
    const failing = { url: new URL("data:text/javascript,throw new Error('no sqlite here')"), execArgv: [] };
    const index = new SqliteSearchIndex(env.db, { workerEntry: failing });
    const logger = new RecordingLogger();
    expect(await index.indexBacklogInBackground(logger)).toBe(true);
    await (env.db.backlogIndexer as BacklogIndexThread).exited;
    expect(await index.indexBacklogInBackground(logger)).toBe(false);
    expect(await index.indexBacklogInBackground(logger)).toBe(false);
    expect(logger.lines.filter((line) => line.level === "warn").map((line) => line.message)).toEqual([
      expect.stringMatching(/backlog worker failed \(.*no sqlite here.*\); the turns' maintenance indexes the backlog instead/),
    ]);
    // maintain, on the same connection, indexes in turn again.
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    expect(indexed(env.db)).toBeGreaterThan(0);
  }, HEAVY_TIMEOUT_MS);
});
