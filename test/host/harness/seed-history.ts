/**
 * Seeds a plugin database, before a gateway opens it, with history as a database that has served for months holds
 * it: conversations of agent turns (the benchmark's generator: prose, code, tool calls and their output) stored
 * through the engine's own ingest, leaf summaries over all but each conversation's newest turns as compaction
 * leaves them, the full-text index brought up to date as maintenance would have. The retention scenario starts
 * from it. The seed must pass the integrity checker, or the scenario's own checks would prove nothing.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { type ConversationPlan, SessionGenerator } from "../../../bench/generate.js";
import { Random } from "../../../bench/random.js";
import { Vocabulary } from "../../../bench/vocabulary.js";
import { closeSharedDatabase } from "../../../src/sqlite/connection-registry.js";
import type { AgentMessage } from "../../../src/host/openclaw-types.js";
import { IntegrityChecker } from "../../../src/integrity/integrity-checker.js";
import { SqliteIntegrityStore } from "../../../src/sqlite/sqlite-integrity-store.js";
import { SqliteSearchIndex } from "../../../src/sqlite/sqlite-search-index.js";
import { openPostgresBackend } from "../../../src/postgres/open-postgres-backend.js";
import { openSqliteBackend } from "../../../src/sqlite/open-sqlite-backend.js";
import { copyAllTables } from "../../../src/transfer/table-migration.js";
import { createTestEngine } from "../../helpers/engine.js";
import type { PluginDatabase } from "./plugin-database.js";

const DAY = 24 * 60 * 60 * 1_000;
/** Messages per ingestBatch call, as a bootstrap import hands them over. */
const INGEST_BATCH = 500;

export interface SeedOptions {
  conversations: number;
  /** Messages generated per conversation (the host's excluded entries among them are not stored). */
  messagesPerConversation: number;
  /** The first conversation starts this long ago; each spans weeks (turns 30 s to 1 h apart). */
  startedDaysAgo: number;
  /** Messages per leaf summary. */
  leafMessages: number;
  /** At least this many of each conversation's newest messages stay raw in its context (cut at a user message). */
  rawTailMessages: number;
  seed?: number;
}

export interface SeededConversation {
  conversationId: number;
  sessionKey: string;
  messages: number;
  /** Messages leaf summaries cover: what an age cap shorter than the history's age may archive. */
  covered: number;
  /** created_at of the newest message. */
  newestAt: number;
}

/**
 * Seeds the suite's database: its SQLite file, or, when the plugin stores in PostgreSQL, a SQLite file beside it that
 * is then copied into the PostgreSQL database as `lcm migrate sqlite-to-postgres` copies (ids kept; PostgreSQL builds
 * its own search index from the copied rows).
 */
export async function seedSummarizedHistory(database: PluginDatabase, options: SeedOptions): Promise<SeededConversation[]> {
  if (database.url === null) return seedSqlite(database.path, options);
  const seedPath = join(dirname(database.path), "seed.db");
  const seeded = await seedSqlite(seedPath, options);
  const source = openSqliteBackend(seedPath, "private");
  const target = openPostgresBackend(database.url, "private");
  try {
    await copyAllTables(source.tableCopy, target.tableCopy);
  } finally {
    await source.close();
    await target.close();
  }
  return seeded;
}

async function seedSqlite(databasePath: string, options: SeedOptions): Promise<SeededConversation[]> {
  const setup = createTestEngine({ databasePath });
  const root = new Random(options.seed ?? 18);
  const vocabulary = new Vocabulary(root.fork());
  const seeded: SeededConversation[] = [];
  for (let index = 1; index <= options.conversations; index++) {
    const plan: ConversationPlan = {
      role: "other", agentId: "main", sessionId: `history-${index}`, sessionKey: `agent:main:history-${index}`,
      messageTarget: options.messagesPerConversation,
    };
    const generator = new SessionGenerator(plan, root.fork(), vocabulary, Date.now() - options.startedDaysAgo * DAY + index * 60_000, false);
    let batch: AgentMessage[] = [];
    const engine = setup.newEngine();
    while (!generator.isDone) {
      batch.push(...generator.nextTurn());
      if (batch.length >= INGEST_BATCH || generator.isDone) {
        await engine.ingestBatch({ sessionId: plan.sessionId, sessionKey: plan.sessionKey, messages: batch });
        batch = [];
      }
    }
    seeded.push(summarizeAllButTail(setup, plan.sessionKey, options));
  }
  await new SqliteSearchIndex(setup.db).indexPending();
  const checker = new IntegrityChecker({ store: new SqliteIntegrityStore(setup.db), clock: { now: () => Date.now() }, fileExists: async (path) => existsSync(path) });
  const { findings } = await checker.check();
  closeSharedDatabase(databasePath);
  if (findings.length > 0) {
    throw new Error(`The seeded history is not consistent (${findings.length} finding(s), first: ${JSON.stringify(findings[0])}); fix seed-history.ts.`);
  }
  return seeded;
}

/**
 * Leaf summaries of `leafMessages` context messages each over everything before the raw tail (which starts at a user
 * message), in one transaction, written as compaction writes them: the summary, its edges to the messages, its context
 * item in place of theirs, the conversation's counters. Only messages in the context are covered; the host's hidden
 * entries (excluded from the context) are stored and never summarized.
 */
function summarizeAllButTail(setup: ReturnType<typeof createTestEngine>, sessionKey: string, options: SeedOptions): SeededConversation {
  const { db } = setup;
  const conversationId = db.get<{ id: number }>("SELECT conversation_id AS id FROM conversations WHERE session_key = ?", sessionKey)!.id;
  return db.writeNow(() => {
    const items = db.all<{ ordinal: number; message_id: number; seq: number; role: string; token_count: number; created_at: number }>(
      `SELECT ci.ordinal, m.message_id, m.seq, m.role, m.token_count, m.created_at
         FROM context_items ci JOIN messages m ON m.message_id = ci.message_id
        WHERE ci.conversation_id = ? ORDER BY ci.ordinal`,
      conversationId,
    );
    // A tail that starts at a user message keeps every tool call in the context beside its result.
    let tailStart = items.length - options.rawTailMessages;
    while (tailStart > 0 && items[tailStart]!.role !== "user") tailStart--;
    const covered = items.slice(0, tailStart);
    for (let start = 0; start < covered.length; start += options.leafMessages) {
      const chunk = covered.slice(start, start + options.leafMessages);
      const first = chunk[0]!;
      const last = chunk.at(-1)!;
      const content = `Messages ${first.seq}-${last.seq} of ${sessionKey}: the user asked about the deployment, tools ran, the answer settled it.`;
      const tokenCount = Math.ceil(content.length / 4);
      const rowId = db.run(
        `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at,
           latest_at, descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
         VALUES (?, ?, 'leaf', 0, ?, ?, ?, ?, ?, 0, ?, ?, ?, '[]', 'normal', ?)`,
        `sum_${(conversationId * 1_000_000 + start).toString(16).padStart(16, "0")}`, conversationId, content, tokenCount,
        chunk.reduce((sum, item) => sum + item.token_count, 0), first.created_at, last.created_at, chunk.length, first.seq, last.seq,
        last.created_at + 1,
      ).lastInsertRowid;
      chunk.forEach((item, ordinal) => db.run("INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)", rowId, item.message_id, ordinal));
      db.run("DELETE FROM context_items WHERE conversation_id = ? AND ordinal BETWEEN ? AND ?", conversationId, first.ordinal, last.ordinal);
      db.run("INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count, flags) VALUES (?, ?, ?, ?, 0)", conversationId, first.ordinal, rowId, tokenCount);
    }
    db.run(
      `UPDATE conversations SET context_tokens = (SELECT sum(token_count) FROM context_items WHERE conversation_id = ?1),
         context_raw_tokens = (SELECT coalesce(sum(token_count), 0) FROM context_items WHERE conversation_id = ?1 AND message_id IS NOT NULL),
         context_items = (SELECT count(*) FROM context_items WHERE conversation_id = ?1) WHERE conversation_id = ?1`,
      conversationId,
    );
    const messages = db.get<{ n: number; newest: number }>("SELECT count(*) AS n, max(created_at) AS newest FROM messages WHERE conversation_id = ?", conversationId)!;
    return { conversationId, sessionKey, messages: messages.n, covered: covered.length, newestAt: messages.newest };
  });
}
