/**
 * Turns what a model or user typed into a safe FTS5 MATCH expression. Every term becomes a double-quoted FTS5
 * string (embedded quotes doubled), so no input can reach FTS5's query syntax: column filters, NEAR, ^, parens,
 * operators and stray quotes all become plain words. The only syntax kept on purpose: "quoted phrases", a
 * trailing * for prefix search on a bare word, and a bare upper-case OR between terms.
 */

/** Most terms one query may hold; more only slow the query down without narrowing it usefully. */
export const MAX_QUERY_TERMS = 32;

const WORD_CHARACTER = /[\p{L}\p{N}]/u;
// Control characters (NUL included) carry no meaning for search and are dropped before quoting.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

const STOPWORDS = new Set(
  ("a an and are as at be but by did do does for from had has have how i in is it its of on or that the their " +
    "there this to was we were what when where which who why will with you your")
    .split(" "),
);

interface Term {
  text: string;
  prefix: boolean;
}

/**
 * The MATCH expression for `text`: all terms must occur (implicit AND); `OR` between terms makes alternatives.
 * Returns null when the text holds no searchable word (only punctuation, operators or whitespace).
 */
export function toFullTextQuery(text: string): string | null {
  const groups: Term[][] = [[]];
  let count = 0;
  for (const piece of splitPieces(text)) {
    if (piece.bare && piece.text === "OR") {
      if (groups.at(-1)!.length > 0) groups.push([]);
      continue;
    }
    const term = toTerm(piece);
    if (!term || count >= MAX_QUERY_TERMS) continue;
    groups.at(-1)!.push(term);
    count++;
  }
  const clauses = groups.filter((group) => group.length > 0).map((group) => `(${group.map(quote).join(" AND ")})`);
  return clauses.length === 0 ? null : clauses.join(" OR ");
}

/**
 * A recall-oriented expression: any of the words (OR), stopwords and one-letter words dropped, for ranking
 * source messages by relevance to a question. Null when nothing searchable remains.
 */
export function toAnyWordQuery(text: string): string | null {
  const seen = new Set<string>();
  const terms: Term[] = [];
  for (const piece of splitPieces(text)) {
    for (const word of piece.text.split(/[^\p{L}\p{N}]+/u)) {
      const key = word.toLowerCase();
      if (word.length < 2 || STOPWORDS.has(key) || seen.has(key) || terms.length >= MAX_QUERY_TERMS) continue;
      seen.add(key);
      terms.push({ text: word, prefix: false });
    }
  }
  return terms.length === 0 ? null : terms.map(quote).join(" OR ");
}

interface Piece {
  text: string;
  /** False for "quoted phrases": those are taken literally, never as operators or prefixes. */
  bare: boolean;
}

function* splitPieces(text: string): Generator<Piece> {
  const cleaned = text.replace(CONTROL_CHARACTERS, " ");
  const pattern = /"([^"]*)"?|(\S+)/g;
  for (let match = pattern.exec(cleaned); match; match = pattern.exec(cleaned)) {
    if (match[1] !== undefined) yield { text: match[1], bare: false };
    else if (match[2] !== undefined) yield* splitBare(match[2]);
  }
}

/** A bare word may contain quotes in the middle (`foo"bar`); each side is a separate bare piece. */
function* splitBare(word: string): Generator<Piece> {
  for (const part of word.split('"')) if (part !== "") yield { text: part, bare: true };
}

function toTerm(piece: Piece): Term | null {
  let text = piece.text.trim();
  let prefix = false;
  if (piece.bare && text.endsWith("*")) {
    text = text.replace(/\*+$/, "");
    prefix = true;
  }
  if (!WORD_CHARACTER.test(text)) return null;
  return { text, prefix };
}

function quote(term: Term): string {
  return `"${term.text.replaceAll('"', '""')}"${term.prefix ? "*" : ""}`;
}
