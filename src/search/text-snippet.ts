/**
 * Snippets of full-text hits: a window of the text around the place where the most telling of the query's terms are
 * found together, each hit marked «like this», whitespace collapsed so it reads on one line. Also the quoting of a
 * window around the hits for lcm_expand_query's excerpts, where a long message is cut around what matched rather
 * than from its top.
 */
import type { DocumentMatch, TermHit } from "../text/text-matcher.js";

/** Characters of context shown on each side of the best place in a snippet. */
const SNIPPET_CONTEXT = 90;

/** A one-line snippet around the densest cluster of hits, every hit inside it marked. */
export function textSnippet(match: DocumentMatch): string {
  const text = match.text;
  const hits = allHits(match);
  if (hits.length === 0) return collapse(text.slice(0, 2 * SNIPPET_CONTEXT)) + (text.length > 2 * SNIPPET_CONTEXT ? "…" : "");
  const center = bestPlace(match, hits);
  const from = safeIndex(text, Math.max(0, center.start - SNIPPET_CONTEXT));
  const to = safeIndex(text, Math.min(text.length, center.end + SNIPPET_CONTEXT));
  let snippet = "";
  let at = from;
  for (const hit of hits) {
    if (hit.start < at || hit.end > to) continue;
    snippet += collapse(text.slice(at, hit.start)) + "«" + collapse(text.slice(hit.start, hit.end)) + "»";
    at = hit.end;
  }
  snippet += collapse(text.slice(at, to));
  return `${from > 0 ? "…" : ""}${snippet}${to < text.length ? "…" : ""}`;
}

/**
 * The part of `text` worth quoting: the whole text when it has at most `maxCharacters`, otherwise a window of
 * that size around the best cluster of hits (and `cut` true). Never splits a surrogate pair.
 */
export function quoteWindow(match: DocumentMatch, maxCharacters: number): { text: string; cut: boolean } {
  const text = match.text;
  if (text.length <= maxCharacters) return { text, cut: false };
  const hits = allHits(match);
  const center = hits.length > 0 ? bestPlace(match, hits) : { start: 0, end: 0 };
  const middle = Math.floor((center.start + center.end) / 2);
  const from = safeIndex(text, Math.max(0, Math.min(text.length - maxCharacters, middle - Math.floor(maxCharacters / 2))));
  const to = safeIndex(text, Math.min(text.length, from + maxCharacters));
  return { text: `${from > 0 ? "[…] " : ""}${text.slice(from, to)}${to < text.length ? " […]" : ""}`, cut: true };
}

/** Characters a passage reaches past its hits when their lines are longer. */
const PASSAGE_REACH = 300;

/**
 * Words of the passage holding a match: the lines with the hits near the best place (a snippet's reach), at most
 * PASSAGE_REACH characters past them on either side. What a chunk of stored content is scored by (text-readers.ts).
 */
export function passageWords(match: DocumentMatch): number {
  const text = match.text;
  const center = snippetCenter(match);
  if (!center) return Math.max(1, Math.round(text.length / 6));
  let start = center.start;
  let end = center.end;
  for (const hit of allHits(match)) {
    if (Math.abs(hit.start - center.start) > SNIPPET_CONTEXT) continue;
    start = Math.min(start, hit.start);
    end = Math.max(end, hit.end);
  }
  const from = Math.max(text.lastIndexOf("\n", start - 1) + 1, start - PASSAGE_REACH);
  const lineEnd = text.indexOf("\n", end);
  const to = Math.min(lineEnd < 0 ? text.length : lineEnd, end + PASSAGE_REACH);
  return Math.max(1, text.slice(from, to).match(/[\p{L}\p{N}]+/gu)?.length ?? 1);
}

/** Where a snippet of `match` is centred: the hit with the most distinct terms near it; null without hits. */
export function snippetCenter(match: DocumentMatch): { start: number; end: number } | null {
  const hits = allHits(match);
  return hits.length > 0 ? bestPlace(match, hits) : null;
}

function allHits(match: DocumentMatch): TermHit[] {
  const hits = match.hits.flat().sort((left, right) => left.start - right.start || right.end - left.end);
  // Overlapping hits (a word found as itself and as a fragment of another term) are marked once.
  const kept: TermHit[] = [];
  for (const hit of hits) if (kept.length === 0 || hit.start >= kept.at(-1)!.end) kept.push(hit);
  return kept;
}

/**
 * The stretch around the hit whose neighbourhood holds the most telling terms: the distinct terms near it, each
 * weighed by how rare it is when the search knew (`match.weights`), else counted; the first such place wins ties.
 * A rare id beside one common word beats three common words together.
 */
function bestPlace(match: DocumentMatch, hits: readonly TermHit[]): { start: number; end: number } {
  const termOf = new Map<TermHit, number>();
  match.hits.forEach((list, term) => list.forEach((hit) => termOf.set(hit, term)));
  const weight = (term: number) => Math.max(MIN_WEIGHT, match.weights?.[term] ?? 1);
  let best = hits[0]!;
  let bestWeight = 0;
  for (const hit of hits) {
    const near = new Set<number>();
    for (const other of hits) if (Math.abs(other.start - hit.start) <= SNIPPET_CONTEXT) near.add(termOf.get(other) ?? -1);
    const total = [...near].reduce((sum, term) => sum + weight(term), 0);
    if (total > bestWeight) {
      best = hit;
      bestWeight = total;
    }
  }
  return best;
}

/** A term's least weight: a function word still places a snippet when nothing else matched. */
const MIN_WEIGHT = 0.001;

/** Never cut between the two halves of a surrogate pair. */
function safeIndex(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return index > 0 && index < text.length && code >= 0xdc00 && code < 0xe000 ? index - 1 : index;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ");
}
