/**
 * Copies the files lossless-claw stored aside (`large_files.storage_uri`, by default
 * ~/.openclaw/lcm-files/<conversation>/<file_id>.<ext>) into LCM's large-file store, under the same file id, so the
 * `file_…` references in messages and summaries keep resolving. The peer's file is only read. Text (UTF-8) is stored
 * as text, to be paged and searched; anything else (the peer also kept images) byte for byte as a binary file, which
 * describe and export hand on as it is. A file missing from disk keeps its record (name, type, size, the peer's
 * exploration summary) with its content reported missing, and the import report says so. Only regular files are read:
 * a recorded path that names a named pipe or a device is reported and treated as missing.
 */
import { createHash } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TokenEstimator } from "../../contracts.js";
import type { LargeFileStorage } from "../../large-files/large-file-storage.js";
import { BINARY_EXPLORER, storedBinaryExtension, storedExtension } from "../../text/file-types.js";
import { formatCount } from "../../large-files/file-reference.js";
import { FILE_ID_PATTERN, type LargeFileRecord } from "../../records.js";
import { peerTimeToMillis } from "./message-rebuild.js";
import type { PeerLargeFile } from "./peer-reader.js";
import type { PeerFileOutcome } from "../../store/peer-import-store.js";

/** The explorer of files imported as lossless-claw described them (its exploration summary is kept). */
const PEER_EXPLORER = "lossless-claw";

export interface FileCopyDeps {
  /** Null in a dry run: files are read and checked, nothing is written. */
  storage: LargeFileStorage | null;
  tokens: TokenEstimator;
  now: number;
  /** The source database's path: a file not at its recorded path is looked for in `lcm-files` beside it. */
  sourcePath: string;
  /** Another file of the conversation holding the same content (LCM keeps one per content), if any. */
  fileWithHash(contentHash: string): Promise<string | null>;
  fileIdTaken(fileId: string): Promise<boolean>;
}

export async function copyPeerFile(file: PeerLargeFile, conversationId: number, deps: FileCopyDeps): Promise<PeerFileOutcome> {
  const skip = (noteKind: string, note: string): PeerFileOutcome => ({ peerFileId: file.fileId, record: null, targetFileId: null, note, noteKind });
  if (!FILE_ID_PATTERN.test(file.fileId)) return skip("file id not of the form file_ + 16 hex", `file id ${file.fileId} is not of the form file_ + 16 hex`);
  if (await deps.fileIdTaken(file.fileId)) return skip("file id taken by another conversation's file here", `file id ${file.fileId} is taken by another conversation's file here`);
  const found = await readFirst(candidatePaths(file, deps.sourcePath));
  if (!found.bytes) return keepMissing(file, conversationId, deps, found.notRegular);
  const bytes = found.bytes;
  const text = utf8TextOf(bytes);
  // SHA-256 of the bytes: for text the same as contentHashOf (the hash of its UTF-8), so duplicates are found either way.
  const contentHash = createHash("sha256").update(bytes).digest("hex");
  const sameContent = await deps.fileWithHash(contentHash);
  if (sameContent) {
    return {
      peerFileId: file.fileId, record: null, targetFileId: sameContent, noteKind: "same content as another file of the conversation: references name that one",
      note: `same content as ${sameContent}; the messages that referenced ${file.fileId} name ${sameContent}`,
    };
  }
  const extension = text === null ? storedBinaryExtension(file.fileName, file.mimeType) : storedExtension(file.fileName, file.mimeType);
  const storagePath = deps.storage
    ? await deps.storage.write(conversationId, file.fileId, extension, text ?? bytes)
    : join("(dry run)", String(conversationId), `${file.fileId}.${extension}`);
  const record: LargeFileRecord = {
    ...recordOf(file, conversationId, deps.now),
    contentHash,
    byteSize: bytes.length,
    tokenCount: text === null ? 0 : deps.tokens.estimate(text),
    storagePath,
    explorationSummary: file.explorationSummary ?? (text === null ? binarySummary(file, bytes.length) : ""),
    explorer: text === null ? BINARY_EXPLORER : PEER_EXPLORER,
  };
  return { peerFileId: file.fileId, record, targetFileId: file.fileId, note: null, noteKind: null };
}

/**
 * The record of a file whose content is not on disk: kept, so references resolve to its name, type, size and the
 * peer's summary; its path is where the content belongs in LCM's store (describe and `lcm doctor` report it
 * missing there, and restoring it there makes it whole).
 */
function keepMissing(file: PeerLargeFile, conversationId: number, deps: FileCopyDeps, notRegular: string | null): PeerFileOutcome {
  const textual = file.mimeType === null || file.mimeType.startsWith("text/");
  const extension = textual ? storedExtension(file.fileName, file.mimeType) : storedBinaryExtension(file.fileName, file.mimeType);
  const storagePath = deps.storage
    ? deps.storage.pathFor(conversationId, file.fileId, extension)
    : join("(dry run)", String(conversationId), `${file.fileId}.${extension}`);
  const record: LargeFileRecord = {
    ...recordOf(file, conversationId, deps.now),
    // Unique per conversation as the column requires, and never equal to a content's hash: no file is taken for it.
    contentHash: `missing:${file.fileId}`,
    byteSize: file.byteSize ?? 0,
    tokenCount: 0,
    storagePath,
    explorationSummary: file.explorationSummary ?? "",
    explorer: textual ? PEER_EXPLORER : BINARY_EXPLORER,
  };
  return notRegular
    ? { peerFileId: file.fileId, record, targetFileId: file.fileId, noteKind: "stored file not a regular file, not read (record kept, content missing)", note: notRegular }
    : { peerFileId: file.fileId, record, targetFileId: file.fileId, noteKind: "stored file not found (record kept, content missing)", note: `not found at ${file.storageUri}` };
}

function recordOf(file: PeerLargeFile, conversationId: number, now: number): Omit<LargeFileRecord, "contentHash" | "byteSize" | "tokenCount" | "storagePath" | "explorationSummary" | "explorer"> {
  return {
    fileId: file.fileId, conversationId, fileName: file.fileName, mimeType: file.mimeType, origin: "file-block", toolName: null,
    createdAt: peerTimeToMillis(file.createdAt) ?? now,
  };
}

function binarySummary(file: PeerLargeFile, byteSize: number): string {
  return `Binary file${file.fileName ? ` ${file.fileName}` : ""} (${file.mimeType ?? "unknown type"}, ${formatCount(byteSize)} bytes) ` +
    "imported from lossless-claw; it is not text, so it is kept as it was but not shown or searched as text.";
}

/** The bytes as text when they are UTF-8, else null. */
function utf8TextOf(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null; // not UTF-8: an image or other bytes, kept as they are
  }
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

/**
 * The bytes of the first candidate that is a regular file. Each is opened without blocking and checked on the open
 * handle before a byte is read: a named pipe or a device at a recorded path would otherwise block the import forever
 * (or read without end); such a path is named in `notRegular` and the next candidate is tried.
 */
async function readFirst(paths: readonly string[]): Promise<{ bytes: Buffer | null; notRegular: string | null }> {
  let notRegular: string | null = null;
  for (const path of paths) {
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      continue; // not there (or not readable): the next candidate is tried; none found is reported by the caller
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) {
        notRegular ??= `${path} is a ${kindOf(info)}`;
        continue;
      }
      return { bytes: await handle.readFile(), notRegular };
    } catch {
      continue; // unreadable after all (a read error): the next candidate is tried
    } finally {
      await handle.close();
    }
  }
  return { bytes: null, notRegular };
}

function kindOf(info: Stats): string {
  if (info.isFIFO()) return "named pipe";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "device";
  if (info.isDirectory()) return "folder";
  if (info.isSocket()) return "socket";
  return "special file";
}
