/**
 * Full-text reads of the PostgreSQL backend: a query's terms compiled to tsqueries over the tsvector indexes
 * (pg-search-document.ts), with the forms the term dictionary lists, as sqlite-text-search.ts compiles them to FTS5
 * expressions: the same alternatives per term (its words as a phrase, other ways of writing it, stems, listed or
 * native prefixes, fragments in the `derived` weight), the same frequency estimate (matches among the newest 2,000,
 * scaled) and the same document statistics, so ranking (search/) orders results as it does on SQLite. Every lexeme
 * comes from the analysis, quoted, so nothing typed reaches the tsquery syntax.
 */
import { stemOf } from "../text/text-analysis.js";
import { porterStem } from "../text/porter-stemmer.js";
import { isImplicitPrefix } from "../text/text-matcher.js";
import type { QueryTerm } from "../text/text-query.js";
import type { IndexRequirement, PreparedTextQuery, TextSelection } from "../store/retrieval-store.js";
import { anyOrAlways, phraseQuery, queryWord } from "./pg-search-document.js";
import type { PgQueryable } from "./pg-queryable.js";
import type { PgSearchReader } from "./pg-search-reader.js";

/** The indexes: their table, row id, and name in search_index_stats. */
export const INDEXES = {
  messages: { table: "message_search", id: "message_id" },
  summaries: { table: "summary_search", id: "summary_id" },
  files: { table: "file_chunks", id: "chunk_id" },
} as const;

export type IndexName = keyof typeof INDEXES;

/** Forms listed per term at most (stems or prefixes); a start that begins more words is matched as a prefix. */
const MAX_FORMS = 24;
/** Matches read to estimate how common a term is. */
const FREQUENCY_SAMPLE = 2_000;
/** A prefix matched natively (no dictionary: numbers) must be at least this long. */
const MIN_NATIVE_PREFIX = 5;

type PrefixMatch = "none" | "listed" | "native";

interface PgPrepared extends PreparedTextQuery {
  prefixMatch: PrefixMatch[];
}

/** The lookups a term's forms come from: its stem key, and the start to expand (null: not a prefix). */
function termLookups(term: QueryTerm): { stemKey: string | null; start: string | null } {
  const last = term.words.at(-1)!;
  const single = term.words.length === 1 && !term.quoted && !term.isStopword;
  const stemKey = single && /^[a-z]{3,}$/.test(last) ? (stemOf(last) ?? porterStem(last)) : null;
  return { stemKey, start: term.prefix || isImplicitPrefix(term) ? last : null };
}

export class PgTextSearch {
  constructor(private readonly reader: PgSearchReader) {}

  /** Forms and frequencies of `terms` in an index whose rows reach `indexedThrough`. */
  async prepare(index: IndexName, terms: QueryTerm[], indexedThrough: number, newest: number): Promise<PreparedTextQuery> {
    return this.reader.each("look-up of the query's words", (tx) => this.prepareIn(tx, index, terms, indexedThrough, newest));
  }

  private async prepareIn(tx: PgQueryable, index: IndexName, terms: QueryTerm[], indexedThrough: number, newest: number): Promise<PreparedTextQuery> {
    const forms: { stems: string[]; prefixes: string[] }[] = [];
    const prefixMatch: PrefixMatch[] = [];
    for (const term of terms) {
      const { stemKey, start } = termLookups(term);
      const stems = stemKey
        ? (await tx.rows<{ term: string }>(
            "SELECT term FROM search_terms WHERE (stem = $1 OR term = $1) AND term <> $2 LIMIT $3", [stemKey, term.words[0]!, MAX_FORMS],
          )).map((row) => row.term)
        : [];
      let prefixes: string[] = [];
      let match: PrefixMatch = "none";
      if (start !== null) {
        const listed = /[^0-9]/.test(start)
          ? (await tx.rows<{ term: string }>(
              "SELECT term FROM search_terms WHERE term > $1 AND term LIKE $2 ORDER BY term LIMIT $3",
              [start, `${start.replace(/[\\%_]/g, (character) => `\\${character}`)}%`, MAX_FORMS + 1],
            )).map((row) => row.term)
          : null;
        if (listed && listed.length <= MAX_FORMS) {
          prefixes = listed;
          match = "listed";
        } else if (term.prefix || start.length >= MIN_NATIVE_PREFIX) match = "native";
      }
      forms.push({ stems, prefixes });
      prefixMatch.push(match);
    }
    const stats = await tx.row<{ documents: number; total_words: number }>(
      "SELECT documents, total_words FROM search_index_stats WHERE name = $1", [index],
    );
    const documents = stats?.documents ?? 0;
    const prepared: PgPrepared = {
      terms, forms, prefixMatch, frequencies: [], documents, averageWords: (stats?.total_words ?? 0) / Math.max(1, documents),
      indexedThrough, newest,
    };
    // Function words are taken as found in half the documents: they weigh next to nothing either way.
    for (const [position, term] of terms.entries()) {
      prepared.frequencies.push(term.isStopword ? Math.ceil(documents / 2) : await this.frequency(tx, index, prepared, position));
    }
    return prepared;
  }

  /**
   * Documents holding term `position` as typed, or through its forms when it is never found as typed: counted among
   * its newest FREQUENCY_SAMPLE matches, scaled when all are (as the SQLite backend counts).
   */
  private async frequency(tx: PgQueryable, index: IndexName, prepared: PgPrepared, position: number): Promise<number> {
    const { table, id } = INDEXES[index];
    const count = async (query: string) => (await tx.row<{ count: number; oldest: number | null }>(
      `SELECT count(*)::int AS count, min(id) AS oldest FROM (
         SELECT ${id} AS id FROM ${table} WHERE document @@ $1::tsquery ORDER BY ${id} DESC LIMIT ${FREQUENCY_SAMPLE}) sample`,
      [query],
    ))!;
    let row = await count(phraseQuery(prepared.terms[position]!.words));
    if (row.count === 0) row = await count(termQuery(prepared, position));
    if (row.count < FREQUENCY_SAMPLE || row.oldest === null) return row.count;
    const span = Math.max(1, prepared.indexedThrough - row.oldest + 1);
    return Math.min(prepared.documents, Math.round((row.count * prepared.documents) / Math.min(span, prepared.documents)));
  }

  /** The tsquery of the selected terms (documents too large to index are candidates of every query). */
  expression(prepared: PreparedTextQuery, selection: TextSelection): string {
    return anyOrAlways(selection.groups.map((group) => `(${group.map((position) => `(${termQuery(prepared as PgPrepared, position)})`).join(" & ")})`));
  }
}

/**
 * The alternatives a document may match term `position` by: its words (a phrase) and the term written another way,
 * each listed stem and prefix form, a native prefix, and its fragments (in either weight; a fragment prefix in B).
 */
function termQuery(prepared: PgPrepared, position: number): string {
  const term = prepared.terms[position]!;
  const forms = prepared.forms[position]!;
  const head = term.words.slice(0, -1);
  const alternatives = [phraseQuery(term.words)];
  for (const written of term.alternatives ?? []) alternatives.push(phraseQuery(written));
  for (const stem of forms.stems) alternatives.push(phraseQuery([stem]));
  if (prepared.prefixMatch[position] === "listed") for (const word of forms.prefixes) alternatives.push(phraseQuery([...head, word]));
  if (prepared.prefixMatch[position] === "native") alternatives.push(phraseQuery(term.words, { prefix: true }));
  if (term.fragments.length > 1) alternatives.push(phraseQuery(term.fragments));
  if (term.fragmentPrefix) alternatives.push(phraseQuery(term.fragments, { prefix: true, weight: "B" }));
  return alternatives.join(" | ");
}

/** The tsquery of a regex's index requirement, over the words (weight A) only; null when nothing can match. */
export function requirementQuery(requirement: IndexRequirement): string | null {
  const alternatives = requirement.alternatives.map((alternative) => [
    ...alternative.words.map((word) => queryWord(word.text, { prefix: word.prefix, weight: "A" })),
    ...alternative.anyOf.map((group) => `(${group.map((word) => queryWord(word, { weight: "A" })).join(" | ")})`),
  ]);
  if (alternatives.length === 0 || alternatives.some((parts) => parts.length === 0)) return null;
  return anyOrAlways(alternatives.map((parts) => `(${parts.join(" & ")})`));
}
