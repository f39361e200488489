/**
 * The text search reads: a stored message's `content` with each tool call's arguments decoded. The codec keeps
 * the arguments as one line of JSON inside `content` (so decoding slices them back exactly), where a command
 * like `git commit -m "$(cat` reads `git commit -m \"$(cat` and every line break is `\n`; an agent searching
 * for what it typed would miss it. Here each argument becomes `name: value` with strings as they were written,
 * nested values under dotted names (`edits[0].old_text: …`), one per line.
 */

/** A tool call's arguments span in `content`: [start, end), as the codec recorded it. */
export type ArgumentSpan = readonly [start: number, end: number];

/** `content` with each span of tool-call arguments (JSON) replaced by its decoded rendering. */
export function searchableText(content: string, argumentSpans: readonly ArgumentSpan[]): string {
  if (argumentSpans.length === 0) return content;
  const pieces: string[] = [];
  let at = 0;
  for (const [start, end] of [...argumentSpans].sort((left, right) => left[0] - right[0])) {
    if (start < at || end > content.length) continue; // not a span of this content: leave the text as stored
    pieces.push(content.slice(at, start), renderArguments(content.slice(start, end)));
    at = end;
  }
  pieces.push(content.slice(at));
  return pieces.join("");
}

/** Tool-call arguments (a JSON object) as `name: value` lines; text that is not JSON is returned as it is. */
export function renderArguments(json: string): string {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    // The codec wrote this span with JSON.stringify; anything else was not written by it and is shown as stored.
    return json;
  }
  const lines: string[] = [];
  render(value, "", lines);
  return lines.join("\n");
}

function render(value: unknown, name: string, lines: string[]): void {
  if (typeof value === "string") {
    lines.push(name === "" ? value : `${name}: ${value}`);
  } else if (Array.isArray(value)) {
    if (value.length === 0) lines.push(`${name}: []`);
    value.forEach((item, index) => render(item, `${name}[${index}]`, lines));
  } else if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0 && name !== "") lines.push(`${name}: {}`);
    for (const [key, item] of entries) render(item, name === "" ? key : `${name}.${key}`, lines);
  } else {
    lines.push(name === "" ? String(value) : `${name}: ${JSON.stringify(value)}`);
  }
}
