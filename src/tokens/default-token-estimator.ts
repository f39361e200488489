/**
 * The default TokenEstimator: a one-pass scan that mimics how byte-level BPE tokenizers split text. Each word,
 * number group, punctuation run and indentation costs about one token, whatever its length; runs of consonants,
 * case flips, digit/letter alternation and non-English scripts cost more. Calibrated against OpenAI's o200k_base
 * and cl100k_base encodings on test/fixtures/token-calibration (prose, code, JSON, logs, tool output, CJK and nine
 * other scripts, emoji, base64, hashes, URLs, tables): on every kind it counts 2-51% more than the larger of the
 * two (prose and code 8-17%), never less, because an under-count is how a "fitting" context overflows a provider.
 * `npm run calibrate:tokens` prints the figures; docs/configuration.md, "How tokens are counted", explains them.
 */
import type { TokenEstimator } from "../contracts.js";
import { CHARACTER_CLASS_COUNT, CLASS_OF_CODE_UNIT, CharacterClass, classOfAstral } from "./character-classes.js";

/** Fixed cost of one image block; providers charge roughly this for a typical screenshot. */
export const DEFAULT_IMAGE_TOKENS = 1_600;

const C = CharacterClass;

/** A class the scan charges for: a high surrogate is read together with its low half first. */
type ScannedClass = Exclude<CharacterClass, typeof C.highSurrogate>;

/** Tokens charged per character of a class, before any run rule. Measured on natural text of each script. */
const CHARACTER_COST: Readonly<Record<ScannedClass, number>> = {
  [C.lowerVowel]: 0.03,
  [C.lowerConsonant]: 0.03,
  [C.upperVowel]: 0,
  [C.upperConsonant]: 0,
  [C.digit]: 0,
  [C.space]: 0,
  [C.newline]: 0,
  [C.punctuation]: 0,
  [C.control]: 1,
  [C.latin1Letter]: 2.4,
  [C.latinExtendedLetter]: 2.3,
  [C.cyrillic]: 0.6,
  [C.greek]: 1.1,
  [C.arabic]: 0.95,
  [C.hebrew]: 1.25,
  [C.brahmicOrThai]: 1.35,
  [C.rareScript]: 2,
  [C.han]: 1.25,
  [C.rareHan]: 3,
  [C.kana]: 1.1,
  [C.hangul]: 1.4,
  [C.cjkPunctuation]: 1,
  [C.generalPunctuation]: 1.25,
  [C.boxDrawing]: 0.8,
  [C.symbol]: 2,
  [C.emoji]: 3.25,
  [C.emojiJoiner]: 1.15,
  [C.rareBmp]: 3,
  [C.rareAstral]: 4,
};

/** Tokens charged by the run rules: starts of words, numbers and punctuation runs, and what makes a word expensive. */
const RUN_COST = {
  wordAfterSpace: 0.9, // " word" is one token; a leading space or line start merges into it
  wordAfterPunctuation: 0.55, // ".json", "/usr", "_name": the punctuation often merges into the word
  wordAfterDigit: 1, // "3f", "12ms": hex and units split at every digit/letter change
  wordAfterOther: 1,
  lowerToUpper: 0.5, // camelCase: a new sub-word
  upperAfterUpper: 0.25, // ALL_CAPS and base64 merge poorly
  lowerAfterCaps: 1.2, // "HSgiv": case flips inside random text
  longWordLetter: 0.1, // from the 9th letter of a (sub-)word
  veryLongWordLetter: 0.8, // and more from the 11th: compounds, concatenations
  thirdConsonant: 0.9, // "rwx", "lzma", "Zugriffs": consonant clusters are rare in any vocabulary
  digitGroup: 1.1, // every number splits into groups of at most 3 digits
  digitAfterSpace: 1.2, // " 42": the space before a number is a token of its own
  punctuationRun: 0.8,
  punctuationAfterDigit: 0.25, // "12.5", "09:26": separators inside numbers never merge
  punctuationContinued: 0.4,
  secondSpace: 1, // indentation and alignment: a run of spaces is a token
  newlineRun: 0.5, // often merged with the punctuation before it
} as const;

type Kind = "start" | "space" | "newline" | "punctuation" | "digit" | "lower" | "upper" | "caps" | "accented" | "other";

/** What the scanner remembers about the text so far: the last character's kind and the lengths of the current runs. */
interface ScanState {
  readonly kind: Kind;
  /** Letters since the (sub-)word started, capped at 10. */
  readonly letters: number;
  /** Consecutive ASCII consonants, capped at 3. */
  readonly consonants: number;
  /** Digits in the current number modulo 3. */
  readonly digits: number;
  /** Spaces in the current run, capped at 2. */
  readonly spaces: number;
}

const INITIAL_STATE: ScanState = { kind: "start", letters: 0, consonants: 0, digits: 0, spaces: 0 };
const LETTER_KINDS: ReadonlySet<Kind> = new Set(["lower", "upper", "caps", "accented"]);

function isUpper(characterClass: ScannedClass): boolean {
  return characterClass === C.upperVowel || characterClass === C.upperConsonant;
}

function isLetter(characterClass: ScannedClass): boolean {
  return characterClass <= C.upperConsonant || characterClass === C.latin1Letter || characterClass === C.latinExtendedLetter;
}

function letterStep(state: ScanState, characterClass: ScannedClass): { cost: number; next: ScanState } {
  const upper = isUpper(characterClass);
  const accented = characterClass === C.latin1Letter || characterClass === C.latinExtendedLetter;
  const kind: Kind = accented ? "accented" : !upper ? "lower" : state.kind === "upper" || state.kind === "caps" ? "caps" : "upper";
  const continues = LETTER_KINDS.has(state.kind);
  let cost = CHARACTER_COST[characterClass];
  let letters = 0;
  if (!continues) {
    cost += state.kind === "start" || state.kind === "space" || state.kind === "newline" ? RUN_COST.wordAfterSpace
      : state.kind === "punctuation" ? RUN_COST.wordAfterPunctuation
      : state.kind === "digit" ? RUN_COST.wordAfterDigit
      : RUN_COST.wordAfterOther;
  } else if (state.kind === "lower" && upper) {
    cost += RUN_COST.lowerToUpper;
  } else {
    letters = Math.min(state.letters + 1, 10);
    if (upper && (state.kind === "upper" || state.kind === "caps")) cost += RUN_COST.upperAfterUpper;
    if (!upper && !accented && state.kind === "caps") cost += RUN_COST.lowerAfterCaps;
    if (letters >= 8) cost += RUN_COST.longWordLetter;
    if (letters >= 10) cost += RUN_COST.veryLongWordLetter;
  }
  const isConsonant = characterClass === C.lowerConsonant || characterClass === C.upperConsonant;
  const consonants = !isConsonant ? 0 : continues ? Math.min(state.consonants + 1, 3) : 1;
  if (consonants >= 3) cost += RUN_COST.thirdConsonant;
  return { cost, next: { ...INITIAL_STATE, kind, letters, consonants } };
}

/** The cost of one character and the state after it: the rules, evaluated once per (state, class) pair at load. */
function step(state: ScanState, characterClass: ScannedClass): { cost: number; next: ScanState } {
  if (isLetter(characterClass)) return letterStep(state, characterClass);
  switch (characterClass) {
    case C.digit: {
      const digits = state.kind === "digit" ? (state.digits + 1) % 3 : 0;
      const cost = (digits === 0 ? RUN_COST.digitGroup : 0) + (state.kind === "space" ? RUN_COST.digitAfterSpace : 0);
      return { cost, next: { ...INITIAL_STATE, kind: "digit", digits } };
    }
    case C.punctuation: {
      const cost = state.kind === "punctuation" ? RUN_COST.punctuationContinued
        : RUN_COST.punctuationRun + (state.kind === "digit" ? RUN_COST.punctuationAfterDigit : 0);
      return { cost, next: { ...INITIAL_STATE, kind: "punctuation" } };
    }
    case C.space: {
      const spaces = state.kind === "space" ? Math.min(state.spaces + 1, 2) : 1;
      const cost = state.kind === "space" && state.spaces === 1 ? RUN_COST.secondSpace : 0;
      return { cost, next: { ...INITIAL_STATE, kind: "space", spaces } };
    }
    case C.newline:
      return { cost: state.kind === "newline" ? 0 : RUN_COST.newlineRun, next: { ...INITIAL_STATE, kind: "newline" } };
    default:
      return { cost: CHARACTER_COST[characterClass], next: { ...INITIAL_STATE, kind: "other" } };
  }
}

/** Costs are kept in hundredths of a token so that the sum is exact and the same text always gives the same count. */
const COST_SCALE = 100;

/**
 * Every state reachable from the start, explored breadth-first and compiled into one flat table. A state is a row of
 * CHARACTER_CLASS_COUNT entries; the entry for a class packs the cost of reading it (in hundredths, high 16 bits) with
 * the offset of the next state's row (low 16 bits), so the scan does one lookup and no multiplication per character.
 */
function compileTransitions(): Int32Array {
  const states: ScanState[] = [INITIAL_STATE];
  const rowOf = new Map<string, number>([[JSON.stringify(INITIAL_STATE), 0]]);
  const entries: number[] = [];
  for (let stateIndex = 0; stateIndex < states.length; stateIndex++) {
    for (let characterClass = 0; characterClass < CHARACTER_CLASS_COUNT; characterClass++) {
      const { cost, next } = step(states[stateIndex]!, characterClass as ScannedClass);
      const key = JSON.stringify(next);
      let row = rowOf.get(key);
      if (row === undefined) {
        row = states.length * CHARACTER_CLASS_COUNT;
        states.push(next);
        rowOf.set(key, row);
      }
      entries.push((Math.round(cost * COST_SCALE) << 16) | row);
    }
  }
  if (states.length * CHARACTER_CLASS_COUNT > 0xffff) throw new Error("token estimator: too many scan states to pack");
  return Int32Array.from(entries);
}

const TRANSITIONS = compileTransitions();

export class DefaultTokenEstimator implements TokenEstimator {
  readonly imageTokens: number;

  constructor(options: { imageTokens?: number } = {}) {
    this.imageTokens = options.imageTokens ?? DEFAULT_IMAGE_TOKENS;
  }

  estimate(text: string): number {
    const transitions = TRANSITIONS;
    const classOfUnit = CLASS_OF_CODE_UNIT;
    const length = text.length;
    let total = 0;
    let row = 0;
    for (let index = 0; index < length; index++) {
      let characterClass = classOfUnit[text.charCodeAt(index)]!;
      if (characterClass === C.highSurrogate) {
        const low = index + 1 < length ? text.charCodeAt(index + 1) : 0;
        if (low >= 0xdc00 && low < 0xe000) {
          characterClass = classOfAstral(0x10000 + ((text.charCodeAt(index) - 0xd800) << 10) + (low - 0xdc00));
          index++;
        } else {
          characterClass = C.rareBmp;
        }
      }
      const entry = transitions[row + characterClass]!;
      total += entry >> 16;
      row = entry & 0xffff;
    }
    // Any text is at least one token, even a lone space that the rules leave free (it usually merges with a word).
    return length === 0 ? 0 : Math.max(1, Math.ceil(total / COST_SCALE));
  }
}
