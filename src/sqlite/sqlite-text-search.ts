/**
 * Full-text reads of the SQLite backend: a query's terms compiled to FTS5 MATCH expressions over the contentless
 * indexes (schema 8), with the forms the term dictionary lists, and candidate rows read newest first inside a
 * rowid window. Every term becomes quoted FTS5 strings built from analysed words (never user text), so nothing
 * typed can reach FTS5's query syntax. EXPLAIN QUERY PLAN of a candidate read:
 *   SCAN messages_fts VIRTUAL TABLE INDEX 0:M…  (MATCH, rowid range, ORDER BY rowid DESC: no sorter)
 *   SEARCH m USING INTEGER PRIMARY KEY (rowid=?) | SEARCH d USING INTEGER PRIMARY KEY (rowid=?)
 */
import type { Database } from "./database.js";
import { stemOf } from "../text/text-analysis.js";
import { porterStem } from "../text/porter-stemmer.js";
import { isImplicitPrefix } from "../text/text-matcher.js";
import type { QueryTerm } from "../text/text-query.js";
import type { IndexRequirement, PreparedTextQuery, TextSelection } from "../store/retrieval-store.js";
import type { IndexTable } from "./sqlite-search-index.js";

/** The full-text tables: messages and summaries (sqlite-search-index.ts), chunks of stored content (sqlite-file-index.ts). */
export type FtsTable = IndexTable | "files_fts";

/** Forms listed per term at most (stems or prefixes); a start that begins more words is matched as a prefix. */
const MAX_FORMS = 24;
/** Matches read to estimate how common a term is: enough to tell a rare word from a common one (~0.5 ms). */
const FREQUENCY_SAMPLE = 2_000;
/** A prefix FTS5 expands itself (no dictionary: numbers) must be at least this long. */
const MIN_NATIVE_PREFIX = 5;

export interface TermForms {
  stems: string[];
  prefixes: string[];
}

/** Per term: how its prefix is matched. "listed": the dictionary words in `prefixes`; "native": FTS5's own. */
type PrefixMatch = "none" | "listed" | "native";

interface SqlitePrepared extends PreparedTextQuery {
  prefixMatch: PrefixMatch[];
}

/** An FTS5 string for analysed words (never holding a double quote: words are letters, digits and marks). */
function phrase(words: readonly string[]): string {
  return `"${words.join(" ").replaceAll('"', '""')}"`;
}

/** The lookups a term's forms come from: its stem key, and the start to expand (null: not a prefix). */
export function termLookups(term: QueryTerm): { stemKey: string | null; start: string | null } {
  const last = term.words.at(-1)!;
  const single = term.words.length === 1 && !term.quoted && !term.isStopword;
  const stemKey = single && /^[a-z]{3,}$/.test(last) ? porterStemKey(last) : null;
  return { stemKey, start: term.prefix || isImplicitPrefix(term) ? last : null };
}

function porterStemKey(word: string): string {
  return stemOf(word) ?? porterStem(word);
}

export class SqliteTextSearch {
  constructor(private readonly db: Database) {}

  /** Forms and frequencies of `terms` in `table`'s index, whose rows reach `indexedThrough`. */
  prepare(table: FtsTable, terms: QueryTerm[], indexedThrough: number, newest: number): PreparedTextQuery {
    const forms: TermForms[] = [];
    const prefixMatch: PrefixMatch[] = [];
    for (const term of terms) {
      const { stemKey, start } = termLookups(term);
      const stems = stemKey
        ? this.db.tuples<[string]>(
            "SELECT term FROM search_terms WHERE (stem = ?1 OR term = ?1) AND term <> ?2 LIMIT ?3", stemKey, term.words[0]!, MAX_FORMS,
          ).map(([word]) => word)
        : [];
      let prefixes: string[] = [];
      let match: PrefixMatch = "none";
      if (start !== null) {
        const listed = /[^0-9]/.test(start)
          ? this.db.tuples<[string]>(
              "SELECT term FROM search_terms WHERE term > ? AND term < ? LIMIT ?", start, `${start}\uffff`, MAX_FORMS + 1,
            ).map(([word]) => word)
          : null;
        if (listed && listed.length <= MAX_FORMS) {
          prefixes = listed;
          match = "listed";
        } else if (term.prefix || start.length >= MIN_NATIVE_PREFIX) match = "native";
      }
      forms.push({ stems, prefixes });
      prefixMatch.push(match);
    }
    const [documents, totalWords] = readVarints(this.db.get<{ block: Uint8Array | null }>(`SELECT block FROM ${table}_data WHERE id = 1`)?.block ?? null, 2);
    const prepared: SqlitePrepared = {
      terms, forms, prefixMatch, frequencies: [], documents: documents!, averageWords: totalWords! / Math.max(1, documents!),
      indexedThrough, newest,
    };
    // Function words are taken as found in half the documents: they weigh next to nothing either way.
    prepared.frequencies = terms.map((term, index) => (term.isStopword ? Math.ceil(prepared.documents / 2) : this.frequency(table, prepared, index)));
    return prepared;
  }

  /**
   * Documents holding term `index` as typed (its other forms are not counted: an OR of them costs more than it
   * tells), or through its forms when it is never found as typed: counted among its newest FREQUENCY_SAMPLE
   * matches, scaled when all are.
   */
  private frequency(table: FtsTable, prepared: SqlitePrepared, index: number): number {
    const count = (match: string) => this.db.get<{ count: number; oldest: number | null }>(
      `SELECT count(*) AS count, min(rowid) AS oldest FROM (SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid DESC LIMIT ${FREQUENCY_SAMPLE})`,
      match,
    )!;
    let row = count(phrase(prepared.terms[index]!.words));
    // Found only through its forms (a hash prefix, Chinese inside a longer run, sprain for sprained): count those.
    if (row.count === 0) row = count(termExpression(prepared, index));
    if (row.count < FREQUENCY_SAMPLE || row.oldest === null) return row.count;
    // Found in the whole sample: scale its density over the newest ids to the whole index.
    const span = Math.max(1, prepared.indexedThrough - row.oldest + 1);
    return Math.min(prepared.documents, Math.round((row.count * prepared.documents) / Math.min(span, prepared.documents)));
  }

  /** The MATCH expression of the selected terms. */
  expression(prepared: PreparedTextQuery, selection: TextSelection): string {
    return selection.groups
      .map((group) => `(${group.map((index) => `(${termExpression(prepared as SqlitePrepared, index)})`).join(" AND ")})`)
      .join(" OR ");
  }
}

/**
 * The alternatives a document may match term `index` by: its words (a phrase) and the term written another way,
 * each listed stem and prefix form,
 * FTS5's own prefix, and its fragments (a phrase in either column: `derived` holds them for longer words).
 */
function termExpression(prepared: SqlitePrepared, index: number): string {
  const term = prepared.terms[index]!;
  const forms = prepared.forms[index]!;
  const head = term.words.slice(0, -1);
  const alternatives = [phrase(term.words)];
  for (const written of term.alternatives ?? []) alternatives.push(phrase(written));
  for (const stem of forms.stems) alternatives.push(phrase([stem]));
  if (prepared.prefixMatch[index] === "listed") for (const word of forms.prefixes) alternatives.push(phrase([...head, word]));
  if (prepared.prefixMatch[index] === "native") alternatives.push(`${phrase(term.words)}*`);
  if (term.fragments.length > 1) alternatives.push(phrase(term.fragments));
  if (term.fragmentPrefix) alternatives.push(`derived : ${phrase(term.fragments)}*`);
  return alternatives.join(" OR ");
}

/** The MATCH expression of a regex's index requirement, over the words column only. */
export function requirementExpression(requirement: IndexRequirement): string | null {
  const alternatives = requirement.alternatives.map((alternative) => [
    ...alternative.words.map((word) => `${phrase([word.text])}${word.prefix ? "*" : ""}`),
    ...alternative.anyOf.map((group) => `(${group.map((word) => phrase([word])).join(" OR ")})`),
  ]);
  if (alternatives.some((parts) => parts.length === 0)) return null;
  if (alternatives.length === 0) return null;
  return `words : (${alternatives.map((parts) => `(${parts.join(" AND ")})`).join(" OR ")})`;
}

/**
 * The varints at the start of an FTS5 record: a docsize record holds the document's length in words per
 * column; the averages record (`<table>_data` id 1) the number of documents, then the total per column.
 * SQLite's varint: big-endian groups of 7 bits, the high bit set on every byte but the last.
 */
export function readVarints(record: Uint8Array | null, count: number): number[] {
  const values: number[] = [];
  let value = 0;
  for (let index = 0; record && index < record.length && values.length < count; index++) {
    const byte = record[index]!;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      values.push(value);
      value = 0;
    }
  }
  while (values.length < count) values.push(0);
  return values;
}
