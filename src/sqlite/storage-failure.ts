/**
 * Which errors mean "the store could not take the write" (as opposed to a bad input or a bug): the database locked
 * past the write deadline, the disk full, an I/O error, a read-only, unopenable, replaced or corrupt file, no
 * memory. A turn that meets one of these is not stored, and commitTurn says so by throwing, so that OpenClaw keeps
 * the turn in its outbox and commits it again later (docs/reliability.md, "When a turn cannot be stored").
 */
import { isLcmError } from "../errors.js";

/** SQLite primary result codes of storage failures (https://sqlite.org/rescode.html). */
const STORAGE_RESULT_CODES = new Set([
  5, // SQLITE_BUSY
  6, // SQLITE_LOCKED
  7, // SQLITE_NOMEM
  8, // SQLITE_READONLY
  10, // SQLITE_IOERR
  11, // SQLITE_CORRUPT
  13, // SQLITE_FULL
  14, // SQLITE_CANTOPEN
  26, // SQLITE_NOTADB
]);

/** Node's error codes of a file system that cannot take the write of a stored large file. */
const FILE_SYSTEM_CODES = new Set(["ENOSPC", "EDQUOT", "EROFS", "EIO", "EACCES", "EPERM", "EMFILE", "ENFILE"]);

export function isStorageFailure(error: unknown, depth = 0): boolean {
  if (isLcmError(error, "busy") || isLcmError(error, "storage") || isLcmError(error, "unavailable")) return true;
  try {
    const record = error as { errcode?: unknown; code?: unknown; cause?: unknown } | null;
    if (record === null || typeof record !== "object") return false;
    if (typeof record.errcode === "number" && STORAGE_RESULT_CODES.has(record.errcode & 0xff)) return true;
    if (typeof record.code === "string" && FILE_SYSTEM_CODES.has(record.code)) return true;
    // node:sqlite on a connection LCM closed (a file found deleted or replaced under the process).
    if (record.code === "ERR_INVALID_STATE" && /database is not open|statement has been finalized/.test(String((record as { message?: unknown }).message))) {
      return true;
    }
    return depth < 5 && record.cause !== undefined && isStorageFailure(record.cause, depth + 1);
  } catch {
    return false; // an error object whose fields cannot be read (a hostile Proxy) is no storage failure we know of
  }
}
