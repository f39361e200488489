/**
 * The term dictionary (`search_terms`): every indexed word with a letter in it, reversed (a regex word that may end
 * a longer word finds the words ending with it by one range scan) and with its Porter stem (a search for one form
 * of a word finds the others). The indexers (messages and summaries: sqlite-search-index.ts; stored content:
 * sqlite-file-index.ts) list a chunk's new words in the chunk's own transaction, so the dictionary may list a word
 * before it is indexed, never after. A per-connection memo of words already listed keeps that cheap once the
 * vocabulary settles, and what listing an unknown word costs is measured, for the indexers' time budgets.
 */
import type { Database } from "./database.js";
import { reverseText } from "./database.js";
import { stemOf } from "../text/text-analysis.js";

/** A dictionary word has something other than digits (numbers are most of a history's distinct words). */
const HAS_LETTER = /[^0-9]/;
/** Words the memo of listed dictionary terms keeps per connection (two generations of this many). */
const KNOWN_TERMS = 100_000;
/**
 * Cost of a word the memo does not know, listing and commit included, until chunks have measured it: ~45 µs for a
 * new word at 100k messages (a lookup, an insert into three B-trees, their pages in the commit); a few µs for a
 * word already listed.
 */
const INITIAL_MS_PER_UNKNOWN_WORD = 0.04;

/**
 * The memo: words known to be listed (two generations), the message index's watermark it was built at, and what
 * listing a word the memo does not know has cost lately (a lookup, an insert when new).
 */
interface KnownTerms {
  young: Set<string>;
  old: Set<string>;
  through: number;
  msPerUnknownWord: number;
}

/** The words this process knows are listed, per connection (cleared when the indexes start over). */
const knownTerms = new WeakMap<Database, KnownTerms>();

/**
 * A chunk's distinct words, counting those the memo does not know as they come (they are looked up, or listed). The
 * words of the row being read can be taken out again (dropRow), when the row goes to the next chunk instead.
 */
export class ChunkWords extends Set<string> {
  unknown = 0;
  private rowWords: string[] = [];
  /** The words of the row being read that the memo does not know, in the order read. */
  rowUnknown: string[] = [];
  constructor(private readonly isKnown: (word: string) => boolean) {
    super();
  }

  override add(word: string): this {
    if (this.has(word)) return this;
    if (!this.isKnown(word)) {
      this.unknown++;
      this.rowUnknown.push(word);
    }
    this.rowWords.push(word);
    return super.add(word);
  }

  startRow(): void {
    this.rowWords = [];
    this.rowUnknown = [];
  }

  dropRow(): void {
    for (const word of this.rowWords) this.delete(word);
    this.unknown -= this.rowUnknown.length;
    this.startRow();
  }
}

export class TermDictionary {
  /** When the last chunk began, how long its rows took, and how many of its words the memo did not know. */
  private lastChunk: { started: number; loopMs: number; unknownWords: number } | null = null;

  constructor(private readonly db: Database) {}

  /** An empty word set for a new chunk, knowing what the memo knows. */
  chunkWords(): ChunkWords {
    const known = this.known();
    return new ChunkWords((word) => known.young.has(word) || known.old.has(word) || !HAS_LETTER.test(word));
  }

  /** What listing one word the memo does not know costs lately (ms), commit included. */
  msPerUnknownWord(): number {
    return this.known().msPerUnknownWord;
  }

  /** Before a chunk's transaction: nothing measured yet. */
  startChunk(): void {
    this.lastChunk = null;
  }

  /**
   * Inside the chunk's transaction: lists the words of `words` the dictionary lacks, appending them to `added`
   * (remember them once the transaction committed), and notes when the chunk began and how long its rows took.
   * Words the memo does not know are looked up in one read first: after a restart the memo is empty and most of a
   * chunk's words are already listed (one statement instead of one per word).
   */
  list(words: Set<string>, added: string[], chunk: { started: number; loopMs: number; unknownWords: number }): void {
    this.lastChunk = chunk;
    const known = this.known();
    const unknown: string[] = [];
    for (const word of words) if (!known.young.has(word) && !known.old.has(word) && HAS_LETTER.test(word)) unknown.push(word);
    if (unknown.length === 0) return;
    const listed = new Set(
      this.db.tuples<[string]>("SELECT term FROM search_terms WHERE term IN (SELECT value FROM json_each(?))", JSON.stringify(unknown))
        .map(([term]) => term),
    );
    for (const word of unknown) {
      if (!listed.has(word)) {
        this.db.run("INSERT OR IGNORE INTO search_terms (term, reversed, stem) VALUES (?, ?, ?)", word, reverseText(word), stemOf(word));
      }
      added.push(word);
    }
  }

  /**
   * After a chunk committed (write resolves right after COMMIT, in a microtask): learns what the chunk cost beyond
   * its rows (listing its words, and the commit, whose pages are mostly the dictionary's) per word the memo did not
   * know, and records the chunk's words as listed (a rolled-back chunk listed nothing and never gets here).
   */
  committed(added: readonly string[]): void {
    const known = this.known();
    const chunk = this.lastChunk;
    if (chunk && chunk.unknownWords > 0) {
      const measured = Math.max(0, performance.now() - chunk.started - chunk.loopMs) / chunk.unknownWords;
      known.msPerUnknownWord += (measured - known.msPerUnknownWord) / 2;
    }
    for (const word of added) {
      if (known.young.size >= KNOWN_TERMS) {
        known.old = known.young;
        known.young = new Set();
      }
      known.young.add(word);
    }
  }

  /** The message index went backwards (another process started it over): the memo no longer holds. */
  forgetIfStartedOver(through: number): void {
    const known = this.known();
    if (through < known.through) {
      known.young.clear();
      known.old.clear();
    }
    known.through = through;
  }

  /** The dictionary was emptied (an index rebuild): forget what the memo knew. */
  forget(): void {
    knownTerms.delete(this.db);
  }

  private known(): KnownTerms {
    let known = knownTerms.get(this.db);
    if (!known) knownTerms.set(this.db, (known = { young: new Set(), old: new Set(), through: 0, msPerUnknownWord: INITIAL_MS_PER_UNKNOWN_WORD }));
    return known;
  }
}
