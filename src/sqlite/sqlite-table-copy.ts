/**
 * The SQLite side of the table copy (store/table-copy.ts): a table's rows read in primary-key order as arrays, and
 * written with their ids in one write transaction per batch, a row already there left as it is. A stored file's path
 * travels absolute: resolved against the database's folder when read, recorded relative to it when written
 * (stored-file-path.ts). Copied rows reach the full-text indexes by the indexer's own batches, like any new row.
 */
import type { SQLInputValue } from "node:sqlite";
import type { Database } from "./database.js";
import { recordedPath, resolveRecordedPath } from "./stored-file-path.js";
import { type CopiedRow, type CopiedTable, type CopiedValue, STORED_PATH_COLUMN, type TableCopyStore } from "../store/table-copy.js";

export class SqliteTableCopy implements TableCopyStore {
  constructor(private readonly database: Database) {}

  get location(): string {
    return this.database.path;
  }

  /** One read transaction on the connection (the copy's own): every read in it sees one committed state. */
  async readSnapshot<T>(body: () => Promise<T>): Promise<T> {
    if (this.database.raw.isTransaction) return body();
    this.database.raw.exec("BEGIN DEFERRED");
    try {
      return await body();
    } finally {
      if (this.database.raw.isTransaction) this.database.raw.exec("COMMIT");
    }
  }

  async columnsOf(table: CopiedTable): Promise<string[]> {
    return this.database.all<{ name: string }>("SELECT name FROM pragma_table_info(?)", table.name).map((row) => row.name);
  }

  async readRows(table: CopiedTable, afterKey: CopiedRow | null, limit: number): Promise<CopiedRow[]> {
    const after = afterKey === null ? "" : `WHERE ${keyTuple(table)} > ${placeholders(table.key.length)}`;
    const sql = `SELECT ${table.columns.join(", ")} FROM ${table.name} ${after} ORDER BY ${table.key.join(", ")} LIMIT ?`;
    return this.database.tuples<CopiedValue[]>(sql, ...(afterKey ?? []) as SQLInputValue[], limit).map((row) => this.travelling(table, row));
  }

  async rowAt(table: CopiedTable, key: CopiedRow): Promise<CopiedRow | null> {
    const sql = `SELECT ${table.columns.join(", ")} FROM ${table.name} WHERE ${keyTuple(table)} = ${placeholders(table.key.length)}`;
    const row = this.database.tuples<CopiedValue[]>(sql, ...key as SQLInputValue[])[0];
    return row === undefined ? null : this.travelling(table, row);
  }

  async countRows(table: CopiedTable, throughKey?: CopiedRow): Promise<number> {
    const through = throughKey === undefined ? "" : `WHERE ${keyTuple(table)} <= ${placeholders(table.key.length)}`;
    return this.database.get<{ rows: number }>(`SELECT count(*) AS rows FROM ${table.name} ${through}`, ...(throughKey ?? []) as SQLInputValue[])!.rows;
  }

  async lastKey(table: CopiedTable): Promise<CopiedRow | null> {
    const descending = table.key.map((column) => `${column} DESC`).join(", ");
    return this.database.tuples<CopiedValue[]>(`SELECT ${table.key.join(", ")} FROM ${table.name} ORDER BY ${descending} LIMIT 1`)[0] ?? null;
  }

  async writeRows(table: CopiedTable, rows: readonly CopiedRow[]): Promise<number> {
    const sql = `INSERT INTO ${table.name} (${table.columns.join(", ")}) VALUES ${placeholders(table.columns.length)} ` +
      `ON CONFLICT (${table.key.join(", ")}) DO NOTHING`;
    const pathIndex = pathColumnIndex(table);
    return this.database.write(() => {
      let inserted = 0;
      for (const row of rows) {
        const values = pathIndex < 0 ? row : row.map((value, index) => (index === pathIndex ? recordedPath(this.database.path, String(value)) : value));
        inserted += this.database.run(sql, ...values as SQLInputValue[]).changes;
      }
      return inserted;
    });
  }

  /** SQLite gives an INTEGER PRIMARY KEY the largest id plus one: nothing to reset. */
  async finishCopy(): Promise<void> {}

  /** A row as it travels: a stored file's path absolute. */
  private travelling(table: CopiedTable, row: CopiedValue[]): CopiedRow {
    const pathIndex = pathColumnIndex(table);
    if (pathIndex >= 0 && typeof row[pathIndex] === "string") row[pathIndex] = resolveRecordedPath(this.database.path, row[pathIndex]);
    return row;
  }
}

function pathColumnIndex(table: CopiedTable): number {
  return table.name === STORED_PATH_COLUMN.table ? table.columns.indexOf(STORED_PATH_COLUMN.column) : -1;
}

function keyTuple(table: CopiedTable): string {
  return `(${table.key.join(", ")})`;
}

function placeholders(count: number): string {
  return `(${Array.from({ length: count }, () => "?").join(", ")})`;
}
