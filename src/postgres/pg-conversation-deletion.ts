/**
 * Deleting a conversation retention archived whole, on PostgreSQL: the next small batch of its rows, in the order
 * that leaves nothing pointing at a deleted row (context items, summaries newest first with their edges, messages
 * with their parts, large files, turns, repair records), then the row itself. Runs inside the caller's transaction,
 * which holds the conversation's advisory lock (pg-retention-store.ts deleteConversationStep).
 */
import { isAbsolute, resolve } from "node:path";
import { fromPgText } from "./pg-database.js";
import type { PgQueryable } from "./pg-queryable.js";

/**
 * Rows per batch; a transaction takes batches until its time slice has run out. A summary is deleted with its edges
 * (a leaf links tens of messages), hence far fewer of them per batch.
 */
const DELETE_BATCH = { contextItems: 100, summaries: 4, messages: 25, files: 10, turns: 100, repairs: 100 } as const;

/** Deletes the next batch; returns the rows deleted (0 once only the conversation's row is left). */
export async function deleteNextRows(tx: PgQueryable, conversationId: number, archiveId: number, removedFilePaths: string[]): Promise<number> {
  const items = await tx.rows<{ ordinal: number }>(
    "SELECT ordinal FROM context_items WHERE conversation_id = $1 ORDER BY ordinal DESC LIMIT $2", [conversationId, DELETE_BATCH.contextItems],
  );
  if (items.length > 0) {
    await tx.run("DELETE FROM context_items WHERE conversation_id = $1 AND ordinal >= $2", [conversationId, items.at(-1)!.ordinal]);
    return items.length;
  }
  const summaries = await tx.rows<{ id: number; summary_id: string }>(
    "SELECT id, summary_id FROM summaries WHERE conversation_id = $1 ORDER BY id DESC LIMIT $2", [conversationId, DELETE_BATCH.summaries],
  );
  if (summaries.length > 0) {
    const ids = summaries.map((row) => row.id);
    await recordArchivedIds(tx, summaries.map((row) => row.summary_id), archiveId);
    await tx.run("DELETE FROM summary_parents WHERE summary_id = ANY($1::bigint[]) OR parent_summary_id = ANY($1::bigint[])", [ids]);
    await tx.run("DELETE FROM summary_messages WHERE summary_id = ANY($1::bigint[])", [ids]);
    await tx.run("DELETE FROM summaries WHERE id = ANY($1::bigint[])", [ids]);
    return summaries.length;
  }
  const messages = await tx.rows<{ message_id: number }>(
    "SELECT message_id FROM messages WHERE conversation_id = $1 ORDER BY seq DESC LIMIT $2", [conversationId, DELETE_BATCH.messages],
  );
  if (messages.length > 0) {
    const ids = messages.map((row) => row.message_id);
    await tx.run("DELETE FROM message_parts WHERE message_id = ANY($1::bigint[])", [ids]);
    await tx.run("DELETE FROM messages WHERE message_id = ANY($1::bigint[])", [ids]);
    return messages.length;
  }
  const files = await tx.rows<{ file_id: string; storage_path: string }>(
    "SELECT file_id, storage_path FROM large_files WHERE conversation_id = $1 ORDER BY file_id LIMIT $2", [conversationId, DELETE_BATCH.files],
  );
  if (files.length > 0) {
    await recordArchivedIds(tx, files.map((file) => file.file_id), archiveId);
    await tx.run("DELETE FROM large_files WHERE file_id = ANY($1::text[])", [files.map((file) => file.file_id)]);
    // A server has no database folder: a relative path is the working directory's (as pg-integrity-store.ts reads it).
    for (const file of files) removedFilePaths.push(resolvedPath(fromPgText(file.storage_path)));
    return files.length;
  }
  const turns = await tx.run(
    `DELETE FROM committed_turns WHERE conversation_id = $1 AND advancement_key IN
       (SELECT advancement_key FROM committed_turns WHERE conversation_id = $1 LIMIT $2)`,
    [conversationId, DELETE_BATCH.turns],
  );
  if (turns > 0) return turns;
  // Undo records of repairs to summaries that are gone (they name the conversation, which is going too).
  return tx.run(
    `DELETE FROM summary_repairs WHERE repair_id IN (SELECT repair_id FROM summary_repairs WHERE conversation_id = $1 LIMIT $2)`,
    [conversationId, DELETE_BATCH.repairs],
  );
}

/** Where recall finds an archived summary or file: the archive's id, by the id the tools know (stored as written). */
async function recordArchivedIds(tx: PgQueryable, storedIds: string[], archiveId: number): Promise<void> {
  await tx.run(
    `INSERT INTO retention_archived_ids (id, archive_id) SELECT id, $2 FROM unnest($1::text[]) AS id
     ON CONFLICT (id) DO UPDATE SET archive_id = EXCLUDED.archive_id`,
    [storedIds, archiveId],
  );
}

function resolvedPath(path: string): string {
  return isAbsolute(path) ? path : resolve(path);
}
