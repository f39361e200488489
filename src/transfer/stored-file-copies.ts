/**
 * A copy from a backend that keeps stored files' content in its database too (PostgreSQL, whose gateways may share no
 * disk) into one that keeps it only on disk (SQLite): a stored file that is not on this machine is written from the
 * source's copy into the target's files folder (`<conversation>/<name>`, atomically) and recorded there; a file that
 * is here keeps its path, as before. Used by `lcm migrate postgres-to-sqlite`.
 */
import { stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import { LargeFileStorage } from "../large-files/large-file-storage.js";
import type { ConversationId } from "../records.js";
import { type CopiedRow, type CopiedTable, STORED_PATH_COLUMN, type TableCopyStore } from "../store/table-copy.js";

export function writingMissingFiles(source: TableCopyStore, target: TableCopyStore, filesDirectory: string): TableCopyStore {
  const readContent = source.storedFileContent?.bind(source);
  if (readContent === undefined) return target;
  const storage = new LargeFileStorage(filesDirectory);
  const placed = async (table: CopiedTable, row: CopiedRow): Promise<CopiedRow> => {
    const pathIndex = table.columns.indexOf(STORED_PATH_COLUMN.column);
    const path = String(row[pathIndex]);
    if (await isRegularFile(path)) return row;
    const fileId = String(row[table.columns.indexOf("file_id")]);
    const content = await readContent(fileId);
    if (content === null) return row; // nowhere but on the machine that holds it: recorded as it was (lcm doctor names it)
    const extension = extname(basename(path)).slice(1);
    const conversationId = Number(row[table.columns.indexOf("conversation_id")]) as ConversationId;
    const written = await storage.write(conversationId, fileId, /^[a-z0-9]{1,10}$/.test(extension) ? extension : "bin", content);
    return row.map((value, index) => (index === pathIndex ? written : value));
  };
  return Object.assign(Object.create(target) as TableCopyStore, {
    writeRows: async (table: CopiedTable, rows: readonly CopiedRow[]) => target.writeRows(
      table, table.name === STORED_PATH_COLUMN.table ? await Promise.all(rows.map((row) => placed(table, row))) : rows,
    ),
  });
}

async function isRegularFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false; // not on this machine: the source's copy is written instead
  }
}
