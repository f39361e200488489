/**
 * Snippets of full-text hits: a window of the text around the place where most of the query's terms are found
 * together, each hit marked «like this», whitespace collapsed so it reads on one line. Also the quoting of a
 * window around the hits for lcm_expand_query's excerpts, where a long message is cut around what matched rather
 * than from its top.
 */
import type { DocumentMatch, TermHit } from "../search/text-matcher.js";

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

/** The stretch around the hit whose neighbourhood holds the most distinct terms (the first such, rarest ties aside). */
function bestPlace(match: DocumentMatch, hits: readonly TermHit[]): { start: number; end: number } {
  const termOf = new Map<TermHit, number>();
  match.hits.forEach((list, term) => list.forEach((hit) => termOf.set(hit, term)));
  let best = hits[0]!;
  let bestCount = 0;
  for (const hit of hits) {
    const near = new Set<number>();
    for (const other of hits) if (Math.abs(other.start - hit.start) <= SNIPPET_CONTEXT) near.add(termOf.get(other) ?? -1);
    if (near.size > bestCount) {
      best = hit;
      bestCount = near.size;
    }
  }
  return best;
}

/** Never cut between the two halves of a surrogate pair. */
function safeIndex(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return index > 0 && index < text.length && code >= 0xdc00 && code < 0xe000 ? index - 1 : index;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ");
}
