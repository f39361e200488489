/**
 * The compact reference that replaces a large file in the stored message, and the file ids inside it.
 * Ids derive from the conversation and the content hash, so the same content always gets the same id and a
 * replay after a crash reuses the file it already wrote instead of leaving a second copy behind.
 */
import { createHash } from "node:crypto";
import type { ConversationId, FileId, LargeFileRecord } from "../records.js";

/** Matches the file ids that appear in references, summaries and tool results. */
export const FILE_ID_IN_TEXT = /\bfile_[a-f0-9]{16}\b/g;

/** SHA-256 of the UTF-8 text, hex. */
export function contentHashOf(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}

/** `file_` + 16 hex characters, a pure function of the conversation and the content hash. */
export function fileIdFor(conversationId: ConversationId, contentHash: string): FileId {
  return `file_${createHash("sha256").update(`${conversationId}\u0000${contentHash}`).digest("hex").slice(0, 16)}`;
}

/** The distinct file ids mentioned in a text, in order of first appearance. */
export function extractFileIds(text: string): FileId[] {
  return [...new Set(text.match(FILE_ID_IN_TEXT) ?? [])];
}

/**
 * The reference, in the format of the large-file spec:
 *
 *     [LCM File: file_0123456789abcdef | report.pdf | application/pdf | 42,150 bytes]
 *
 *     Exploration Summary:
 *     …
 */
export function formatFileReference(file: Pick<LargeFileRecord, "fileId" | "fileName" | "mimeType" | "byteSize" | "explorationSummary">): string {
  const name = displayField(file.fileName ?? "unnamed");
  const mime = displayField(file.mimeType ?? "text/plain");
  return [
    `[LCM File: ${file.fileId} | ${name} | ${mime} | ${formatCount(file.byteSize)} bytes]`,
    "",
    "Exploration Summary:",
    file.explorationSummary,
  ].join("\n");
}

/** 1234567 → "1,234,567". */
export function formatCount(value: number): string {
  return value.toLocaleString("en-US");
}

/** Keeps a name from breaking the one-line reference: no line breaks, no field separators, no closing bracket. */
function displayField(value: string): string {
  const cleaned = value.replace(/[\u0000-\u001f\u007f|\]]+/g, "_").trim();
  return cleaned.length > 120 ? `${cleaned.slice(0, 117)}...` : cleaned || "unnamed";
}
