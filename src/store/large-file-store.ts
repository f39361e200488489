/**
 * Store contract for large files (`large_files` rows). Rows are written only together with the message that
 * references them (EncodedMessage.largeFiles, inside appendMessages/commitTurn), so a row never exists without
 * its message; these are the reads the interceptor, the reader and the recall tools need.
 */
import type { ConversationId, FileId, LargeFileRecord } from "../records.js";

export interface LargeFileStore {
  /** The file with this id, in any conversation; null when unknown. Callers check `conversationId` for access. */
  getLargeFile(fileId: FileId): Promise<LargeFileRecord | null>;
  /** The file of this conversation with this content hash (the dedupe key); null when not stored yet. */
  findLargeFileByHash(conversationId: ConversationId, contentHash: string): Promise<LargeFileRecord | null>;
  /** Files of a conversation, oldest first, at most `limit` (default 1,000). */
  listLargeFiles(conversationId: ConversationId, limit?: number): Promise<LargeFileRecord[]>;
  /**
   * A path on this machine to read the file's content from. SQLite: its recorded path. PostgreSQL, which keeps the
   * content in the database too (gateways on several machines share no disk): the recorded path when the file is
   * there whole, else this gateway's own copy in its files directory, written from the database when missing.
   * Contract: when the content is nowhere, resolves the recorded path (a reader then reports the file missing there);
   * rejects only when the database cannot be read.
   */
  readablePath(file: LargeFileRecord): Promise<string>;
}

/**
 * This machine's folder of stored files (large-files/large-file-storage.ts), as a backend that keeps the content in
 * the database writes its copies there: `<root>/<conversationId>/<fileId>.<ext>`, atomically (a reader never sees
 * half a file), idempotently (a file of the right size is left as it is).
 */
export interface LocalFilesDirectory {
  /** Throws LcmError("invalid_input") for parts that could name anything outside the conversation's folder. */
  pathFor(conversationId: ConversationId, fileId: FileId, extension: string): string;
  /** Rejects with LcmError("storage") when the file cannot be written. */
  write(conversationId: ConversationId, fileId: FileId, extension: string, content: Uint8Array): Promise<string>;
}
