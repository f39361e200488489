/**
 * Finds the `<file name="…" mime="…">…</file>` blocks that hosts inject into user messages when a file is
 * attached (media understanding, the OpenResponses API, chat UIs). Attributes may come in any order, quoted
 * with double or single quotes or not at all, with XML entities in their values; `mime` is optional.
 * A file's own text may itself contain these tags (source code that builds such blocks does), so tags are
 * matched with nesting, and when no other block follows, the block ends at the last `</file>` of the text.
 */

export interface FileBlock {
  /** Offset of `<file` in the text. */
  start: number;
  /** Offset just after `</file>`. */
  end: number;
  /** Every attribute of the opening tag, names lower-cased, entity-decoded values. */
  attributes: Record<string, string>;
  fileName: string | null;
  mimeType: string | null;
  /** The file's text, without the one newline hosts put after the opening tag and before the closing tag. */
  content: string;
}

const TAG = /<file(\s+[^>]*)?>|<\/file\s*>/gi;
const ATTRIBUTE = /([A-Za-z_][\w.:-]*)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" };

interface Tag {
  opening: boolean;
  start: number;
  end: number;
  attributeText: string;
}

/** The file blocks of `text`, in order. Text without `<file` costs one scan. */
export function parseFileBlocks(text: string): FileBlock[] {
  if (!/<file[\s>]/i.test(text)) return [];
  const tags: Tag[] = [];
  TAG.lastIndex = 0;
  for (let match = TAG.exec(text); match; match = TAG.exec(text)) {
    const opening = match[0][1] !== "/";
    if (opening && (match[1] ?? "").trimEnd().endsWith("/")) continue; // <file … /> holds no content
    tags.push({ opening, start: match.index, end: match.index + match[0].length, attributeText: match[1] ?? "" });
  }
  const blocks: FileBlock[] = [];
  let index = 0;
  while (index < tags.length) {
    const opening = tags[index]!;
    if (!opening.opening) {
      index++; // a stray closing tag outside any block
      continue;
    }
    const closingIndex = findClosing(tags, index);
    if (closingIndex === -1) break; // never closed: plain text from here on
    const closing = tags[closingIndex]!;
    const attributes = parseAttributes(opening.attributeText);
    blocks.push({
      start: opening.start,
      end: closing.end,
      attributes,
      fileName: nonEmpty(attributes.name ?? attributes.filename),
      mimeType: nonEmpty(attributes.mime ?? attributes.mimetype ?? attributes.type),
      content: stripFramingNewlines(text.slice(opening.end, closing.start)),
    });
    index = closingIndex + 1;
  }
  return blocks;
}

/**
 * The closing tag of the block opened at `openIndex`: the one that balances it; but when none does, or no
 * opening tag follows it, the last closing tag of the text (the file's own text held an unbalanced tag).
 * -1 when there is no closing tag after the opening.
 */
function findClosing(tags: readonly Tag[], openIndex: number): number {
  let depth = 0;
  let balanced = -1;
  for (let index = openIndex; index < tags.length; index++) {
    depth += tags[index]!.opening ? 1 : -1;
    if (depth === 0) {
      balanced = index;
      break;
    }
  }
  if (balanced !== -1 && tags.slice(balanced + 1).some((tag) => tag.opening)) return balanced;
  for (let index = tags.length - 1; index > openIndex; index--) {
    if (!tags[index]!.opening) return index;
  }
  return -1;
}

/** Replaces each block with `replace(block)`; blocks for which it returns null stay as they were. */
export function replaceFileBlocks(text: string, blocks: readonly FileBlock[], replace: (block: FileBlock) => string | null): string {
  let result = "";
  let cursor = 0;
  for (const block of blocks) {
    const replacement = replace(block);
    if (replacement === null) continue;
    result += text.slice(cursor, block.start) + replacement;
    cursor = block.end;
  }
  return cursor === 0 ? text : result + text.slice(cursor);
}

function parseAttributes(attributeText: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  ATTRIBUTE.lastIndex = 0;
  for (let match = ATTRIBUTE.exec(attributeText); match; match = ATTRIBUTE.exec(attributeText)) {
    const name = match[1]!.toLowerCase();
    if (name in attributes) continue; // the first occurrence wins, as in XML parsers that tolerate duplicates
    attributes[name] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? "");
  }
  return attributes;
}

function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
    if (body[0] === "#") {
      const codePoint = body[1] === "x" || body[1] === "X" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return Number.isInteger(codePoint) && codePoint > 0 && codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : entity;
    }
    return ENTITIES[body.toLowerCase()] ?? entity;
  });
}

function stripFramingNewlines(content: string): string {
  let start = 0;
  let end = content.length;
  if (content.startsWith("\r\n")) start = 2;
  else if (content.startsWith("\n")) start = 1;
  if (end - start >= 2 && content.endsWith("\r\n")) end -= 2;
  else if (end - start >= 1 && content.endsWith("\n")) end -= 1;
  return content.slice(start, end);
}

function nonEmpty(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}
