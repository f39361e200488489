/**
 * Sorts characters into the classes the default token estimator charges for. Byte-level BPE tokenizers treat a
 * character by its script and by how common it was in their training text: English letters merge into long tokens,
 * a Han character costs about one token, a rare symbol up to one token per UTF-8 byte. One lookup table over all
 * UTF-16 code units answers the class of any character in the Basic Multilingual Plane; astral characters (emoji,
 * rare Han) are classified by range.
 */

/** The character classes, numbered densely so that they can index a table. */
export const CharacterClass = {
  lowerVowel: 0,
  lowerConsonant: 1,
  upperVowel: 2,
  upperConsonant: 3,
  digit: 4,
  space: 5,
  newline: 6,
  punctuation: 7,
  control: 8,
  /** Accented letters of Latin-1 (é, ü, ñ). */
  latin1Letter: 9,
  /** Latin Extended, IPA, combining marks, Vietnamese (ł, ř, ş, ạ). */
  latinExtendedLetter: 10,
  cyrillic: 11,
  greek: 12,
  arabic: 13,
  hebrew: 14,
  /** Devanagari to Malayalam, and Thai: scripts with natural-text samples in the calibration corpus. */
  brahmicOrThai: 15,
  /** Armenian, Syriac, Sinhala, Lao, Tibetan, Myanmar, Georgian, Ethiopic, Khmer, Mongolian ...: barely in any vocabulary. */
  rareScript: 16,
  /** CJK Unified Ideographs, the common block. */
  han: 17,
  /** Radicals, strokes, enclosed and compatibility CJK, extension A and the astral extensions. */
  rareHan: 18,
  kana: 19,
  hangul: 20,
  /** CJK punctuation and full-width forms. */
  cjkPunctuation: 21,
  /** General punctuation (dashes, curly quotes, ellipsis), Latin-1 signs, the replacement character. */
  generalPunctuation: 22,
  /** Box drawing and block elements: tree output, progress bars, boxed tables. */
  boxDrawing: 23,
  /** Arrows, maths, letterlike, enclosed, geometric, miscellaneous symbols, dingbats (☕ ✅ ❤). */
  symbol: 24,
  /** Astral emoji and pictographs. */
  emoji: 25,
  /** Zero-width joiner, variation selectors, skin-tone modifiers, tag characters: the glue of emoji sequences. */
  emojiJoiner: 26,
  /** Everything else in the BMP: private use, Yi, presentation forms, lone surrogates (up to 3 UTF-8 bytes). */
  rareBmp: 27,
  /** Everything else outside the BMP (4 UTF-8 bytes). */
  rareAstral: 28,
  /** Not a character: the first half of a surrogate pair, to be read together with the next code unit. */
  highSurrogate: 29,
} as const;

export type CharacterClass = (typeof CharacterClass)[keyof typeof CharacterClass];

/** Number of classes a scanner must handle, `highSurrogate` excluded. */
export const CHARACTER_CLASS_COUNT = 29;

const C = CharacterClass;

/** Non-ASCII BMP ranges as [first code unit, class], each running to the next entry's first code unit. */
const BMP_RANGES: ReadonlyArray<readonly [number, CharacterClass]> = [
  [0x80, C.control],
  [0xa0, C.space], // no-break space
  [0xa1, C.generalPunctuation], // ¡ « ° ± © ...
  [0xc0, C.latin1Letter],
  [0x100, C.latinExtendedLetter], // Latin Extended-A/B, IPA, spacing modifiers, combining marks
  [0x370, C.greek],
  [0x400, C.cyrillic],
  [0x530, C.rareScript], // Armenian
  [0x590, C.hebrew],
  [0x600, C.arabic],
  [0x700, C.rareScript], // Syriac
  [0x750, C.arabic], // Arabic supplement
  [0x780, C.rareScript], // Thaana, NKo, Samaritan ...
  [0x900, C.brahmicOrThai], // Devanagari ... Malayalam
  [0xd80, C.rareScript], // Sinhala
  [0xe00, C.brahmicOrThai], // Thai
  [0xe80, C.rareScript], // Lao, Tibetan, Myanmar, Georgian
  [0x1100, C.hangul], // Hangul Jamo
  [0x1200, C.rareScript], // Ethiopic, Cherokee, Canadian syllabics, Khmer, Mongolian ...
  [0x1e00, C.latinExtendedLetter], // Latin Extended Additional (Vietnamese)
  [0x1f00, C.greek], // Greek Extended
  [0x2000, C.space], // en quad ... hair space
  [0x200b, C.generalPunctuation], // zero-width space, dashes, quotes, ellipsis
  [0x200d, C.emojiJoiner], // zero-width joiner
  [0x200e, C.generalPunctuation],
  [0x2070, C.symbol], // super/subscripts, currency, letterlike, arrows, maths, enclosed alphanumerics
  [0x2500, C.boxDrawing], // box drawing, block elements
  [0x25a0, C.symbol], // geometric shapes, misc symbols, dingbats, braille ...
  [0x2e80, C.rareHan], // CJK radicals, Kangxi, ideographic description
  [0x3000, C.cjkPunctuation],
  [0x3040, C.kana], // Hiragana, Katakana
  [0x3100, C.rareHan], // Bopomofo
  [0x3130, C.hangul], // Hangul compatibility Jamo
  [0x3190, C.rareHan], // Kanbun, Bopomofo extended, CJK strokes
  [0x31f0, C.kana], // Katakana phonetic extensions
  [0x3200, C.rareHan], // enclosed CJK, CJK compatibility, extension A
  [0x4e00, C.han],
  [0xa000, C.rareBmp], // Yi, Lisu, Vai ...
  [0xac00, C.hangul], // Hangul syllables
  [0xd7b0, C.rareBmp],
  [0xd800, C.highSurrogate],
  [0xdc00, C.rareBmp], // a lone low surrogate
  [0xf900, C.rareHan], // CJK compatibility ideographs
  [0xfb00, C.rareBmp], // presentation forms
  [0xfe00, C.emojiJoiner], // variation selectors
  [0xfe10, C.rareBmp],
  [0xff00, C.cjkPunctuation], // full-width and half-width forms
  [0xfff0, C.rareBmp],
  [0xfffd, C.generalPunctuation], // replacement character: binary output decoded as text
  [0xfffe, C.rareBmp],
];

function asciiClass(unit: number): CharacterClass {
  const char = String.fromCharCode(unit);
  if (char >= "a" && char <= "z") return "aeiouy".includes(char) ? C.lowerVowel : C.lowerConsonant;
  if (char >= "A" && char <= "Z") return "AEIOUY".includes(char) ? C.upperVowel : C.upperConsonant;
  if (char >= "0" && char <= "9") return C.digit;
  if (char === " " || char === "\t" || char === "\v" || char === "\f") return C.space;
  if (char === "\n" || char === "\r") return C.newline;
  if (unit < 0x20 || unit === 0x7f) return C.control;
  return C.punctuation;
}

function buildUnitTable(): Uint8Array {
  const table = new Uint8Array(0x10000);
  for (let unit = 0; unit < 0x80; unit++) table[unit] = asciiClass(unit);
  BMP_RANGES.forEach(([first, characterClass], index) => {
    table.fill(characterClass, first, BMP_RANGES[index + 1]?.[0] ?? 0x10000);
  });
  return table;
}

/** The class of every UTF-16 code unit; a high surrogate maps to `highSurrogate`. */
export const CLASS_OF_CODE_UNIT: Uint8Array = buildUnitTable();

/** The class of a code point outside the BMP. */
export function classOfAstral(codePoint: number): CharacterClass {
  if (codePoint >= 0x1f3fb && codePoint < 0x1f400) return C.emojiJoiner; // skin-tone modifiers
  if (codePoint >= 0x1f000 && codePoint < 0x1fb00) return C.emoji;
  if (codePoint >= 0x20000 && codePoint < 0x40000) return C.rareHan;
  if (codePoint >= 0xe0000 && codePoint < 0xe0080) return C.emojiJoiner; // tag characters (flags of regions)
  return C.rareAstral;
}
