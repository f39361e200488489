/**
 * A bulk backlog for the tests of a search over history the full-text index has not reached (backlog-trigram,
 * backlog-blocks): more messages than the worker's threshold, ingested at once, so maintain would hand them to the
 * backlog worker. Every third message says "alpha", a few words more in each (so relevance has an order); the oldest
 * says "firstling"; `special` puts a chosen message at chosen positions.
 */
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import type { GrepMatch } from "../../src/search/grep.js";
import { BACKLOG_WORKER_MESSAGES } from "../../src/sqlite/backlog-index-thread.js";
import type { Database } from "../../src/sqlite/database.js";
import { SqliteImportStore } from "../../src/sqlite/sqlite-import-store.js";
import { assistantMessage, userMessage } from "./messages.js";
import { createRecallEnv, detailsOf, MAIN, sessionOf } from "./recall.js";

export type BacklogEnv = ReturnType<typeof createRecallEnv>;

export const BACKLOG_TOTAL = BACKLOG_WORKER_MESSAGES + 2_000;
export const HEAVY_TIMEOUT_MS = 180_000;

export const newestMessageId = (db: Database) => db.get<{ id: number }>("SELECT max(message_id) AS id FROM messages")!.id;

export async function ingestBulkBacklog(env: BacklogEnv, special: Record<number, AgentMessage>): Promise<void> {
  const messages = Array.from({ length: BACKLOG_TOTAL }, (_, index) => {
    if (index === 0) return userMessage("note on the firstling item");
    const chosen = special[index];
    if (chosen) return chosen;
    const words = index % 3 === 0 ? `alpha ${"and more words ".repeat(index % 7)}` : "plain";
    return index % 2 ? assistantMessage(`reply ${index} ${words}`) : userMessage(`note ${index} ${words}`);
  });
  await env.api.engine().ingestBatch({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages });
}

/** lcm_grep over every conversation, its details. */
export const grepAll = async (env: BacklogEnv, params: Record<string, unknown>) =>
  detailsOf<{ matches: (GrepMatch & { content?: string })[]; truncated: boolean }>(await env.call("lcm_grep", { allConversations: true, ...params }));

/**
 * An import of 500 messages on top of the backlog, the covering structure filled by `fill` (it then reaches those
 * newest rows), then the import taken back: the newest rows go, and the next messages get their ids again.
 * `beforeTakingBack` sees the filled state.
 */
export async function importFilledThenTakenBack(env: BacklogEnv, fill: () => Promise<void>, beforeTakingBack: () => void = () => {}): Promise<void> {
  const imported = sessionOf("main", "imported");
  await env.api.engine().ingestBatch({
    sessionId: imported.sessionId, sessionKey: imported.sessionKey,
    messages: Array.from({ length: 500 }, (_, index) => userMessage(`imported line ${index}`)),
  });
  await fill();
  beforeTakingBack();
  await new SqliteImportStore(env.db).removeConversation(env.conversationId(imported) as never);
}

/** A message stored after the import was taken back (an id used again) that says "freshword". */
export async function commitFreshWord(env: BacklogEnv): Promise<void> {
  await env.commit(sessionOf("main", "later"), [userMessage("a freshword arrives"), assistantMessage("noted")]);
}
