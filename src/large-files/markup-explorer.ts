/**
 * Exploration summaries of YAML and XML by a line/tag scan (no full parser is shipped for either): YAML
 * top-level keys with whether each holds a scalar, a mapping or a list; XML root element, its children, element
 * and attribute names with counts, nesting depth and a sample.
 */
import { formatCount } from "./file-reference.js";
import { SummaryLines, clip, squash } from "./summary-lines.js";
import { countLines } from "./text-stats.js";

const TOP_LEVEL_KEY = /^("[^"]+"|'[^']+'|[^\s#\-?:][^:#]*?)\s*:(?:\s+(.*))?$/;

export function exploreYaml(content: string): string {
  const lines = content.split("\n");
  const separators = lines.filter((line) => /^---(\s|$)/.test(line)).length;
  const startsWithSeparator = /^---(\s|$)/.test(lines.find((line) => line.trim() !== "" && !line.startsWith("#")) ?? "");
  const documents = Math.max(1, separators + (startsWithSeparator ? 0 : 1));
  const out = new SummaryLines();
  const entries: string[] = [];
  let rootListItems = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.replace(/\r$/, "");
    if (/^- |^-$/.test(line)) rootListItems++;
    const match = TOP_LEVEL_KEY.exec(line);
    if (!match) continue;
    const key = match[1]!;
    const value = (match[2] ?? "").trim();
    entries.push(value && !value.startsWith("#") ? `${key}: ${describeScalar(value)}` : `${key}: ${describeBlock(lines, index + 1)}`);
  }
  if (entries.length === 0 && rootListItems === 0) throw new Error("No top-level YAML key or list item found.");
  out.add(`YAML: ${formatCount(lines.length)} lines, ${documents} document${documents === 1 ? "" : "s"}.`);
  if (rootListItems > 0) out.add(`Top level is a list of ${formatCount(rootListItems)} items.`);
  if (entries.length > 0) {
    out.add(`Top-level keys (${formatCount(entries.length)}):`);
    for (const entry of entries.slice(0, 40)) if (!out.add(`- ${entry}`, 160)) break;
    if (entries.length > 40) out.add(`- … and ${formatCount(entries.length - 40)} more keys`);
  }
  return out.text();
}

function describeScalar(value: string): string {
  if (value.startsWith("[")) return "inline list";
  if (value.startsWith("{")) return "inline mapping";
  if (value === "|" || value === ">" || /^[|>][-+]?$/.test(value)) return "block text";
  return `scalar ${JSON.stringify(clip(value, 40))}`;
}

/** What the indented block under a key holds: a list (with item count) or a mapping (with child keys). */
function describeBlock(lines: readonly string[], from: number): string {
  let indent = -1;
  let items = 0;
  const keys: string[] = [];
  for (let index = from; index < lines.length; index++) {
    const line = lines[index]!.replace(/\r$/, "");
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const lineIndent = line.length - line.trimStart().length;
    if (lineIndent === 0 && !line.startsWith("- ")) break;
    if (indent === -1) indent = lineIndent;
    if (lineIndent !== indent) continue;
    const body = line.trimStart();
    if (body.startsWith("- ") || body === "-") items++;
    else {
      const key = /^([^:#]+?)\s*:/.exec(body)?.[1];
      if (key) keys.push(key);
    }
  }
  if (items > 0) return `list of ${formatCount(items)} items`;
  if (keys.length > 0) return `mapping {${keys.slice(0, 8).join(", ")}${keys.length > 8 ? `, … ${keys.length - 8} more` : ""}}`;
  return "empty";
}

const XML_TAG = /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[^>]*?)?)(\/?)>/g;
const XML_ATTRIBUTE = /([A-Za-z_][\w:.-]*)\s*=/g;

/** The element starting at `start` up to its closing tag (or 300 characters). */
function elementText(body: string, start: number, name: string): string {
  const close = body.indexOf(`</${name}>`, start);
  const end = close === -1 || close - start > 300 ? start + 300 : close + name.length + 3;
  return body.slice(start, end);
}

export function exploreXml(content: string): string {
  const body = content.replace(/<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>/gi, "");
  const elements = new Map<string, number>();
  const children = new Map<string, number>();
  const attributes = new Set<string>();
  let root: string | null = null;
  let rootAttributes = "";
  let depth = 0;
  let deepest = 0;
  let total = 0;
  let sample: string | null = null;
  XML_TAG.lastIndex = 0;
  for (let match = XML_TAG.exec(body); match; match = XML_TAG.exec(body)) {
    const [, closing, name, attributeText = "", selfClosing] = match;
    if (closing) {
      depth = Math.max(0, depth - 1);
      continue;
    }
    total++;
    elements.set(name!, (elements.get(name!) ?? 0) + 1);
    for (const attribute of attributeText.matchAll(XML_ATTRIBUTE)) attributes.add(attribute[1]!);
    if (root === null) {
      root = name!;
      rootAttributes = squash(attributeText);
    } else if (depth === 1) {
      children.set(name!, (children.get(name!) ?? 0) + 1);
      sample ??= elementText(body, match.index, name!);
    }
    if (!selfClosing) depth++;
    deepest = Math.max(deepest, depth);
  }
  if (root === null) throw new Error("No XML element found.");
  const out = new SummaryLines();
  out.add(
    `XML document: root <${root}${rootAttributes ? ` ${rootAttributes}` : ""}>, ${formatCount(total)} elements, ` +
      `nesting depth ${deepest}, ${formatCount(countLines(content))} lines.`,
  );
  const byCount = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).map(([name, count]) => `<${name}> ×${formatCount(count)}`);
  out.addList("Children of the root", byCount(children), 400);
  out.addList("Elements", byCount(elements), 500);
  out.addList("Attributes", [...attributes], 300);
  if (sample) out.add(`First child: ${squash(sample)}`, 240);
  return out.text();
}
