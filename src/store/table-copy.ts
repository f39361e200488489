/**
 * The table copy contract: every table of LCM's model read in key order and written as it is, ids kept, so that one
 * backend's data can be copied into another (`lcm migrate`, and `lcm backup` on PostgreSQL). Rows travel as arrays of
 * plain values in the order of COPIED_TABLES' columns; a stored file's path travels absolute (each backend records it
 * its own way). The search indexes are not tables of the model: each backend rebuilds its own from the copied rows.
 */

/** A column's value as it travels: integers as numbers (below 2^53), text as strings, NULL as null. */
export type CopiedValue = string | number | null;
export type CopiedRow = readonly CopiedValue[];

export interface CopiedTable {
  name: string;
  /** The primary key's columns, in the order rows are read. */
  key: readonly string[];
  /** Every column, key columns included; a row's values are in this order. */
  columns: readonly string[];
  /** The column a backend generates ids for (reset past the copied ids when the copy ends); null when none. */
  identity: string | null;
}

const CONVERSATION_COLUMNS = [
  "conversation_id", "agent_id", "session_id", "session_key", "created_at", "updated_at", "last_ingest_at", "next_seq",
  "next_ordinal", "message_count", "message_tokens", "context_tokens", "context_raw_tokens", "context_items",
  "last_token_budget", "bootstrap_state", "last_compaction", "last_window_tokens", "last_reserve_tokens",
  "session_started_at", "last_reset", "previous_conversation_id", "archived_at", "archive_reason", "ended_at",
  "end_reason", "restored_at", "last_assembly",
];

/**
 * The model's tables in an order where every row's references are copied before it (conversations first, the rows
 * naming a message or a summary after it). The same names and columns on both backends (postgres/pg-migrations.ts
 * mirrors SQLite's schema at its migration 16).
 */
export const COPIED_TABLES: readonly CopiedTable[] = [
  { name: "conversations", key: ["conversation_id"], columns: CONVERSATION_COLUMNS, identity: "conversation_id" },
  {
    name: "retention_archives", key: ["archive_id"], identity: "archive_id",
    columns: ["archive_id", "kind", "path", "created_at", "conversation_id", "agent_id", "session_id", "session_key", "reason",
      "message_count", "seq_start", "seq_end", "byte_size", "state"],
  },
  { name: "retention_archived_ids", key: ["id"], columns: ["id", "archive_id"], identity: null },
  {
    name: "messages", key: ["message_id"], identity: "message_id",
    columns: ["message_id", "conversation_id", "seq", "role", "content", "token_count", "created_at", "identity_key", "flags", "meta", "archive_id"],
  },
  {
    name: "message_parts", key: ["message_id", "ordinal"], identity: null,
    columns: ["message_id", "ordinal", "kind", "text_start", "text_end", "data", "meta"],
  },
  {
    name: "committed_turns", key: ["conversation_id", "advancement_key"], identity: null,
    columns: ["conversation_id", "advancement_key", "committed_at", "message_count", "admission_entry_id", "stored_messages"],
  },
  {
    name: "summaries", key: ["id"], identity: "id",
    columns: ["id", "summary_id", "conversation_id", "kind", "depth", "content", "token_count", "source_token_count", "earliest_at",
      "latest_at", "descendant_count", "source_message_count", "seq_start", "seq_end", "file_ids", "level", "created_at", "written_by"],
  },
  { name: "summary_messages", key: ["summary_id", "message_id"], columns: ["summary_id", "message_id", "ordinal"], identity: null },
  { name: "summary_parents", key: ["summary_id", "parent_summary_id"], columns: ["summary_id", "parent_summary_id", "ordinal"], identity: null },
  {
    name: "context_items", key: ["conversation_id", "ordinal"], identity: null,
    columns: ["conversation_id", "ordinal", "message_id", "summary_id", "token_count", "flags"],
  },
  {
    name: "large_files", key: ["file_id"], identity: null,
    columns: ["file_id", "conversation_id", "content_hash", "file_name", "mime_type", "byte_size", "token_count", "storage_path",
      "exploration_summary", "explorer", "origin", "tool_name", "created_at"],
  },
  {
    name: "expansion_grants", key: ["grant_id"], identity: null,
    columns: ["grant_id", "agent_id", "child_session_key", "conversation_ids", "token_cap", "tokens_used", "summaries_expanded",
      "created_at", "expires_at", "revoked_at", "revoke_reason"],
  },
  {
    name: "import_sources", key: ["source_id"], identity: "source_id",
    columns: ["source_id", "kind", "fingerprint", "path", "schema_line", "started_at", "completed_at"],
  },
  {
    name: "import_map", key: ["source_id", "entity", "source_key"], identity: null,
    columns: ["source_id", "entity", "source_key", "target_id", "target_key", "state"],
  },
  {
    name: "summary_repairs", key: ["repair_id"], identity: "repair_id",
    columns: ["repair_id", "conversation_id", "summary_id", "kind", "created_at", "detail", "before", "after", "undone_at"],
  },
];

/** The column of large_files holding a stored file's path: absolute while a row travels. */
export const STORED_PATH_COLUMN = { table: "large_files", column: "storage_path" } as const;

/**
 * One backend's side of a copy. Keys compare as SQLite compares them (integers by value, text byte by byte in UTF-8),
 * on both backends, so that "after this key" means the same rows on either side.
 */
export interface TableCopyStore {
  /** What the copy names this database by (a file path, or a URL without its password). */
  readonly location: string;
  /**
   * Runs `body` with every read of this store seeing one committed state (a copy taken while a gateway writes is one
   * consistent state); blocks no writer. For the store's own opening (the CLI's), never a gateway's shared one.
   */
  readSnapshot<T>(body: () => Promise<T>): Promise<T>;
  /** The table's columns as this database has them (to refuse a copy that would leave a column behind). */
  columnsOf(table: CopiedTable): Promise<string[]>;
  /** Rows with a key after `afterKey` (null: from the first), in key order, at most `limit`. */
  readRows(table: CopiedTable, afterKey: CopiedRow | null, limit: number): Promise<CopiedRow[]>;
  /** The row with this key; null when none. */
  rowAt(table: CopiedTable, key: CopiedRow): Promise<CopiedRow | null>;
  /** How many rows the table holds; with `throughKey`, those with a key up to it. */
  countRows(table: CopiedTable, throughKey?: CopiedRow): Promise<number>;
  /** The largest key of the table; null when it is empty. */
  lastKey(table: CopiedTable): Promise<CopiedRow | null>;
  /** Inserts the rows in one transaction, ids kept; a row whose key is there already is left as it is. Returns how many it inserted. */
  writeRows(table: CopiedTable, rows: readonly CopiedRow[]): Promise<number>;
  /** After the last row: ids this database generates from now on come after every copied one. */
  finishCopy(): Promise<void>;
  /**
   * A backend that keeps stored files' content in the database too (PostgreSQL): a stored file's content, for a copy
   * made on a machine that does not hold the file; null when the database keeps none. Absent on SQLite.
   */
  storedFileContent?(fileId: string): Promise<Buffer | null>;
}

/** The key's values of a row of `table`. */
export function keyOf(table: CopiedTable, row: CopiedRow): CopiedRow {
  return table.key.map((column) => row[table.columns.indexOf(column)]!);
}
