/**
 * How an analysed document (text/text-analysis.ts) becomes a PostgreSQL tsvector, and a query's words a tsquery. The
 * tsvector is written as its text form from the analysis' own words (PostgreSQL parses nothing): the words at
 * positions 1…n with weight A (FTS5's `words` column), their fragments after a gap with weight B (`derived`), so a
 * phrase (`<->`) never spans the two. PostgreSQL keeps at most 256 positions per word and none past 16,383: a document
 * beyond either is stored "inexact" (each word once per weight, with the marker INEXACT) and every phrase also matches
 * it as its words in any order; a document too large for a tsvector holds only ALWAYS and is a candidate of every
 * query. Candidates stay a superset of the matches (ranking checks each on its text).
 */

/** Longest lexeme kept, in characters; a longer word is cut to it and looked up as a prefix (PostgreSQL: < 2 KB). */
export const MAX_LEXEME_CHARACTERS = 500;
const MAX_POSITION = 16_383;
const MAX_POSITIONS_PER_LEXEME = 256;
/** A tsvector holds at most 1 MB; past this its text form is not attempted. */
const MAX_DOCUMENT_CHARACTERS = 700_000;
/** Markers no analysed word can be (words are letters, digits and marks). */
export const INEXACT = "~inexact";
export const ALWAYS = "~always";

export type Weight = "A" | "B";

/** A word as a lexeme: cut to MAX_LEXEME_CHARACTERS; `cut` says whether it was. */
export function lexemeOf(word: string): { lexeme: string; cut: boolean } {
  if (word.length <= MAX_LEXEME_CHARACTERS) return { lexeme: word, cut: false };
  const characters = [...word];
  if (characters.length <= MAX_LEXEME_CHARACTERS) return { lexeme: word, cut: false };
  return { lexeme: characters.slice(0, MAX_LEXEME_CHARACTERS).join(""), cut: true };
}

function quoted(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/** The tsvector text of a document's `words` and `derived` (space-separated, as analyzeDocument returns them). */
export function documentVector(words: string, derived: string): string {
  const body = words === "" ? [] : words.split(" ");
  const extra = derived === "" ? [] : derived.split(" ");
  const positions = new Map<string, { a: number[]; b: number[] }>();
  const add = (word: string, position: number, list: "a" | "b") => {
    const { lexeme } = lexemeOf(word);
    let entry = positions.get(lexeme);
    if (!entry) positions.set(lexeme, (entry = { a: [], b: [] }));
    entry[list].push(position);
  };
  body.forEach((word, index) => add(word, index + 1, "a"));
  extra.forEach((word, index) => add(word, body.length + 2 + index, "b"));
  let exact = body.length + 1 + extra.length <= MAX_POSITION;
  let length = 0;
  for (const [lexeme, entry] of positions) {
    if (entry.a.length + entry.b.length > MAX_POSITIONS_PER_LEXEME) exact = false;
    length += lexeme.length + 8;
  }
  if (length > MAX_DOCUMENT_CHARACTERS) return quoted(ALWAYS);
  const parts: string[] = [];
  for (const [lexeme, entry] of positions) {
    const labels = exact
      ? [...entry.a.map((position) => `${position}A`), ...entry.b.map((position) => `${position}B`)]
      : [...(entry.a.length > 0 ? ["1A"] : []), ...(entry.b.length > 0 ? ["2B"] : [])];
    parts.push(`${quoted(lexeme)}:${labels.join(",")}`);
  }
  if (!exact) parts.push(quoted(INEXACT));
  return parts.join(" ");
}

/** One word of a query: as a lexeme (a cut word becomes a prefix), optionally a prefix itself and of one weight. */
export function queryWord(word: string, options: { prefix?: boolean; weight?: Weight } = {}): string {
  const { lexeme, cut } = lexemeOf(word);
  const flags = `${options.prefix || cut ? "*" : ""}${options.weight ?? ""}`;
  return flags === "" ? quoted(lexeme) : `${quoted(lexeme)}:${flags}`;
}

/**
 * A phrase of words (the last one optionally a prefix), in one weight or either: consecutive in an exact document,
 * all present in an inexact one.
 */
export function phraseQuery(words: readonly string[], options: { prefix?: boolean; weight?: Weight } = {}): string {
  const items = words.map((word, index) => queryWord(word, { weight: options.weight, prefix: options.prefix && index === words.length - 1 }));
  if (items.length === 1) return items[0]!;
  return `((${items.join(" <-> ")}) | (${items.join(" & ")} & ${quoted(INEXACT)}))`;
}

/** Any of `alternatives`, or a document too large to index (a candidate of every query). */
export function anyOrAlways(alternatives: readonly string[]): string {
  return `(${alternatives.join(" | ")}) | ${quoted(ALWAYS)}`;
}
