/**
 * The default TokenEstimator: a weighted count of code points. Modern tokenizers spend about one token per
 * four characters of English or code, one per two or three characters of other alphabetic scripts, about one
 * per CJK character and one or two per emoji; a flat chars/4 under-counts Chinese text by a factor of four,
 * which is how a "fits the budget" context overflows a provider. Weights err slightly high on purpose.
 */
import type { TokenEstimator } from "../contracts.js";

/** Fixed cost of one image block; providers charge roughly this for a typical screenshot. */
export const DEFAULT_IMAGE_TOKENS = 1_600;

const ASCII_WEIGHT = 0.25;
const LATIN_EXTENDED_WEIGHT = 0.4;
const ALPHABETIC_SCRIPT_WEIGHT = 0.45;
const CJK_WEIGHT = 1.05;
const EMOJI_WEIGHT = 1.5;
const OTHER_WEIGHT = 0.6;

function weightOf(codePoint: number): number {
  if (codePoint < 0x80) return ASCII_WEIGHT;
  if (codePoint < 0x250) return LATIN_EXTENDED_WEIGHT; // Latin-1 supplement, Latin extended A/B
  if (codePoint < 0x2000) return ALPHABETIC_SCRIPT_WEIGHT; // Greek, Cyrillic, Hebrew, Arabic, Indic, Thai ...
  if (codePoint >= 0x2e80 && codePoint < 0xa000) return CJK_WEIGHT; // CJK radicals, kana, CJK unified
  if (codePoint >= 0xac00 && codePoint < 0xd7b0) return CJK_WEIGHT; // Hangul syllables
  if (codePoint >= 0xf900 && codePoint < 0xfb00) return CJK_WEIGHT; // CJK compatibility ideographs
  if (codePoint >= 0x1f000 && codePoint < 0x1fb00) return EMOJI_WEIGHT; // emoji and pictographs
  if (codePoint >= 0x2600 && codePoint < 0x2800) return EMOJI_WEIGHT; // misc symbols, dingbats
  if (codePoint >= 0x20000 && codePoint < 0x32000) return CJK_WEIGHT; // CJK extensions B+
  return OTHER_WEIGHT;
}

export class DefaultTokenEstimator implements TokenEstimator {
  readonly imageTokens: number;

  constructor(options: { imageTokens?: number } = {}) {
    this.imageTokens = options.imageTokens ?? DEFAULT_IMAGE_TOKENS;
  }

  estimate(text: string): number {
    let total = 0;
    const length = text.length;
    for (let index = 0; index < length; index++) {
      const unit = text.charCodeAt(index);
      if (unit < 0x80) {
        total += ASCII_WEIGHT;
        continue;
      }
      let codePoint = unit;
      if (unit >= 0xd800 && unit < 0xdc00 && index + 1 < length) {
        const low = text.charCodeAt(index + 1);
        if (low >= 0xdc00 && low < 0xe000) {
          codePoint = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
          index++;
        }
      }
      total += weightOf(codePoint);
    }
    return Math.ceil(total);
  }
}
