/**
 * Recognises a lossless-claw database and which of its schema lines it is, opened read-only (never modified: a
 * WAL file without its -wal is opened immutable, so not even -shm is left behind). lossless-claw records no schema
 * version: its migration creates tables and probes for missing columns, so the line is read from what exists.
 *   - 0.x (0.1.0 … 0.15): conversations, messages, message_parts, summaries, summary_messages, summary_parents,
 *     context_items, large_files; columns added over time (session_key, identity_hash, large_content, …).
 *   - 1.x (1.0.0-beta.0 on): the same core tables plus pending summary batches and transcript anchor tables.
 */
import { existsSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { LCM_APPLICATION_ID, readOnlyLocation } from "../../sqlite/database-file.js";
import { describeError } from "../../errors.js";
import { PeerImportError } from "./peer-import-error.js";

export type PeerSchemaLine = "0.x" | "1.x";

/** What the source holds, as far as the import needs to know. */
export interface PeerSchema {
  line: PeerSchemaLine;
  /** A readable version range: "0.1", "0.2–0.15" or "1.x". */
  versionRange: string;
  /** The columns of each core table present in this file (optional ones are read as NULL when absent). */
  columns: Record<PeerTable, ReadonlySet<string>>;
  /** Tables beside the core ones the import reads nothing from (reported as not imported when they hold rows). */
  otherTables: string[];
}

export const PEER_TABLES = [
  "conversations", "messages", "message_parts", "summaries", "summary_messages", "summary_parents", "context_items", "large_files",
] as const;
export type PeerTable = (typeof PEER_TABLES)[number];

/** Tables whose absence means the file is not lossless-claw's. */
const REQUIRED: readonly PeerTable[] = ["conversations", "messages", "summaries", "context_items"];
/** Tables only the 1.x line creates. */
const LINE_ONE_TABLES = ["pending_compaction_batches", "message_transcript_anchor_trust"];
/** LCM's own tables: a file that has them is ours, not the peer's. */
const OUR_TABLES = ["committed_turns", "search_index_state"];

/** Opens the source read-only. Throws PeerImportError("source-missing" | "source-unreadable"). */
export function openPeerDatabase(path: string): DatabaseSync {
  if (!existsSync(path)) throw new PeerImportError("source-missing", `No file at ${path}: pass the path of lossless-claw's database (by default ~/.openclaw/lcm.db).`);
  try {
    const database = new DatabaseSync(readOnlyLocation(path), { readOnly: true, timeout: 5_000 });
    database.exec("PRAGMA query_only = ON");
    return database;
  } catch (error) {
    throw new PeerImportError("source-unreadable", `Could not open ${path} read-only: ${describeError(error)}.`);
  }
}

/** Reads which schema line `database` is. Throws PeerImportError("not-peer") when it is not lossless-claw's. */
export function detectPeerSchema(database: DatabaseSync, path: string): PeerSchema {
  let tables: Set<string>;
  let applicationId: number;
  try {
    tables = new Set((database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name));
    applicationId = Number((database.prepare("PRAGMA application_id").get() as { application_id: number }).application_id);
  } catch (error) {
    throw new PeerImportError("source-unreadable", `Could not read the schema of ${path}: ${describeError(error)}. Is it a SQLite database?`);
  }
  if (applicationId === LCM_APPLICATION_ID || OUR_TABLES.some((table) => tables.has(table))) {
    throw new PeerImportError("not-peer", `${path} is an LCM database, not lossless-claw's: there is nothing to import from it.`);
  }
  const missing = REQUIRED.filter((table) => !tables.has(table));
  if (missing.length > 0) {
    throw new PeerImportError("not-peer",
      `${path} is not a lossless-claw database: it has no ${missing.join(", ")} table${missing.length === 1 ? "" : "s"}. ` +
        "Pass the lossless-claw plugin's database (by default ~/.openclaw/lcm.db).");
  }
  const columns = Object.fromEntries(PEER_TABLES.map((table) => [table, columnsOf(database, table, tables)])) as Record<PeerTable, ReadonlySet<string>>;
  const line: PeerSchemaLine = LINE_ONE_TABLES.some((table) => tables.has(table)) ? "1.x" : "0.x";
  const versionRange = line === "1.x" ? "1.x" : columns.conversations.has("session_key") ? "0.2–0.15" : "0.1";
  const otherTables = [...tables].filter((table) => !(PEER_TABLES as readonly string[]).includes(table) && !isFtsTable(table)).sort();
  return { line, versionRange, columns, otherTables };
}

function columnsOf(database: DatabaseSync, table: string, tables: ReadonlySet<string>): ReadonlySet<string> {
  if (!tables.has(table)) return new Set();
  return new Set((database.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((row) => row.name));
}

function isFtsTable(table: string): boolean {
  return /_fts(_cjk)?(_(data|idx|docsize|config|content))?$/.test(table) || table === "sqlite_sequence";
}
