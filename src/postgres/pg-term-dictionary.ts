/**
 * The term dictionary on PostgreSQL (`search_terms`, migration 2): every indexed word with a letter in it, with its
 * reversal (words ending with a fragment are one B-tree range of the reversed keys) and its Porter stem (one form of a
 * word finds the others). The indexers list a chunk's new words in the chunk's own transaction, so the dictionary may
 * list a word before it is indexed, never after. Words go in sorted (concurrent indexers take the same keys in the same
 * order: no deadlock) and a per-pool memo skips the words this process already listed.
 */
import { stemOf } from "../text/text-analysis.js";
import type { PgQueryable } from "./pg-queryable.js";
import { lexemeOf, MAX_LEXEME_CHARACTERS } from "./pg-search-document.js";

/** A dictionary word has something other than digits (numbers are most of a history's distinct words). */
const HAS_LETTER = /[^0-9]/;
/** Words the memo keeps per pool (two generations of this many). */
const KNOWN_TERMS = 100_000;

interface KnownTerms {
  young: Set<string>;
  old: Set<string>;
}

const knownTerms = new WeakMap<object, KnownTerms>();

/** A word's reversal, by characters (a word longer than a lexeme: its last MAX_LEXEME_CHARACTERS, reversed). */
export function reversedWord(word: string): string {
  const reversed = [...word].reverse();
  return (reversed.length > MAX_LEXEME_CHARACTERS ? reversed.slice(0, MAX_LEXEME_CHARACTERS) : reversed).join("");
}

export class PgTermDictionary {
  /** `owner`: what the memo is kept per (the pool's database). */
  constructor(private readonly owner: object) {}

  /**
   * Inside the indexing transaction: lists the words of `words` the dictionary lacks. Returns the words to remember
   * once the transaction committed (`committed`).
   */
  async list(tx: PgQueryable, words: Iterable<string>): Promise<string[]> {
    const known = this.known();
    const unknown = new Set<string>();
    for (const word of words) if (!known.young.has(word) && !known.old.has(word) && HAS_LETTER.test(word)) unknown.add(word);
    if (unknown.size === 0) return [];
    const rows = [...unknown].map((word) => ({ term: lexemeOf(word).lexeme, reversed: reversedWord(word), stem: stemOf(word) }));
    await tx.run(
      `INSERT INTO search_terms (term, reversed, stem)
       SELECT term, reversed, stem FROM unnest($1::text[], $2::text[], $3::text[]) AS t (term, reversed, stem)
       ORDER BY term COLLATE "C" ON CONFLICT (term) DO NOTHING`,
      [rows.map((row) => row.term), rows.map((row) => row.reversed), rows.map((row) => row.stem)],
    );
    return [...unknown];
  }

  /** After the transaction committed: remembers the words it listed. */
  committed(added: readonly string[]): void {
    const known = this.known();
    for (const word of added) {
      if (known.young.size >= KNOWN_TERMS) {
        known.old = known.young;
        known.young = new Set();
      }
      known.young.add(word);
    }
  }

  private known(): KnownTerms {
    let known = knownTerms.get(this.owner);
    if (!known) knownTerms.set(this.owner, (known = { young: new Set(), old: new Set() }));
    return known;
  }
}
