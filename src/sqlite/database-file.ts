/**
 * What a database file is, found out without changing it: missing, new (empty), ours, someone else's SQLite
 * database (the peer plugin lossless-claw defaulted to the same `~/.openclaw/lcm.db`, with the same table
 * names), or not SQLite at all. Opening a file for writing changes it at once (owner-only mode, WAL journal,
 * our tables), so the opener asks here first: the header is read as bytes, the schema through a read-only
 * connection that leaves no companion files behind.
 */
import { accessSync, closeSync, constants, existsSync, openSync, readSync, type Stats, statSync } from "node:fs";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { DatabaseSync } from "node:sqlite";
import { retryWhileBusySync } from "./database.js";

/** `PRAGMA application_id` of LCM databases: "lcm1" in ASCII. Set on every file by migration 6. */
export const LCM_APPLICATION_ID = 0x6c636d31;

/** What `inspectDatabaseFile` found. */
export type DatabaseFileState =
  | { kind: "missing" }
  /** An empty file, or a SQLite database without any table, version or application id: ours to set up. */
  | { kind: "new" }
  /** Marked with LCM_APPLICATION_ID, or recognisably an older file of ours (version 1.., our tables). */
  | { kind: "ours"; schemaVersion: number }
  /** A SQLite database with someone else's schema. `found` describes it for a person ("a lossless-claw database (…)"). */
  | { kind: "foreign"; found: string; peer: boolean }
  | { kind: "not-sqlite"; found: string }
  /** The file could not be read at all (permissions, I/O): whose it is cannot be told. */
  | { kind: "unreadable"; reason: string };

const SQLITE_MAGIC = "SQLite format 3\0";
const HEADER_BYTES = 100;
const SQLITE_NOTADB = 26;
/** The tables that only LCM creates (committed_turns since version 1, search_index_state since version 2). */
const OUR_TABLE = "committed_turns";
const OUR_TABLE_SINCE_2 = "search_index_state";
/** The peer's core tables (its 0.1.0 schema); without committed_turns they identify a lossless-claw database. */
const PEER_TABLES = ["conversations", "messages", "summaries", "context_items"];
const LISTED_TABLES = 4;

/** Finds out what the file at `path` is. Never writes; never throws (a failure is `unreadable`). */
export function inspectDatabaseFile(path: string, waitMs = 10_000): DatabaseFileState {
  let header: Buffer;
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) return { kind: "missing" };
    if (!info.isFile()) return { kind: "not-sqlite", found: `not a regular file (${info.isDirectory() ? "a directory" : "a special file"})` };
    if (info.size === 0) return { kind: "new" };
    header = readHeader(path);
  } catch (error) {
    // A file where a folder of the path should be: nothing is there; creating the folder will say why it cannot.
    if ((error as { code?: unknown }).code === "ENOTDIR") return { kind: "missing" };
    return { kind: "unreadable", reason: reasonOf(error) };
  }
  if (header.length < HEADER_BYTES || header.toString("latin1", 0, 16) !== SQLITE_MAGIC) {
    return { kind: "not-sqlite", found: `not a SQLite database (it starts with ${preview(header)})` };
  }
  try {
    // Through SQLite, not the header bytes: in WAL mode the newest version and id may still be in the -wal file.
    return retryWhileBusySync(() => classifySchema(path, header), waitMs);
  } catch (error) {
    if ((error as { errcode?: unknown }).errcode === SQLITE_NOTADB) {
      return { kind: "not-sqlite", found: "not a SQLite database (SQLite rejects it: file is not a database)" };
    }
    return { kind: "unreadable", reason: reasonOf(error) };
  }
}

/**
 * Why the file (or, for a new file, its folder) cannot be written, or null when it can. The write bits are
 * honoured even for root, who may write anything: `chmod a-w` is an operator saying "do not write this".
 */
export function readOnlyReason(path: string): string | null {
  const info = statOrNull(path);
  if (info && !isWritable(path, info.mode)) return `the file is read-only (mode ${modeText(info.mode)})`;
  let folder = dirname(path);
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  const folderInfo = statOrNull(folder);
  if (folderInfo && !isWritable(folder, folderInfo.mode)) {
    return `its folder ${folder} is read-only (mode ${modeText(folderInfo.mode)}), and SQLite writes its journal beside the file`;
  }
  return null;
}

/**
 * How to open `path` read-only without leaving anything behind. A WAL database whose `-wal` file is absent holds
 * everything in the main file; a read-only connection would still create `-wal` and `-shm` beside it (and could
 * not remove them), so such a file is opened `immutable`. Otherwise an ordinary read-only connection.
 */
export function readOnlyLocation(path: string, header?: Buffer): string | URL {
  const bytes = header ?? readHeader(path);
  const isWal = bytes.length >= 20 && bytes[18] === 2 && bytes[19] === 2;
  if (!isWal || existsSync(`${path}-wal`)) return path;
  const url = pathToFileURL(path);
  url.searchParams.set("immutable", "1");
  return url;
}

function classifySchema(path: string, header: Buffer): DatabaseFileState {
  const connection = new DatabaseSync(readOnlyLocation(path, header), { readOnly: true, timeout: 5 });
  try {
    const userVersion = Number((connection.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
    const applicationId = Number((connection.prepare("PRAGMA application_id").get() as { application_id: number }).application_id);
    const tables = (connection.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
    ).all() as { name: string }[]).map((row) => row.name);
    return classify(userVersion, applicationId, withoutShadowTables(tables));
  } finally {
    connection.close();
  }
}

function classify(userVersion: number, applicationId: number, tables: string[]): DatabaseFileState {
  if (applicationId === LCM_APPLICATION_ID) return { kind: "ours", schemaVersion: userVersion };
  const has = (name: string) => tables.includes(name);
  if (applicationId !== 0) {
    return { kind: "foreign", found: `a SQLite database of another application (application_id ${hex(applicationId)}${tableList(tables, ", ")})`, peer: false };
  }
  if (tables.length === 0 && userVersion === 0) return { kind: "new" };
  if (userVersion >= 1 && has(OUR_TABLE) && (userVersion < 2 || has(OUR_TABLE_SINCE_2))) {
    return { kind: "ours", schemaVersion: userVersion };
  }
  if (PEER_TABLES.every(has) && !has(OUR_TABLE)) {
    return { kind: "foreign", found: `a lossless-claw database (${tableList(tables, "")})`, peer: true };
  }
  const schema = tables.length === 0 ? `no tables, schema version ${userVersion}` : tableList(tables, "");
  return { kind: "foreign", found: `a SQLite database of another application (${schema})`, peer: false };
}

/** FTS5 keeps each index in shadow tables named after it (`messages_fts_data`, …): not worth listing. */
function withoutShadowTables(tables: string[]): string[] {
  return tables.filter((name) => !tables.some((other) => other !== name && /^(.+)_(data|idx|content|docsize|config)$/.exec(name)?.[1] === other));
}

function tableList(tables: string[], separator: string): string {
  if (tables.length === 0) return "";
  const listed = tables.slice(0, LISTED_TABLES).join(", ");
  return `${separator}tables ${listed}${tables.length > LISTED_TABLES ? ", …" : ""}`;
}

function readHeader(path: string): Buffer {
  const descriptor = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(HEADER_BYTES);
    const read = readSync(descriptor, buffer, 0, HEADER_BYTES, 0);
    return buffer.subarray(0, read);
  } finally {
    closeSync(descriptor);
  }
}

/** The file's status, or null when it cannot be had: opening it then reports why. */
function statOrNull(path: string): Stats | null {
  try {
    return statSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null; // EACCES on a folder of the path: whatever opens the file next will fail and say so
  }
}

function isWritable(path: string, mode: number): boolean {
  if ((mode & 0o222) === 0) return false;
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false; // EACCES, EROFS: not writable for this process, which is all the caller asks
  }
}

function preview(bytes: Buffer): string {
  const head = bytes.subarray(0, 16);
  const text = head.toString("latin1");
  if (/^[\x20-\x7e\t\r\n]+$/.test(text)) return JSON.stringify(text.replace(/\s+/g, " ").trimEnd() + (bytes.length > 16 ? "…" : ""));
  return `the bytes ${[...head.subarray(0, 8)].map((byte) => byte.toString(16).padStart(2, "0")).join(" ")}`;
}

function hex(value: number): string {
  return `0x${(value >>> 0).toString(16).padStart(8, "0")}`;
}

function modeText(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
