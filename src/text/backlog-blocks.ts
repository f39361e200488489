/**
 * The backlog's blocks, what every backend shares of them (spec 030 Design 2c; SQLite: sqlite/sqlite-backlog-blocks.ts,
 * PostgreSQL: postgres/pg-backlog-blocks.ts): a coarse filter over a large backlog of messages the full-text index has
 * not reached, built in a first pass of seconds, so that a search reads only the runs of rows that may hold what it
 * looks for instead of every row.
 *
 * A block is BACKLOG_BLOCK_ROWS consecutive messages (by id) and two bits set per trigram of their text (a Bloom
 * filter of BLOCK_BITS bits): the text a row is searched as (`trigramText`), ASCII letters lowered, as UTF-16 code
 * units. A substring every match holds (a folded core, an ASCII regex literal) has all its trigrams in the text of the
 * row holding it, so a block missing one of a substring's bits holds no row with it: never a miss. Few blocks pass
 * without holding it: at 1M, 7,554 distinct trigrams per block (p50) set 37% of the bits, so a trigram a block lacks
 * passes 14% of the time, a substring of three trigrams 0.3%. Bit `n` is bit `n % 8` (the least significant first) of
 * byte `n / 8`, as PostgreSQL's get_bit numbers them.
 */
import { fold } from "./text-analysis.js";

/** Rows per block: a block that may hold a match is read directly (about 256 × 320 characters at 1M). */
export const BACKLOG_BLOCK_ROWS = 256;
/** Characters after which a block ends before BACKLOG_BLOCK_ROWS rows, so that long rows do not fill its bits. */
const BLOCK_CHARACTERS = 256 * 1_024;
/** Bits per block (4 KiB): 7,500 distinct trigrams, two bits each, set 37% of them. */
export const BLOCK_BITS = 32_768;
/** Shortest substring the blocks can rule out (one trigram). */
const MIN_LITERAL = 3;

export interface Block {
  firstId: number;
  lastId: number;
  bloom: Uint8Array;
}

/** The text a row is matched as by a trigram filter: its searchable text, folded when it is not all ASCII. */
export function trigramText(searchable: string): string {
  return /^[\x00-\x7f]*$/.test(searchable) ? searchable : fold(searchable);
}

/** The hash of a trigram of code units (ASCII letters lowered before): its two bits are its low and high halves. */
function trigramHash(first: number, second: number, third: number): number {
  let hash = Math.imul(first, 0x9e3779b1) ^ Math.imul(second, 0x85ebca77) ^ Math.imul(third, 0xc2b2ae3d);
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x2c1b3c6d);
  hash ^= hash >>> 12;
  return hash;
}

function lowerAscii(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

/** Sets the bits of every trigram of `text` in `bits`. */
function addTrigrams(bits: Uint8Array, text: string): void {
  if (text.length < MIN_LITERAL) return;
  let first = lowerAscii(text.charCodeAt(0));
  let second = lowerAscii(text.charCodeAt(1));
  for (let index = 2; index < text.length; index++) {
    const third = lowerAscii(text.charCodeAt(index));
    // bitsOf, inlined: this loop runs once per character of the backlog.
    const hash = trigramHash(first, second, third);
    const low = hash & (BLOCK_BITS - 1);
    const high = (hash >>> 16) & (BLOCK_BITS - 1);
    bits[low >>> 3]! |= 1 << (low & 7);
    bits[high >>> 3]! |= 1 << (high & 7);
    first = second;
    second = third;
  }
}

/** The two bits a trigram's hash sets: its low and high halves. */
function bitsOf(hash: number): [number, number] {
  return [hash & (BLOCK_BITS - 1), (hash >>> 16) & (BLOCK_BITS - 1)];
}

/**
 * Per substring (folded), the bits a block must have all of to possibly hold it; null when one is shorter than a
 * trigram (nothing can be ruled out).
 */
export function substringBits(anyOf: readonly string[]): number[][] | null {
  if (anyOf.length === 0 || anyOf.some((literal) => literal.length < MIN_LITERAL)) return null;
  return anyOf.map((literal) => {
    const bits = new Set<number>();
    for (let index = 2; index < literal.length; index++) {
      const hash = trigramHash(lowerAscii(literal.charCodeAt(index - 2)), lowerAscii(literal.charCodeAt(index - 1)), lowerAscii(literal.charCodeAt(index)));
      for (const bit of bitsOf(hash)) bits.add(bit);
    }
    return [...bits];
  });
}

/**
 * Rows read oldest first above `from` (each its id and searchable text), cut into blocks: BACKLOG_BLOCK_ROWS rows or
 * BLOCK_CHARACTERS characters each. The first block starts right above `from`, each next one right above the last.
 */
export function blocksOf(from: number, rows: readonly (readonly [number, string])[]): Block[] {
  const blocks: Block[] = [];
  let block: Block | null = null;
  let rowsIn = 0;
  let characters = 0;
  for (const [id, searchable] of rows) {
    if (!block) {
      block = { firstId: (blocks.at(-1)?.lastId ?? from) + 1, lastId: id, bloom: new Uint8Array(BLOCK_BITS / 8) };
      rowsIn = 0;
      characters = 0;
    }
    const text = trigramText(searchable);
    addTrigrams(block.bloom, text);
    block.lastId = id;
    characters += text.length;
    if (++rowsIn >= BACKLOG_BLOCK_ROWS || characters >= BLOCK_CHARACTERS) {
      blocks.push(block);
      block = null;
    }
  }
  if (block) blocks.push(block);
  return blocks;
}
