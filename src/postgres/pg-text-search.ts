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
import { anyOrAlways, lexemeOf, phraseQuery, queryWord } from "./pg-search-document.js";
import { BACKLOG_SELECT } from "./pg-file-index.js";
import { type PgQueryable, type PgStatement, preparedStatement } from "./pg-queryable.js";
import { catchUpStateSql } from "./pg-search-index.js";
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

/** How long a pool keeps an index's most common lexemes (they change with ANALYZE, every few thousand rows). */
const COMMON_SHARES_MS = 60_000;
const commonSharesCache = new Map<string, { at: number; shares: Map<string, number> }>();

/**
 * The first string after every string that starts with `start`, in byte (code point) order: `start` with its last
 * character's code point one higher; null when there is none (a last character of U+10FFFF).
 */
function prefixSuccessor(start: string): string | null {
  const characters = [...start];
  const last = characters.pop()!.codePointAt(0)!;
  if (last >= 0x10ffff) return null;
  // Past the surrogates (not characters): the next code point after U+D7FF that a string can hold is U+E000.
  return characters.join("") + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
}

/**
 * An index's state as a search reads it with its look-up: rows waiting for the index (stored content: files), how far
 * it reaches (`through`), the newest row id, (stored content) the bytes waiting, and (messages) how far the backlog's
 * blocks reach.
 */
export interface IndexReadState {
  waiting: number;
  through: number;
  newest: number;
  bytes: number;
  /** Messages: the highest id the backlog's blocks cover (pg-backlog-blocks.ts; 0: none). */
  blocks: number;
}

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

/** A term's newest matches counted: how many (at most FREQUENCY_SAMPLE) and the oldest id among them. */
interface Sample {
  count: number;
  oldest: number | null;
}

/**
 * SQL of a term's sample in `index` for the tsquery `query` (a column of the statement). `+ 0`: the GIN index reads
 * the matches (few: the statistics list every common word); the primary key's order would read every row for a word
 * found nowhere.
 */
function sampleSql(index: IndexName, query: string): string {
  const { table, id } = INDEXES[index];
  return `(SELECT count(*)::int AS count, min(id) AS oldest FROM (
      SELECT ${id} AS id FROM ${table} WHERE document @@ ${query}::tsquery ORDER BY ${id} + 0 DESC LIMIT ${FREQUENCY_SAMPLE}) sample)`;
}

/**
 * The state a search reads of an index with its look-up (`IndexReadState`): for messages and summaries their catch-up
 * (rows waiting, at most $11 counted), for stored content its backlog.
 */
function stateSql(index: IndexName): string {
  if (index === "files") {
    return `SELECT files AS waiting, coalesce(through, 0) AS through, coalesce(through, 0) AS newest, ceil(coalesce(bytes, 0))::bigint AS bytes,
        0::bigint AS blocks
      FROM (${BACKLOG_SELECT}) backlog`;
  }
  return `SELECT waiting, through, newest, 0::bigint AS bytes, blocks FROM (${catchUpStateSql(index, "$11")}) caught`;
}

/**
 * Per index, in one statement (one snapshot): each term's stems ($1-$3: positions, stem keys, the words themselves) and
 * listed prefixes ($4-$7: positions, starts, LIKE patterns, the first string past the prefix), the index's counts ($8:
 * its name), the newest matches of each term to count ($9-$10: positions, tsqueries as typed), and the index's state.
 */
function lookUpSql(index: IndexName): string {
  return `WITH state AS MATERIALIZED (${stateSql(index)})
  SELECT t.position, 'stem' AS kind, d.term, NULL::bigint AS documents, NULL::bigint AS total_words
  FROM unnest($1::int[], $2::text[], $3::text[]) AS t (position, key, word)
  CROSS JOIN LATERAL (SELECT term FROM search_terms WHERE (stem = t.key OR term = t.key) AND term <> t.word LIMIT ${MAX_FORMS}) d
  UNION ALL
  SELECT t.position, 'prefix', d.term, NULL, NULL
  FROM unnest($4::int[], $5::text[], $6::text[], $7::text[]) AS t (position, start, pattern, below)
  CROSS JOIN LATERAL (
    SELECT term FROM search_terms WHERE term > t.start AND (t.below IS NULL OR term < t.below) AND term LIKE t.pattern
    ORDER BY term LIMIT ${MAX_FORMS + 1}) d
  UNION ALL
  SELECT -1, 'counts', NULL, documents, total_words FROM search_index_stats WHERE name = $8
  UNION ALL
  SELECT t.position, 'sample', NULL, typed.count, typed.oldest
  FROM unnest($9::int[], $10::text[]) AS t (position, typed) CROSS JOIN LATERAL ${sampleSql(index, "t.typed")} typed
  UNION ALL
  SELECT -2, 'state', NULL, waiting::bigint, through::bigint FROM state
  UNION ALL
  SELECT -3, 'newest', NULL, newest::bigint, bytes FROM state
  UNION ALL
  SELECT -4, 'blocks', NULL, blocks::bigint, NULL FROM state`;
}

const LOOK_UP_SQL = Object.fromEntries((Object.keys(INDEXES) as IndexName[]).map((index) => [index, preparedStatement(lookUpSql(index), { plan: "generic" })])) as Record<IndexName, PgStatement>;

export class PgTextSearch {
  constructor(private readonly reader: PgSearchReader) {}

  /**
   * Forms and frequencies of `terms` in an index, and its state (`IndexReadState`: how far it reaches; rows waiting,
   * at most `atMost` + 1 counted), in one statement (every term's dictionary look-ups, the index's counts, the matches
   * of each term PostgreSQL's statistics do not list, the state: one snapshot, a round trip for all), and a second
   * one only for a term found nowhere as typed that has other forms (counted through them). The caller indexes a
   * small backlog itself and prepares again (the dictionary is written with the index).
   */
  async prepare(index: IndexName, terms: QueryTerm[], atMost: number): Promise<{ prepared: PreparedTextQuery; state: IndexReadState }> {
    return this.reader.each("look-up of the query's words", async (reads) => {
      const common = await this.commonShares(reads, index);
      const shares = terms.map((term) => (term.isStopword || term.words.length !== 1 ? undefined : common.get(lexemeOf(term.words[0]!).lexeme)));
      const counted = terms.flatMap((term, position) => (!term.isStopword && shares[position] === undefined ? [position] : []));
      const looked = await this.lookUp(reads, index, terms, counted, atMost);
      const { state } = looked;
      const prepared: PgPrepared = {
        terms, forms: looked.forms, prefixMatch: looked.prefixMatch, frequencies: [], documents: looked.documents,
        averageWords: looked.totalWords / Math.max(1, looked.documents), indexedThrough: state.through, newest: state.newest,
        ...(state.blocks > state.through ? { backlogBlocksThrough: state.blocks } : {}),
      };
      prepared.frequencies = await this.frequencies(reads, index, prepared, shares, looked.samples);
      return { prepared, state };
    });
  }

  /**
   * Each term's stems and listed prefixes (one B-tree range each), the index's counts, and for each term of `counted`
   * its newest FREQUENCY_SAMPLE matches as typed (`samples`), all in one statement.
   */
  private async lookUp(reads: PgQueryable, index: IndexName, terms: QueryTerm[], counted: number[], atMost: number) {
    const lookups = terms.map(termLookups);
    const stemmed = lookups.flatMap((lookup, position) => (lookup.stemKey === null ? [] : [{ position, key: lookup.stemKey, word: terms[position]!.words[0]! }]));
    const listed = lookups.flatMap((lookup, position) => (lookup.start !== null && /[^0-9]/.test(lookup.start) ? [{ position, start: lookup.start }] : []));
    const rows = await reads.rows<{
      position: number; kind: "stem" | "prefix" | "counts" | "sample" | "state" | "newest" | "blocks"; term: string | null; documents: number | null; total_words: number | null;
    }>(
      LOOK_UP_SQL[index],
      [
        stemmed.map((each) => each.position), stemmed.map((each) => each.key), stemmed.map((each) => each.word),
        listed.map((each) => each.position), listed.map((each) => each.start),
        listed.map((each) => `${each.start.replace(/[\\%_]/g, (character) => `\\${character}`)}%`), listed.map((each) => prefixSuccessor(each.start)),
        index, counted, counted.map((position) => phraseQuery(terms[position]!.words)),
        ...(index === "files" ? [] : [atMost + 1]),
      ],
    );
    const forms = terms.map(() => ({ stems: [] as string[], prefixes: [] as string[] }));
    let documents = 0;
    let totalWords = 0;
    const samples = new Map<number, Sample>();
    const state: IndexReadState = { waiting: 0, through: 0, newest: 0, bytes: 0, blocks: 0 };
    // Sample and state rows carry their numbers in the counts' two number columns.
    for (const row of rows) {
      if (row.kind === "sample") samples.set(row.position, { count: row.documents ?? 0, oldest: row.total_words });
      else if (row.kind === "state") {
        state.waiting = row.documents ?? 0;
        state.through = row.total_words ?? 0;
      } else if (row.kind === "newest") {
        state.newest = row.documents ?? 0;
        state.bytes = row.total_words ?? 0;
      } else if (row.kind === "blocks") state.blocks = row.documents ?? 0;
      else if (row.kind === "counts") {
        documents = row.documents ?? 0;
        totalWords = row.total_words ?? 0;
      } else if (row.kind === "stem") forms[row.position]!.stems.push(row.term!);
      else forms[row.position]!.prefixes.push(row.term!);
    }
    const prefixMatch = terms.map((term, position): PrefixMatch => {
      const start = lookups[position]!.start;
      if (start === null) return "none";
      const words = forms[position]!.prefixes;
      if (/[^0-9]/.test(start) && words.length <= MAX_FORMS) return "listed";
      forms[position]!.prefixes = [];
      return term.prefix || start.length >= MIN_NATIVE_PREFIX ? "native" : "none";
    });
    for (const form of forms) form.prefixes.sort();
    return { forms, prefixMatch, documents, totalWords, samples, state };
  }

  /**
   * The share of documents holding each lexeme PostgreSQL's statistics list as most common in the index (ANALYZE, run by
   * autovacuum, keeps ~1,000 per index): a common word's frequency read from there costs nothing, where counting its
   * matches reads thousands of rows. Kept per pool for COMMON_SHARES_MS.
   */
  private async commonShares(reads: PgQueryable, index: IndexName): Promise<Map<string, number>> {
    const key = `${this.reader.pool.location}\u0000${index}`;
    const cached = commonSharesCache.get(key);
    if (cached && Date.now() - cached.at < COMMON_SHARES_MS) return cached.shares;
    const rows = await reads.rows<{ lexeme: string; share: number }>(
      `SELECT u.lexeme, u.share FROM pg_stats p, unnest(p.most_common_elems::text::text[], p.most_common_elem_freqs) AS u (lexeme, share)
       WHERE p.schemaname = current_schema() AND p.tablename = $1 AND p.attname = 'document' AND u.lexeme IS NOT NULL`,
      [INDEXES[index].table],
    );
    const shares = new Map(rows.map((row) => [row.lexeme, row.share]));
    commonSharesCache.set(key, { at: Date.now(), shares });
    return shares;
  }

  /**
   * Per term: documents holding it. Function words are taken as found in half the documents (they weigh next to nothing
   * either way); a one-word term the statistics list, by its share; every other term by its sample as typed, or, when
   * never found as typed, through its forms (one statement for all such terms): its newest FREQUENCY_SAMPLE matches,
   * scaled when all are (as the SQLite backend counts).
   */
  private async frequencies(
    reads: PgQueryable, index: IndexName, prepared: PgPrepared, shares: (number | undefined)[], samples: Map<number, Sample>,
  ): Promise<number[]> {
    const { documents, terms } = prepared;
    // A term with no form besides its words as typed is found nowhere through its forms either.
    const absent = [...samples].filter(([position, sample]) => sample.count === 0 && termQuery(prepared, position) !== phraseQuery(terms[position]!.words))
      .map(([position]) => position);
    if (absent.length > 0) {
      const rows = await reads.rows<{ position: number; count: number; oldest: number | null }>(
        `SELECT t.position, formed.count, formed.oldest
         FROM unnest($1::int[], $2::text[]) AS t (position, formed) CROSS JOIN LATERAL ${sampleSql(index, "t.formed")} formed`,
        [absent, absent.map((position) => termQuery(prepared, position))],
      );
      for (const row of rows) samples.set(row.position, { count: row.count, oldest: row.oldest });
    }
    return terms.map((term, position) => {
      if (term.isStopword) return Math.ceil(documents / 2);
      const share = shares[position];
      if (share !== undefined) return Math.min(documents, Math.round(share * documents));
      const sample = samples.get(position) ?? { count: 0, oldest: null };
      if (sample.count < FREQUENCY_SAMPLE || sample.oldest === null) return sample.count;
      const span = Math.max(1, prepared.indexedThrough - sample.oldest + 1);
      return Math.min(documents, Math.round((sample.count * documents) / Math.min(span, documents)));
    });
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
