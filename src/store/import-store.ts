/**
 * The import store contract: the writes of `lcm import jsonl` (transfer/jsonl-import.ts), in the records of the export
 * format. A conversation is written archived as IMPORTING_REASON, in chunks (one transaction each; a row already there,
 * from an interrupted import, is left as it is), then published in one transaction, or removed whole when the import
 * must not stay. A pruned message's archive reference becomes an archive of the new conversation, so recall says where
 * its text is, as it did in the database the export came from.
 */
import type { ConversationId } from "../records.js";
import type { ConversationExportRecord, ExportRecord, LargeFileExportRecord } from "./export-format.js";

/** A written conversation to publish: what the file says it holds and its archive state. */
export interface ConversationToPublish {
  conversationId: ConversationId;
  expected: { messages: number; summaries: number; contextItems: number };
  archivedAt: number | null;
  archiveReason: string | null;
}

/** Why publishing wrote nothing: the first conversation that stopped it (`index` into the list passed). */
export type PublishRefusal =
  /** It holds other counts than the file says once written. */
  | { kind: "counts"; index: number; stored: { messages: number; summaries: number; contextItems: number } }
  /** Its session has another live conversation now (`detail`: the store's words). */
  | { kind: "session-taken"; index: number; detail: string };

export interface ImportStore {
  /** Creates the conversation, archived as importing (its previous conversation found by identity); returns its id. */
  openConversation(record: ConversationExportRecord): Promise<ConversationId>;
  /**
   * Writes messages (with parts and archive references), summaries (with their edges) and context items, in order, in
   * one transaction; a record already stored is left as it is, other record types are ignored.
   */
  writeRecords(conversationId: ConversationId, records: readonly ExportRecord[]): Promise<void>;
  /** Records a stored file whose content is at `path` already (left as it is when recorded). */
  writeLargeFile(conversationId: ConversationId, record: LargeFileExportRecord, path: string): Promise<void>;
  /**
   * Deletes everything an import wrote for the conversation (rows and archive references) in one transaction, and
   * only while it is still importing; returns the absolute paths of its stored files, to remove from disk.
   */
  removeConversation(conversationId: ConversationId): Promise<string[]>;
  /**
   * Makes every conversation what the file says (its archive state), restored at `now`, in one transaction; writes
   * nothing and returns the refusal when any of them holds other counts or its session has another live conversation.
   */
  publish(conversations: readonly ConversationToPublish[], now: number): Promise<PublishRefusal | null>;
}
