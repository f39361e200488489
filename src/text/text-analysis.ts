/**
 * How text becomes searchable words, the same for every backend and for ranking. A word is a run of letters,
 * digits and marks; case and diacritics are folded. Each word also yields its fragments (camelCase, snake_case
 * and letter/digit parts, script runs, overlapping character pairs of scripts written without spaces) and its
 * Porter stem, so that a search for part of an identifier, a number without its unit, a few characters of
 * Chinese or another form of a word finds it. A backend indexes what `analyzeDocument` returns; queries are
 * analysed with the same functions, so index and query always agree (specs/013-recall.md).
 */
import { porterStem } from "./porter-stemmer.js";

/** One word of a text: folded form and its place in the original text ([start, end) in UTF-16 units). */
export interface Word {
  text: string;
  start: number;
  end: number;
}

/** What a backend indexes for one document: its words in order, and the derived forms. */
export interface AnalyzedDocument {
  /** The folded words, space-separated, in text order. */
  words: string;
  /** Per distinct word: its fragments in order, then the stems; space-separated. */
  derived: string;
  /** Number of words. */
  wordCount: number;
}

/**
 * Letters, digits and marks; emoji (pictographs, skin-tone modifiers, joiners, variation selectors) and every
 * other symbol or punctuation separate words, so `🤖deploy` holds the word `deploy`.
 */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
/** The same for text that is all ASCII (most of it), several times faster. */
const ASCII_WORD = /[A-Za-z0-9]+/g;
const LOWER_ASCII_WORD = /^[a-z]+$/;
const VARIATION_SELECTORS = /[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/gu;
/** Combining diacritics removed by folding (the general blocks; script-specific vowel signs are kept). */
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/gu;
const ASCII = /^[\x00-\x7f]*$/;
/** Scripts written without spaces between words (and Hangul, whose words carry attached particles). */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u3005\u30fc]/u;
const UNSPACED_RUNS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u3005\u30fc\p{M}]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u3005\u30fc]+/gu;
/** camelCase, acronyms, letter and digit runs: HTTPServer2Go → HTTP, Server, 2, Go. */
const CASE_PARTS = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?[\p{Ll}\p{M}]+|\p{Lu}[\p{Lu}\p{M}]*|\p{N}+|[^\p{Lu}\p{Ll}\p{N}]+/gu;
/** More parts than this is a hash or an opaque id (a3f9c1d2 has 8): not split. */
const MAX_PARTS = 6;
/** Stems of words shorter than this are not worth a separate index entry. */
const MIN_STEM_WORD = 4;
/** Entries kept by each memo (a history's vocabulary is Zipfian: a few thousand words are most of it). */
const MEMO_ENTRIES = 50_000;

/**
 * A bounded memo in two generations: when the young one is full the old one is dropped, so the words in use
 * stay and memory stays bounded (a dropped entry costs a recomputation, never a wrong answer).
 */
class Memo<Value> {
  private young = new Map<string, Value>();
  private old = new Map<string, Value>();

  get(key: string, compute: (key: string) => Value): Value {
    let value = this.young.get(key);
    if (value !== undefined) return value;
    value = this.old.get(key);
    if (value === undefined) value = compute(key);
    if (this.young.size >= MEMO_ENTRIES) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
    return value;
  }
}

/** Lower case, combining diacritics removed (café → cafe), recomposed; ASCII takes the fast path. */
export function fold(text: string): string {
  const lower = text.toLowerCase();
  if (ASCII.test(lower)) return lower;
  return lower.normalize("NFD").replace(DIACRITICS, "").normalize("NFC");
}

/** The words of `text` in order, folded, with their place in the original. */
export function words(text: string): Word[] {
  const found: Word[] = [];
  const pattern = wordPattern(text);
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const folded = fold(match[0]);
    if (folded !== "") found.push({ text: folded, start: match.index, end: match.index + match[0].length });
  }
  return found;
}

/** The word pattern for `text`, reset: the ASCII one when the text is all ASCII. */
function wordPattern(text: string): RegExp {
  const pattern = ASCII.test(text) ? ASCII_WORD : WORD;
  pattern.lastIndex = 0;
  return pattern;
}

/**
 * The fragments of one word as written (before folding), folded, in order: its parts when it is a camelCase or
 * mixed letter/digit word (`LcmContextEngine` → lcm context engine, `1234ms` → 1234 ms), its script runs and the
 * overlapping character pairs of unspaced scripts (`数据库` → 数据 据库, then 库 so a single character is found
 * at the end of a run). Empty when the word has no fragments other than itself.
 */
export function fragmentsOf(original: string): string[] {
  if (LOWER_ASCII_WORD.test(original)) return [];
  return fragmentMemo.get(original, computeFragments);
}

/** Whether a word holds characters of a script written without spaces. */
export function isUnspacedWord(word: string): boolean {
  return UNSPACED.test(word);
}

/**
 * The fragments a query word is looked up by: as `fragmentsOf`, but an unspaced run of two or more characters
 * gives only its pairs (a run inside a longer one is not followed by its last character alone), and a single
 * unspaced character is marked as a prefix of the pairs it starts (`prefix`).
 */
export function queryFragmentsOf(original: string): { fragments: string[]; prefix: boolean } {
  const cleaned = original.replace(VARIATION_SELECTORS, "");
  if (!UNSPACED.test(cleaned)) return { fragments: fragmentsOf(original), prefix: false };
  const characters = [...fold(cleaned)];
  if (characters.length === 1) return { fragments: characters, prefix: true };
  return { fragments: unspacedFragments(cleaned, false), prefix: false };
}

function computeFragments(original: string): string[] {
  const cleaned = original.replace(VARIATION_SELECTORS, "");
  if (UNSPACED.test(cleaned)) return unspacedFragments(cleaned, true);
  const parts = cleaned.match(CASE_PARTS) ?? [];
  if (parts.length < 2 || parts.length > MAX_PARTS) return [];
  return parts.map(fold).filter((part) => part !== "");
}

function unspacedFragments(word: string, withLastCharacter: boolean): string[] {
  const fragments: string[] = [];
  for (const run of word.match(UNSPACED_RUNS) ?? []) {
    if (!UNSPACED.test(run)) {
      const folded = fold(run);
      if (folded !== "") fragments.push(folded, ...fragmentsOf(run));
      continue;
    }
    const characters = [...fold(run)];
    if (characters.length === 1) fragments.push(characters[0]!);
    for (let index = 0; index + 1 < characters.length; index++) fragments.push(characters[index]! + characters[index + 1]!);
    if (characters.length > 1 && withLastCharacter) fragments.push(characters.at(-1)!);
  }
  return fragments;
}

/** The Porter stem of a folded word when it differs from the word (letters only, at least 4 long), else null. */
export function stemOf(word: string): string | null {
  if (word.length < MIN_STEM_WORD) return null;
  return stemMemo.get(word, computeStem);
}

function computeStem(word: string): string | null {
  const stem = porterStem(word);
  return stem !== word && stem.length > 0 ? stem : null;
}

const fragmentMemo = new Memo<string[]>();
const stemMemo = new Memo<string | null>();

/** What a document contributes to the index (see AnalyzedDocument); its words are also added to `distinctWords`. */
export function analyzeDocument(text: string, distinctWords?: Set<string>): AnalyzedDocument {
  const body: string[] = [];
  const derived: string[] = [];
  let seen: Set<string> | null = null;
  const pattern = wordPattern(text);
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const original = match[0];
    if (LOWER_ASCII_WORD.test(original)) {
      body.push(original);
      distinctWords?.add(original);
      continue;
    }
    const folded = fold(original);
    if (folded === "") continue;
    body.push(folded);
    distinctWords?.add(folded);
    seen ??= new Set();
    if (seen.has(original)) continue;
    seen.add(original);
    for (const fragment of fragmentsOf(original)) derived.push(fragment);
  }
  return { words: body.join(" "), derived: derived.join(" "), wordCount: body.length };
}
