/**
 * Writes the blocks of an export into a store for `lcm import jsonl` (jsonl-import.ts): records in chunks of a few
 * hundred, one transaction each (ImportStore.writeRecords), the event loop running between them; a row already there
 * (an interrupted import resumed) is left as it is. Until the import publishes it, a conversation is archived as
 * IMPORTING_REASON, so the gateway never serves it half-written; `remove` takes out what an import wrote when it must
 * not stay. A large file's bytes are written here, into the files directory, before the store records them.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { describeError, LcmError } from "../errors.js";
import type { ConversationExportRecord, ExportRecord, LargeFileExportRecord } from "../store/export-format.js";
import type { ImportStore } from "../store/import-store.js";

/** Rows per write transaction. */
const CHUNK_ROWS = 500;
/** Characters of content per write transaction. */
const CHUNK_CHARS = 4_000_000;

export class BlockWriter {
  private pending: ExportRecord[] = [];
  private pendingChars = 0;

  constructor(private readonly store: ImportStore, private readonly filesDirectory: string) {}

  /** Creates the conversation, archived as importing; returns its id. */
  async open(record: ConversationExportRecord): Promise<number> {
    return this.store.openConversation(record);
  }

  async add(conversationId: number, record: ExportRecord): Promise<void> {
    this.pending.push(record);
    this.pendingChars += "content" in record ? record.content.length : 0;
    if (this.pending.length >= CHUNK_ROWS || this.pendingChars >= CHUNK_CHARS) await this.flush(conversationId);
  }

  /** Writes the file's bytes (atomically: temp file, then rename), then its record. */
  async writeLargeFile(conversationId: number, record: LargeFileExportRecord): Promise<void> {
    await this.flush(conversationId);
    const path = this.storedPath(conversationId, record.storedName);
    if (record.contentBase64 !== null) {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const temporary = join(dirname(path), `.${record.fileId}.import.tmp`);
      try {
        await writeFile(temporary, Buffer.from(record.contentBase64, "base64"), { mode: 0o600 });
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw new LcmError("storage", `Could not write the large file ${record.fileId} to ${path}: ${describeError(error)}.`);
      }
    }
    await this.store.writeLargeFile(conversationId, record, path);
  }

  /** Writes what is still pending for the conversation. */
  async flush(conversationId: number): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    await this.store.writeRecords(conversationId, chunk);
    await yieldToEventLoop();
  }

  /**
   * Deletes everything an import wrote for these conversations (rows, archive rows, stored files), one transaction
   * per conversation; for an import that must not stay (it failed a check after writing).
   */
  async remove(conversationIds: readonly number[]): Promise<void> {
    for (const conversationId of conversationIds) {
      const files = await this.store.removeConversation(conversationId);
      for (const path of files) await rm(path, { force: true });
      await rm(join(resolve(this.filesDirectory), String(conversationId)), { recursive: false, force: true }).catch(() => undefined);
    }
  }

  private storedPath(conversationId: number, storedName: string): string {
    const root = resolve(this.filesDirectory);
    const path = join(root, String(conversationId), storedName);
    if (!path.startsWith(root + sep)) throw new LcmError("invalid_input", `Refusing to write ${path}: outside the files directory ${root}.`);
    return path;
  }
}
