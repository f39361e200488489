/**
 * Large-file content on disk: `<root>/<conversationId>/<fileId>.<ext>`, owner-only (directories 0700, files
 * 0600). A write goes to a temp file in the same directory, is flushed, then renamed into place, so a reader
 * never sees half a file. The row is written afterwards, with its message. A crash between the two leaves a file
 * without a row: ids derive from the content, so a replay of the message reuses that very file, and
 * `sweepOrphans` removes files and temp files that stayed row-less longer than a grace period.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { isAbsolute, join, resolve, sep } from "node:path";
import { LcmError } from "../errors.js";
import type { ConversationId, FileId } from "../records.js";
import { FILE_ID_PATTERN } from "../records.js";

/** Row-less files younger than this are left alone: their message may be about to be committed. */
export const ORPHAN_GRACE_MS = 15 * 60 * 1_000;
const STORED_NAME = /^(file_[a-f0-9]{16})\.[a-z0-9]{1,10}$/;
const TEMP_NAME = /^\.file_[a-f0-9]{16}\.[a-f0-9]+\.tmp$/;

export interface SweepResult {
  removedFiles: string[];
  removedTempFiles: string[];
}

export class LargeFileStorage {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The path of a stored file; throws when the parts could name anything outside the conversation directory. */
  pathFor(conversationId: ConversationId, fileId: FileId, extension: string): string {
    if (!Number.isSafeInteger(conversationId) || conversationId < 0) {
      throw new LcmError("invalid_input", `Conversation id ${String(conversationId)} is not a non-negative integer.`);
    }
    if (!FILE_ID_PATTERN.test(fileId)) throw new LcmError("invalid_input", `"${fileId}" is not a file id (file_ + 16 hex).`);
    if (!/^[a-z0-9]{1,10}$/.test(extension)) {
      throw new LcmError("invalid_input", `"${extension}" is not a safe extension (1-10 lower-case letters or digits).`);
    }
    const path = join(this.directoryFor(conversationId), `${fileId}.${extension}`);
    if (!isAbsolute(path) || !path.startsWith(this.root + sep)) {
      throw new LcmError("storage", `Refusing to write ${path}: it is outside the files directory ${this.root}.`);
    }
    return path;
  }

  directoryFor(conversationId: ConversationId): string {
    return join(this.root, String(conversationId));
  }

  /**
   * Writes `content` (text as UTF-8, or bytes as they are) to its final path atomically and returns the path.
   * Idempotent: when a file of the same size is already there (the same content: ids derive from its hash), nothing
   * is written.
   */
  async write(conversationId: ConversationId, fileId: FileId, extension: string, content: string | Uint8Array): Promise<string> {
    const path = this.pathFor(conversationId, fileId, extension);
    const byteSize = typeof content === "string" ? Buffer.byteLength(content, "utf8") : content.byteLength;
    if ((await sizeOf(path)) === byteSize) return path;
    const directory = this.directoryFor(conversationId);
    const tempPath = join(directory, `.${fileId}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      const handle = await open(tempPath, "wx", 0o600);
      try {
        await (typeof content === "string" ? handle.writeFile(content, "utf8") : handle.writeFile(content));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tempPath, path);
    } catch (error) {
      await rm(tempPath, { force: true }).catch(() => undefined); // best effort: a leftover temp file is swept later
      throw new LcmError("storage", `Could not store a large file at ${path}: ${(error as Error).message}`, { path }, { cause: error });
    }
    return path;
  }

  /** Whether a stored file exists with the expected size. */
  async isIntact(path: string, byteSize: number): Promise<boolean> {
    return (await sizeOf(path)) === byteSize;
  }

  /**
   * Removes, from one conversation's directory, temp files and stored files without a row (`hasRow` false),
   * once they are older than `graceMs`. Anything else in the directory is left alone.
   */
  async sweepOrphans(
    conversationId: ConversationId,
    hasRow: (fileId: FileId) => Promise<boolean>,
    graceMs = ORPHAN_GRACE_MS,
    now = Date.now(),
  ): Promise<SweepResult> {
    const result: SweepResult = { removedFiles: [], removedTempFiles: [] };
    const directory = this.directoryFor(conversationId);
    let names: string[];
    try {
      names = await readdir(directory);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return result; // no directory yet: nothing to sweep
      throw error;
    }
    for (const name of names) {
      const isTemp = TEMP_NAME.test(name);
      const storedId = STORED_NAME.exec(name)?.[1];
      if (!isTemp && !storedId) continue;
      const path = join(directory, name);
      const info = await stat(path).catch(() => null); // removed meanwhile (another sweep): nothing to do
      if (!info?.isFile() || now - info.mtimeMs < graceMs) continue;
      if (storedId && (await hasRow(storedId))) continue;
      await rm(path, { force: true });
      (isTemp ? result.removedTempFiles : result.removedFiles).push(path);
    }
    return result;
  }
}

/** The size of a regular file, or null when there is none (or it cannot be seen: the write then reports why). */
async function sizeOf(path: string): Promise<number | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : null;
  } catch {
    return null;
  }
}
