/**
 * Finds a query's terms in one document's text, the same way for every backend: what the index lists as a
 * candidate is checked and weighed here, and rows the index has not reached yet are matched here alone. A term
 * occurs as its words (in order, separated by anything but letters and digits), as another form of a one-word
 * term (same Porter stem), as a word it begins (prefix terms, and an id or number of 4+ characters typed without
 * quotes), or as its fragments inside a longer word (`contextEngine` in `LcmContextEngine`, `1234ms` for 1234 ms,
 * Chinese characters inside a run). One regular expression per query scans the text once.
 */
import { porterStem } from "./porter-stemmer.js";
import { fold, stemOf } from "./text-analysis.js";
import type { QueryTerm } from "./text-query.js";

/** How a term was found: its own words, another form, the start of a longer word, or fragments inside a word. */
export type HitKind = "exact" | "stem" | "prefix" | "fragment";

export interface TermHit {
  kind: HitKind;
  start: number;
  end: number;
}

export interface DocumentMatch {
  /** Per query term (same order): its hits in text order (empty when absent). */
  hits: TermHit[][];
  /** The text the offsets refer to: the document, or its folded form when folding changed its length. */
  text: string;
  /**
   * How telling each term is (its inverse document frequency), when the search that matched knows: snippets and
   * excerpts centre on the rarest terms rather than the most (search/text-snippet.ts).
   */
  weights?: readonly number[];
}

/** An unquoted last word with a digit and at least this long also matches as the start of a longer word. */
export const MIN_IMPLICIT_PREFIX = 4;

/**
 * Whether a term also matches words its last word begins without a `*`: an id, hash or number typed short
 * (4f2a9c1 for 4f2a9c1d7e…), which holds a digit. Ordinary words find their other forms through the stem.
 */
export function isImplicitPrefix(term: QueryTerm): boolean {
  const last = term.words.at(-1)!;
  return !term.quoted && !term.prefix && last.length >= MIN_IMPLICIT_PREFIX && /\p{N}/u.test(last);
}
/** The pieces of the patterns, for text that is all ASCII (faster: no Unicode mode) and for any text. */
interface Flavour {
  word: RegExp;
  /** Not after a letter or digit: where a word starts. */
  before: string;
  /** Separators between the words of a term, and between two fragments (`1234 ms`, `context_engine`). */
  separators: string;
  fragmentGap: string;
  after: string;
  letters: string;
  flags: string;
}

const ASCII_FLAVOUR: Flavour = {
  word: /[A-Za-z0-9]/, before: "(?<![A-Za-z0-9])", separators: "[^A-Za-z0-9]+", fragmentGap: "[^A-Za-z0-9]{0,3}", after: "(?![A-Za-z0-9])",
  letters: "[A-Za-z]*", flags: "gi",
};
const UNICODE_FLAVOUR: Flavour = {
  word: /[\p{L}\p{N}\p{M}]/u, before: "(?<![\\p{L}\\p{N}\\p{M}])", separators: "[^\\p{L}\\p{N}\\p{M}]+", fragmentGap: "[^\\p{L}\\p{N}]{0,3}",
  after: "(?![\\p{L}\\p{N}\\p{M}])", letters: "\\p{L}*", flags: "gu",
};
const ASCII = /^[\x00-\x7f]*$/;

interface Alternative {
  term: number;
  kind: HitKind;
  /** For stem alternatives: the stem a matched word must have. */
  stem?: string;
}

/** Characters of a long text that are matched (region). */
const MATCHED_CHARACTERS = 8_000;
/** Strength of each kind, for keeping the best of two hits at one place. */
const STRENGTH: Record<HitKind, number> = { exact: 3, stem: 2, fragment: 1, prefix: 0 };

/** The two regular expressions of a query in one flavour, and what each capture group stands for. */
interface Compiled {
  primary: RegExp | null;
  forms: RegExp | null;
  flavour: Flavour;
}

/**
 * A compiled query: a regular expression for words, prefixes and fragments, and one for the candidates of other
 * forms (words starting like the stem, each checked by stemming it), whose capture groups say which term matched.
 * ASCII text (most of it) is matched without Unicode mode, case-insensitively, which is several times faster.
 */
export class QueryMatcher {
  private readonly primaryAlternatives: Alternative[] = [];
  private readonly formAlternatives: Alternative[] = [];
  private readonly ascii: Compiled;
  private readonly unicode: Compiled;
  /** Terms that are forms of one word (renew, renews): a hit of one is a hit of the others. */
  private readonly sameWord: number[][];
  /** What every hit starts with, per alternative (lower case): where a long text's matched stretch begins. */
  private readonly literals: string[];

  constructor(readonly terms: readonly QueryTerm[]) {
    const primary: ((flavour: Flavour) => string)[] = [];
    const forms: ((flavour: Flavour) => string)[] = [];
    const words = (term: QueryTerm, flavour: Flavour) => term.words.map(escape).join(flavour.separators);
    // Where several alternatives match at one place the first wins: exact words first.
    terms.forEach((term, index) => {
      primary.push((flavour) => `${flavour.before}${words(term, flavour)}${term.prefix ? "" : flavour.after}`);
      this.primaryAlternatives.push({ term: index, kind: term.prefix ? "prefix" : "exact" });
      // The same term written another way (a number and its unit with or without the space) is the term itself.
      for (const written of term.alternatives ?? []) {
        primary.push((flavour) => `${flavour.before}${written.map(escape).join(flavour.separators)}${flavour.after}`);
        this.primaryAlternatives.push({ term: index, kind: "exact" });
      }
    });
    terms.forEach((term, index) => {
      // A function word counts only as itself (its hits place a phrase); its other forms mean nothing.
      if (term.isStopword) return;
      if (term.unspaced) {
        primary.push(() => escape(term.words[0]!));
        this.primaryAlternatives.push({ term: index, kind: "fragment" });
      } else if (term.fragments.length > 1) {
        primary.push((flavour) => term.fragments.map(escape).join(flavour.fragmentGap));
        this.primaryAlternatives.push({ term: index, kind: "fragment" });
      }
      if (isImplicitPrefix(term)) {
        primary.push((flavour) => `${flavour.before}${words(term, flavour)}${flavour.word.source}+`);
        this.primaryAlternatives.push({ term: index, kind: "prefix" });
      }
      const stem = stemKey(term);
      if (stem !== null) {
        forms.push((flavour) => `${flavour.before}${escape(stemStart(stem))}${flavour.letters}${flavour.after}`);
        this.formAlternatives.push({ term: index, kind: "stem", stem });
      }
    });
    const compile = (sources: ((flavour: Flavour) => string)[], flavour: Flavour) =>
      sources.length > 0 ? new RegExp(sources.map((source) => `(${source(flavour)})`).join("|"), flavour.flags) : null;
    this.ascii = { primary: compile(primary, ASCII_FLAVOUR), forms: compile(forms, ASCII_FLAVOUR), flavour: ASCII_FLAVOUR };
    this.unicode = { primary: compile(primary, UNICODE_FLAVOUR), forms: compile(forms, UNICODE_FLAVOUR), flavour: UNICODE_FLAVOUR };
    const byStem = new Map<string, number[]>();
    terms.forEach((term, index) => {
      const stem = stemKey(term);
      if (stem !== null) byStem.set(stem, [...(byStem.get(stem) ?? []), index]);
    });
    this.sameWord = [...byStem.values()].filter((group) => group.length > 1);
    this.literals = [...new Set(terms.flatMap((term) => {
      const stem = stemKey(term);
      return [term.words[0]!, ...(term.fragments.length > 1 ? [term.fragments[0]!] : []), ...(stem !== null ? [stemStart(stem)] : [])];
    }))];
  }

  /** The hits of every term in `text`. */
  match(text: string): DocumentMatch {
    const isAscii = ASCII.test(text);
    // ASCII text is matched as it is, case-insensitively; other text folded first (case and diacritics).
    const searched = isAscii ? text : fold(text);
    const compiled = isAscii ? this.ascii : this.unicode;
    const hits: TermHit[][] = this.terms.map(() => []);
    const region = this.region(searched);
    if (compiled.primary) collect(compiled.primary, this.primaryAlternatives, searched, region, hits);
    if (compiled.forms) {
      const found: TermHit[][] = this.terms.map(() => []);
      collect(compiled.forms, this.formAlternatives, searched, region, found);
      found.forEach((list, index) => {
        const known = hits[index]!;
        for (const hit of list) {
          const same = known.findIndex((other) => other.start === hit.start);
          if (same < 0) known.push(hit);
          else if (STRENGTH[hit.kind] > STRENGTH[known[same]!.kind]) known[same] = hit;
        }
        known.sort((left, right) => left.start - right.start);
      });
    }
    for (const group of this.sameWord) {
      const shared = group.flatMap((index) => hits[index]!).sort((left, right) => left.start - right.start);
      for (const index of group) hits[index] = shared.filter((hit, at) => at === 0 || hit.start !== shared[at - 1]!.start);
    }
    return { hits, text: searched.length === text.length ? text : searched };
  }

  /**
   * The stretch of a long text that is matched: all of a text of at most MATCHED_CHARACTERS, else that many
   * characters from a little before the first place any term's first literal occurs (a 24 KB log is ranked
   * by its first hits; scanning all of it costs more than the rest of a search).
   */
  private region(text: string): { from: number; to: number } {
    if (text.length <= MATCHED_CHARACTERS) return { from: 0, to: text.length };
    const lower = text.toLowerCase();
    let first = text.length;
    for (const literal of this.literals) {
      const at = lower.indexOf(literal);
      if (at >= 0 && at < first) first = at;
    }
    const from = first === text.length ? 0 : Math.max(0, first - MATCHED_CHARACTERS / 8);
    return { from, to: Math.min(text.length, from + MATCHED_CHARACTERS) };
  }

  /** Whether the text holds every term of one of `groups` (indexes into `terms`). */
  static holdsGroup(match: DocumentMatch, groups: readonly number[][]): boolean {
    return groups.some((group) => group.every((index) => match.hits[index]!.length > 0));
  }
}

function collect(pattern: RegExp, alternatives: readonly Alternative[], text: string, region: { from: number; to: number }, hits: TermHit[][]): void {
  // A long text's stretch is matched on its own, so the engine never scans past it for the next match.
  const searched = region.from === 0 && region.to === text.length ? text : text.slice(region.from, region.to);
  pattern.lastIndex = 0;
  for (let found = pattern.exec(searched); found; found = pattern.exec(searched)) {
    let group = 1;
    while (group < found.length && found[group] === undefined) group++;
    const alternative = alternatives[group - 1];
    if (alternative && (alternative.kind !== "stem" || stemKeyOf(found[0].toLowerCase()) === alternative.stem)) {
      const start = region.from + found.index;
      hits[alternative.term]!.push({ kind: alternative.kind, start, end: start + found[0].length });
    }
    if (found[0].length === 0) pattern.lastIndex++;
  }
}

/** The stem a one-word term's other forms share, or null (phrases, quoted words, numbers, short words). */
export function stemKey(term: QueryTerm): string | null {
  if (term.quoted || term.words.length !== 1 || !/^[a-z]{3,}$/.test(term.words[0]!)) return null;
  return stemKeyOf(term.words[0]!);
}

/** The stem under which the forms of a folded word are grouped. */
export function stemKeyOf(word: string): string {
  return stemOf(word) ?? porterStem(word);
}

/**
 * What every word with this stem starts with: Porter only rewrites the last two or three letters (y → i, an e
 * added after at/bl/iz, ational → ate), so the stem without its last two letters begins them all.
 */
export function stemStart(stem: string): string {
  return stem.slice(0, Math.max(3, stem.length - 2));
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}
