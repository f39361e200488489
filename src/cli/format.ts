/** Small text helpers for the CLI: counts, sizes, times, fixed-width tables, and reading numeric arguments. */
import { CliError, EXIT } from "./exit-codes.js";

export function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** A count with its noun, singular for one: "1 conversation", "2 conversations" (`plural` for irregular forms). */
export function counted(value: number, singular: string, plural = `${singular}s`): string {
  return `${count(value)} ${Math.round(value) === 1 ? singular : plural}`;
}

export function bytes(value: number): string {
  if (value < 1_024) return `${value} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let size = value / 1_024;
  let unit = 0;
  while (size >= 1_024 && unit < units.length - 1) {
    size /= 1_024;
    unit++;
  }
  return `${size.toFixed(size < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Rows as a table with columns padded to their widest cell; numbers (right-aligned) by the `numeric` column names. */
export function table(header: string[], rows: string[][], numeric: ReadonlySet<number> = new Set()): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, column) =>
    numeric.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** The first line of a text, at most `max` characters (with an ellipsis when cut). */
export function preview(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Parses a positive integer option or argument; throws a usage error (exit 2) naming it. */
export function positiveInteger(value: string, name: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < 1) {
    throw new CliError(EXIT.usage, `${name} must be a positive integer, got ${JSON.stringify(value)}.`);
  }
  return number;
}
