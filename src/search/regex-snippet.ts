/**
 * Snippets for regex hits: the match marked «like this» with some context on each side, whitespace collapsed
 * so a hit reads on one line. Full-text hits get the same markers from FTS5's snippet() in the store.
 */

const CONTEXT_CHARACTERS = 80;
const MAX_MARKED_CHARACTERS = 200;

export function regexSnippet(text: string, start: number, end: number): string {
  const markedEnd = Math.min(end, start + MAX_MARKED_CHARACTERS);
  const from = safeIndex(text, Math.max(0, start - CONTEXT_CHARACTERS));
  const to = safeIndex(text, Math.min(text.length, markedEnd + CONTEXT_CHARACTERS));
  const before = text.slice(from, start);
  const marked = text.slice(start, safeIndex(text, markedEnd)) + (markedEnd < end ? "…" : "");
  const after = text.slice(safeIndex(text, markedEnd), to);
  return `${from > 0 ? "…" : ""}${collapse(before)}«${collapse(marked)}»${collapse(after)}${to < text.length ? "…" : ""}`;
}

/** Never cut between the two halves of a surrogate pair. */
function safeIndex(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return index > 0 && index < text.length && code >= 0xdc00 && code < 0xe000 ? index - 1 : index;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ");
}
