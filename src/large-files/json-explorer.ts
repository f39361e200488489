/**
 * Exploration summaries of JSON documents and JSON Lines: the top-level shape, keys with their types, the
 * largest collection with its record fields and a sample record, nesting depth. Deterministic, no model call.
 * Both throw on text that does not parse, and the caller falls back to the text explorer.
 */
import { formatCount } from "./file-reference.js";
import { SummaryLines, clip, squash } from "./summary-lines.js";
import { countLines } from "./text-stats.js";

const MAX_KEYS_LISTED = 30;
const RECORDS_SAMPLED = 200;
const MAX_NODES_VISITED = 2_000_000;

export function exploreJson(content: string): string {
  const value: unknown = JSON.parse(content);
  const out = new SummaryLines();
  const lines = countLines(content);
  out.add(`JSON document: ${shapeOf(value)}; ${formatCount(lines)} lines, nesting depth ${depthOf(value)}.`);
  if (isRecord(value)) {
    const keys = Object.keys(value);
    out.add(`Top-level keys (${formatCount(keys.length)}):`);
    for (const key of keys.slice(0, MAX_KEYS_LISTED)) {
      if (!out.add(`- ${key}: ${shapeOf(value[key])}`, 160)) break;
    }
    if (keys.length > MAX_KEYS_LISTED) out.add(`- … and ${formatCount(keys.length - MAX_KEYS_LISTED)} more keys`);
  }
  const collection = largestArray(value);
  if (collection && collection.items.length > 0) {
    const label = collection.path === "" ? "The root array" : `Largest array ${collection.path}`;
    out.add(`${label} has ${formatCount(collection.items.length)} items.`);
    describeRecords(collection.items, out);
  }
  return out.text();
}

export function exploreJsonLines(content: string): string {
  const lines = content.split("\n").filter((line) => line.trim() !== "");
  const sampled = lines.slice(0, RECORDS_SAMPLED);
  const records: unknown[] = [];
  let invalid = 0;
  for (const line of sampled) {
    try {
      records.push(JSON.parse(line));
    } catch {
      invalid++;
    }
  }
  if (records.length === 0) throw new Error("No line of the JSON Lines text parses as JSON.");
  const out = new SummaryLines();
  out.add(`JSON Lines: ${formatCount(lines.length)} records.`);
  if (invalid > 0) out.add(`${invalid} of the first ${sampled.length} lines are not valid JSON.`);
  describeRecords(records, out);
  const last = lines.at(-1);
  if (lines.length > 1 && last !== undefined) out.add(`Last record: ${squash(last)}`, 240);
  return out.text();
}

/** Field names and types over a sample of records, then the first record. */
function describeRecords(items: readonly unknown[], out: SummaryLines): void {
  const sample = items.slice(0, RECORDS_SAMPLED);
  const fields = new Map<string, Set<string>>();
  let objects = 0;
  for (const item of sample) {
    if (!isRecord(item)) continue;
    objects++;
    for (const [key, value] of Object.entries(item)) {
      const types = fields.get(key) ?? new Set<string>();
      types.add(typeName(value));
      fields.set(key, types);
    }
  }
  if (objects > 0) {
    const described = [...fields].map(([key, types]) => `${key}: ${[...types].join(" | ")}`);
    out.addList(`Record fields (${fields.size}, from ${objects} sampled)`, described, 600);
  } else {
    out.add(`Item types: ${[...new Set(sample.map(typeName))].join(" | ")}.`);
  }
  const first = sample[0];
  if (first !== undefined) out.add(`First item: ${JSON.stringify(first)}`, 280);
}

/** A one-line description of a value's shape: `array[5,000] of object {id, name, …}`, `string (e.g. "x")`. */
function shapeOf(value: unknown): string {
  if (Array.isArray(value)) {
    const kinds = [...new Set(value.slice(0, 50).map((item) => (isRecord(item) ? objectShape(item) : typeName(item))))];
    const of = kinds.length === 0 ? "" : ` of ${kinds.slice(0, 2).join(" | ")}${kinds.length > 2 ? " | …" : ""}`;
    return `array[${formatCount(value.length)}]${of}`;
  }
  if (isRecord(value)) return objectShape(value);
  if (typeof value === "string") return `string (e.g. ${JSON.stringify(clip(squash(value), 40))})`;
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} (e.g. ${String(value)})`;
  return typeName(value);
}

function objectShape(value: Record<string, unknown>): string {
  const keys = Object.keys(value);
  const shown = keys.slice(0, 8).join(", ");
  return `object {${shown}${keys.length > 8 ? `, … ${keys.length - 8} more` : ""}}`;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "object" ? "object" : typeof value;
}

/** The longest array within the first three levels, with its path (`""` for the root). */
function largestArray(root: unknown): { path: string; items: unknown[] } | null {
  let best: { path: string; items: unknown[] } | null = null;
  const visit = (value: unknown, path: string, depth: number) => {
    if (Array.isArray(value)) {
      if (!best || value.length > best.items.length) best = { path, items: value };
      if (depth < 3 && value.length > 0) visit(value[0], `${path}[0]`, depth + 1);
    } else if (isRecord(value) && depth < 3) {
      for (const [key, child] of Object.entries(value).slice(0, 200)) visit(child, path ? `${path}.${key}` : key, depth + 1);
    }
  };
  visit(root, "", 0);
  return best;
}

/** Nesting depth (a scalar is 0), counted without recursion; stops after MAX_NODES_VISITED nodes. */
function depthOf(root: unknown): string {
  let deepest = 0;
  let visited = 0;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (++visited > MAX_NODES_VISITED) return `≥ ${deepest}`;
    if (value === null || typeof value !== "object") continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return String(deepest);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
