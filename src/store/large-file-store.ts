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
}
