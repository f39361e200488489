/**
 * The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), for lower-case ASCII words: it
 * maps the common forms of an English word to one stem (deploy, deployed, deploying, deploys, deployment →
 * deploy), so a search for one form finds the others. Written here rather than taken from a package: the plugin
 * keeps its dependencies to two, and the algorithm is short and fixed. It over-stems on purpose (general and
 * generate share "gener"); search ranks exact forms above stem matches, so that costs order, never recall.
 */

/** Words shorter than this are returned unchanged, as in the reference implementation. */
const MIN_STEM_LENGTH = 3;

/** The stem of a lower-case ASCII word; any other input is returned unchanged. */
export function porterStem(word: string): string {
  if (word.length < MIN_STEM_LENGTH || !/^[a-z]+$/.test(word)) return word;
  let stem = step1a(word);
  stem = step1b(stem);
  stem = step1c(stem);
  stem = step2(stem);
  stem = step3(stem);
  stem = step4(stem);
  stem = step5(stem);
  // Step 1c turns a final y into i before the later steps can expose another y (deploy → deploi, but
  // deployment → deploy): one spelling for both keeps a word's forms together.
  return stem.endsWith("y") ? `${stem.slice(0, -1)}i` : stem;
}

function isConsonant(word: string, index: number): boolean {
  const character = word[index]!;
  if ("aeiou".includes(character)) return false;
  if (character === "y") return index === 0 || !isConsonant(word, index - 1);
  return true;
}

/** m: the number of vowel-consonant sequences in [C](VC){m}[V]. */
function measure(stem: string): number {
  let count = 0;
  let index = 0;
  const length = stem.length;
  while (index < length && isConsonant(stem, index)) index++;
  while (index < length) {
    while (index < length && !isConsonant(stem, index)) index++;
    if (index >= length) break;
    while (index < length && isConsonant(stem, index)) index++;
    count++;
  }
  return count;
}

function hasVowel(stem: string): boolean {
  for (let index = 0; index < stem.length; index++) if (!isConsonant(stem, index)) return true;
  return false;
}

function endsWithDoubleConsonant(word: string): boolean {
  const length = word.length;
  return length >= 2 && word[length - 1] === word[length - 2] && isConsonant(word, length - 1);
}

/** *o: the stem ends consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(word: string): boolean {
  const length = word.length;
  if (length < 3) return false;
  if (!isConsonant(word, length - 1) || isConsonant(word, length - 2) || !isConsonant(word, length - 3)) return false;
  return !"wxy".includes(word[length - 1]!);
}

function step1a(word: string): string {
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (word.endsWith("ies")) return word.slice(0, -2);
  if (word.endsWith("ss")) return word;
  if (word.endsWith("s")) return word.slice(0, -1);
  return word;
}

function step1b(word: string): string {
  if (word.endsWith("eed")) return measure(word.slice(0, -3)) > 0 ? word.slice(0, -1) : word;
  for (const suffix of ["ed", "ing"]) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.slice(0, -suffix.length);
    if (!hasVowel(stem)) return word;
    if (stem.endsWith("at") || stem.endsWith("bl") || stem.endsWith("iz")) return `${stem}e`;
    if (endsWithDoubleConsonant(stem) && !"lsz".includes(stem.at(-1)!)) return stem.slice(0, -1);
    if (measure(stem) === 1 && endsCvc(stem)) return `${stem}e`;
    return stem;
  }
  return word;
}

function step1c(word: string): string {
  return word.endsWith("y") && hasVowel(word.slice(0, -1)) ? `${word.slice(0, -1)}i` : word;
}

const STEP2: readonly [string, string][] = [
  ["ational", "ate"], ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["izer", "ize"], ["abli", "able"],
  ["alli", "al"], ["entli", "ent"], ["eli", "e"], ["ousli", "ous"], ["ization", "ize"], ["ation", "ate"],
  ["ator", "ate"], ["alism", "al"], ["iveness", "ive"], ["fulness", "ful"], ["ousness", "ous"], ["aliti", "al"],
  ["iviti", "ive"], ["biliti", "ble"],
];
const STEP3: readonly [string, string][] = [
  ["icate", "ic"], ["ative", ""], ["alize", "al"], ["iciti", "ic"], ["ical", "ic"], ["ful", ""], ["ness", ""],
];
const STEP4 = [
  "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti",
  "ous", "ive", "ize",
];

/** Replaces the longest matching suffix when the stem before it has measure > `minimum`. */
function replaceSuffix(word: string, rules: readonly [string, string][], minimum: number): string {
  let best: [string, string] | null = null;
  for (const rule of rules) if (word.endsWith(rule[0]) && (!best || rule[0].length > best[0].length)) best = rule;
  if (!best) return word;
  const stem = word.slice(0, -best[0].length);
  return measure(stem) > minimum ? stem + best[1] : word;
}

function step2(word: string): string {
  return replaceSuffix(word, STEP2, 0);
}

function step3(word: string): string {
  return replaceSuffix(word, STEP3, 0);
}

function step4(word: string): string {
  let best: string | null = null;
  for (const suffix of STEP4) if (word.endsWith(suffix) && (!best || suffix.length > best.length)) best = suffix;
  if (!best) return word;
  const stem = word.slice(0, -best.length);
  if (best === "ion" && !(stem.endsWith("s") || stem.endsWith("t"))) return word;
  return measure(stem) > 1 ? stem : word;
}

function step5(word: string): string {
  let stem = word;
  if (stem.endsWith("e")) {
    const before = stem.slice(0, -1);
    const m = measure(before);
    if (m > 1 || (m === 1 && !endsCvc(before))) stem = before;
  }
  if (measure(stem) > 1 && endsWithDoubleConsonant(stem) && stem.endsWith("l")) stem = stem.slice(0, -1);
  return stem;
}
