/**
 * Copies the files lossless-claw stored aside (`large_files.storage_uri`, by default
 * ~/.openclaw/lcm-files/<conversation>/<file_id>.<ext>) into LCM's large-file store, under the same file id, so the
 * `file_…` references in messages and summaries keep resolving. The peer's file is only read. Text files are
 * copied; a file that is missing or not UTF-8 text (the peer also stored images as bytes) is recorded as not copied.
 */
import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TokenEstimator } from "../../contracts.js";
import { contentHashOf } from "../../large-files/file-reference.js";
import type { LargeFileStorage } from "../../large-files/large-file-storage.js";
import { storedExtension } from "../../large-files/file-types.js";
import { FILE_ID_PATTERN, type LargeFileRecord } from "../../records.js";
import { peerTimeToMillis } from "./message-rebuild.js";
import type { PeerLargeFile } from "./peer-reader.js";

export interface FileOutcome {
  peerFileId: string;
  record: LargeFileRecord | null;
  targetFileId: string | null;
  /** Why it was not copied as it was (null when it was). */
  note: string | null;
}

export interface FileCopyDeps {
  /** Null in a dry run: files are read and checked, nothing is written. */
  storage: LargeFileStorage | null;
  tokens: TokenEstimator;
  now: number;
  /** The source database's path: a file not at its recorded path is looked for in `lcm-files` beside it. */
  sourcePath: string;
  /** Another file of the conversation holding the same content (LCM keeps one per content), if any. */
  fileWithHash(contentHash: string): string | null;
  fileIdTaken(fileId: string): boolean;
}

export async function copyPeerFile(file: PeerLargeFile, conversationId: number, deps: FileCopyDeps): Promise<FileOutcome> {
  const skip = (note: string): FileOutcome => ({ peerFileId: file.fileId, record: null, targetFileId: null, note });
  if (!FILE_ID_PATTERN.test(file.fileId)) return skip(`file id ${file.fileId} is not of the form file_ + 16 hex`);
  const bytes = await readFirst(candidatePaths(file, deps.sourcePath));
  if (!bytes) return skip(`stored file not found at ${file.storageUri}`);
  let content: string;
  try {
    content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return skip(`binary file (${bytes.length} bytes, e.g. an image) not copied: LCM's file store holds text`);
  }
  const contentHash = contentHashOf(content);
  const sameContent = deps.fileWithHash(contentHash);
  if (sameContent) return { peerFileId: file.fileId, record: null, targetFileId: sameContent, note: `same content as ${sameContent}; references to ${file.fileId} do not resolve` };
  if (deps.fileIdTaken(file.fileId)) return skip(`file id ${file.fileId} is taken by another conversation's file here`);
  const extension = storedExtension(file.fileName, file.mimeType);
  const storagePath = deps.storage
    ? await deps.storage.write(conversationId, file.fileId, extension, content)
    : join("(dry run)", String(conversationId), `${file.fileId}.${extension}`);
  const record: LargeFileRecord = {
    fileId: file.fileId,
    conversationId,
    contentHash,
    fileName: file.fileName,
    mimeType: file.mimeType,
    byteSize: bytes.length,
    tokenCount: deps.tokens.estimate(content),
    storagePath,
    explorationSummary: file.explorationSummary ?? "",
    explorer: "lossless-claw",
    origin: "file-block",
    toolName: null,
    createdAt: peerTimeToMillis(file.createdAt) ?? deps.now,
  };
  return { peerFileId: file.fileId, record, targetFileId: file.fileId, note: null };
}

/** The recorded path (or file: URI), then the same name under `lcm-files/<conversation>/` beside the database. */
function candidatePaths(file: PeerLargeFile, sourcePath: string): string[] {
  const recorded = file.storageUri.startsWith("file:") ? safeFileUrl(file.storageUri) : file.storageUri;
  const name = basename(recorded ?? file.storageUri);
  return [...(recorded ? [recorded] : []), join(dirname(sourcePath), "lcm-files", String(file.conversationId), name)];
}

function safeFileUrl(uri: string): string | null {
  try {
    return fileURLToPath(uri);
  } catch {
    return null; // not a file URL this platform can open: the fallback location is tried
  }
}

async function readFirst(paths: readonly string[]): Promise<Buffer | null> {
  for (const path of paths) {
    try {
      return await readFile(path);
    } catch {
      // Not there (or not readable): the next candidate is tried; none found is reported by the caller.
    }
  }
  return null;
}
