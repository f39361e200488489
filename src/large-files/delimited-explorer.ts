/**
 * Exploration summaries of CSV and TSV tables: row and column counts, column names with inferred types and
 * sample values, the first rows. One pass over the text that honours quoted fields (commas and line breaks
 * inside quotes); only the first rows are split into fields, the rest are only counted.
 */
import { formatCount } from "./file-reference.js";
import { SummaryLines, clip, squash } from "./summary-lines.js";

const ROWS_PARSED = 201;

export function exploreDelimited(content: string, format: "csv" | "tsv"): string {
  const delimiter = format === "tsv" ? "\t" : guessCsvDelimiter(content);
  const { rows, rowCount } = scanRows(content, delimiter, ROWS_PARSED);
  const first = rows[0];
  if (!first) throw new Error("The table has no rows.");
  const hasHeader = looksLikeHeader(first, rows.slice(1));
  const dataRows = hasHeader ? rows.slice(1) : rows;
  const columnCount = Math.max(...rows.map((row) => row.length));
  const names = hasHeader ? first : Array.from({ length: columnCount }, (_, index) => `column ${index + 1}`);
  const out = new SummaryLines();
  const dataCount = hasHeader ? rowCount - 1 : rowCount;
  const delimiterName = delimiter === "\t" ? "tab" : `"${delimiter}"`;
  out.add(
    `${format.toUpperCase()} table: ${formatCount(dataCount)} rows × ${columnCount} columns ` +
      `(${hasHeader ? "plus a header row" : "no header row"}), delimiter ${delimiterName}.`,
  );
  const columns = names.map((name, index) => {
    const values = dataRows.map((row) => row[index] ?? "").filter((value) => value.trim() !== "");
    const sample = values[0] === undefined ? "" : `, e.g. ${JSON.stringify(clip(squash(values[0]), 30))}`;
    return `${clip(squash(name), 40) || `column ${index + 1}`} (${columnType(values)}${sample})`;
  });
  out.addList("Columns", columns, 900);
  for (const row of dataRows.slice(0, 2)) out.add(`Row: ${row.map((value) => clip(squash(value), 40)).join(delimiter === "\t" ? " | " : `${delimiter} `)}`, 240);
  return out.text();
}

/** The first `maxParsed` rows split into fields, and the total row count (blank lines are not rows). */
function scanRows(content: string, delimiter: string, maxParsed: number): { rows: string[][]; rowCount: number } {
  const rows: string[][] = [];
  let rowCount = 0;
  let field = "";
  let row: string[] = [];
  let inQuotes = false;
  let rowHasContent = false;
  let fieldStarted = false;
  const parsing = () => rows.length < maxParsed;
  const endRow = () => {
    if (rowHasContent) {
      rowCount++;
      if (parsing()) rows.push([...row, field]);
    }
    row = [];
    field = "";
    rowHasContent = false;
    fieldStarted = false;
  };
  for (let index = 0; index < content.length; index++) {
    const char = content[index]!;
    if (inQuotes) {
      if (char === "\"") {
        if (content[index + 1] === "\"") {
          if (parsing()) field += "\"";
          index++;
        } else {
          inQuotes = false;
        }
      } else if (parsing()) {
        field += char;
      }
      continue;
    }
    if (char === "\"" && !fieldStarted) {
      inQuotes = true;
      fieldStarted = true;
      rowHasContent = true;
    } else if (char === delimiter) {
      if (parsing()) row.push(field);
      field = "";
      fieldStarted = false;
      rowHasContent = true;
    } else if (char === "\n") {
      endRow();
    } else if (char !== "\r") {
      if (parsing()) field += char;
      fieldStarted = true;
      rowHasContent = true;
    }
  }
  endRow();
  return { rows, rowCount };
}

function guessCsvDelimiter(content: string): string {
  const firstLine = content.slice(0, content.indexOf("\n") === -1 ? 4_096 : content.indexOf("\n"));
  const counts = [",", ";", "|", "\t"].map((candidate) => [candidate, firstLine.split(candidate).length - 1] as const);
  const best = counts.reduce((winner, entry) => (entry[1] > winner[1] ? entry : winner));
  return best[1] > 0 ? best[0] : ",";
}

/** A first row is a header when none of its fields is a number and some data row has a number where it has text. */
function looksLikeHeader(first: readonly string[], data: readonly string[][]): boolean {
  if (first.some((value) => isNumber(value))) return false;
  if (data.length === 0) return true;
  const firstNonEmpty = first.every((value) => value.trim() !== "");
  const typedBelow = first.some((_, index) => data.slice(0, 20).some((row) => isNumber(row[index] ?? "")));
  return firstNonEmpty && (typedBelow || new Set(first).size === first.length);
}

function columnType(values: readonly string[]): string {
  if (values.length === 0) return "empty";
  if (values.every((value) => /^[-+]?\d+$/.test(value.trim()))) return "integer";
  if (values.every(isNumber)) return "number";
  if (values.every((value) => /^(true|false|yes|no)$/i.test(value.trim()))) return "boolean";
  if (values.every((value) => /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim()))) return "date";
  const distinct = new Set(values).size;
  return values.length >= 20 && distinct <= 10 ? `text, ${distinct} distinct values` : "text";
}

function isNumber(value: string): boolean {
  const trimmed = value.trim();
  return trimmed !== "" && Number.isFinite(Number(trimmed));
}
