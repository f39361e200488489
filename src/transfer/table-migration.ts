/**
 * Copies every table of LCM's model from one backend to another, ids kept (store/table-copy.ts): table by table in
 * key order, a batch of rows per transaction, a row already there left as it is. The target's own rows are the
 * recorded position: a copy killed halfway, run again, starts after the last key each table holds, so it finishes
 * with no row twice and none lost, and a finished copy run again copies nothing. A target holding anything else than
 * what an earlier run of the same copy wrote is refused before a row is written. Ends by resetting the target's id
 * sequences past the copied ids. Stop the gateways on the source first: rows changed meanwhile are not copied again.
 */
import { LcmError } from "../errors.js";
import { COPIED_TABLES, type CopiedRow, type CopiedTable, type CopiedValue, keyOf, STORED_PATH_COLUMN, type TableCopyStore } from "../store/table-copy.js";

export interface TableCopyOptions {
  /** Rows per batch (one transaction each); default 500. */
  batchRows?: number;
  /** Told after each batch: the table, rows of it in the target now, rows of it in the source. */
  onProgress?: (table: string, done: number, total: number) => void;
}

export interface CopiedTableReport {
  table: string;
  /** Rows of the table in the source. */
  sourceRows: number;
  /** Rows this run wrote. */
  copied: number;
  /** Rows an earlier run had written already. */
  alreadyThere: number;
}

export interface TableCopyReport {
  source: string;
  target: string;
  tables: CopiedTableReport[];
  /** Rows this run wrote, all tables together. */
  copied: number;
  durationMs: number;
}

const DEFAULT_BATCH_ROWS = 500;

export async function copyAllTables(source: TableCopyStore, target: TableCopyStore, options: TableCopyOptions = {}): Promise<TableCopyReport> {
  const started = performance.now();
  // One committed state of the source for the whole run: a copy taken while something writes is still consistent.
  const tables = await source.readSnapshot(async () => {
    await checkColumns(source, target);
    await checkTargetHoldsOnlyThisCopy(source, target);
    const reports: CopiedTableReport[] = [];
    for (const table of COPIED_TABLES) reports.push(await copyTable(source, target, table, options));
    return reports;
  });
  await target.finishCopy();
  return {
    source: source.location, target: target.location, tables, copied: tables.reduce((sum, table) => sum + table.copied, 0),
    durationMs: Math.round(performance.now() - started),
  };
}

/** One table, after the last key the target holds, a batch per transaction. */
async function copyTable(source: TableCopyStore, target: TableCopyStore, table: CopiedTable, options: TableCopyOptions): Promise<CopiedTableReport> {
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  const sourceRows = await source.countRows(table);
  const alreadyThere = await target.countRows(table);
  let after = await target.lastKey(table);
  let copied = 0;
  options.onProgress?.(table.name, alreadyThere, sourceRows);
  for (;;) {
    const rows = await source.readRows(table, after, batchRows);
    if (rows.length === 0) break;
    copied += await target.writeRows(table, rows);
    after = keyOf(table, rows[rows.length - 1]!);
    options.onProgress?.(table.name, alreadyThere + copied, sourceRows);
    if (rows.length < batchRows) break;
  }
  return { table: table.name, sourceRows, copied, alreadyThere };
}

/** Refuses a copy that would leave a column behind (a newer source) or lack one (an older target). */
async function checkColumns(source: TableCopyStore, target: TableCopyStore): Promise<void> {
  for (const table of COPIED_TABLES) {
    const [sourceColumns, targetColumns] = [await source.columnsOf(table), await target.columnsOf(table)];
    const unknown = sourceColumns.filter((column) => !table.columns.includes(column));
    if (unknown.length > 0) {
      throw new LcmError("invalid_input", `${source.location} has column${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")} in ${table.name}, ` +
        "which this version of LCM does not copy; nothing was copied. Use the LCM version that wrote it.");
    }
    for (const [side, columns] of [[source, sourceColumns], [target, targetColumns]] as const) {
      const missing = table.columns.filter((column) => !columns.includes(column));
      if (missing.length > 0) {
        throw new LcmError("invalid_input", `${side.location} has no column ${missing.join(", ")} in ${table.name} (an older LCM schema, or not ` +
          "an LCM database); nothing was copied. Open it once with this version of LCM (lcm doctor --repair --db …) to upgrade it.");
      }
    }
  }
}

/**
 * A target may hold only what an earlier run of this copy wrote: for each table, its last row is the source's row
 * of that key, and it holds exactly the source's rows up to that key. Anything else (another database's data, a
 * gateway that wrote to it, a source changed since) is refused before anything is written.
 */
async function checkTargetHoldsOnlyThisCopy(source: TableCopyStore, target: TableCopyStore): Promise<void> {
  for (const table of COPIED_TABLES) {
    const lastKey = await target.lastKey(table);
    if (lastKey === null) continue;
    const [targetRow, sourceRow] = [await target.rowAt(table, lastKey), await source.rowAt(table, lastKey)];
    const sameRow = sourceRow !== null && targetRow !== null && sameValues(table, sourceRow, targetRow);
    const sameCount = sameRow && (await target.countRows(table)) === (await source.countRows(table, lastKey));
    if (!sameCount) {
      throw new LcmError("invalid_input", `${target.location} already holds data that is not a copy of ${source.location} ` +
        `(table ${table.name}, key ${describeKey(table, lastKey)}${sameRow ? ": other rows before it" : ": that row differs or is not in the source"}); ` +
        "nothing was copied. Migrate into an empty database, or the one an interrupted run of this same migration left. " +
        "(Stop the gateways that write the source before migrating: a source that changed since the first run is refused too.)");
    }
  }
}

/** A stored file's path is not compared: a copy may write a file the source's machine lacks into the target's folder. */
function sameValues(table: CopiedTable, left: CopiedRow, right: CopiedRow): boolean {
  const path = table.name === STORED_PATH_COLUMN.table ? table.columns.indexOf(STORED_PATH_COLUMN.column) : -1;
  return left.length === right.length && left.every((value, index) => index === path || sameValue(value, right[index] ?? null));
}

/** SQLite may hand back a number for text it holds as a number: compared as text then. */
function sameValue(left: CopiedValue, right: CopiedValue): boolean {
  if (left === right) return true;
  return left !== null && right !== null && String(left) === String(right);
}

function describeKey(table: CopiedTable, key: CopiedRow): string {
  return table.key.map((column, index) => `${column}=${JSON.stringify(key[index])}`).join(", ");
}
