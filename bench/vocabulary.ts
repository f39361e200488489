/**
 * A ranked vocabulary for the synthetic sessions: English function words at the head, software words next, and a
 * long tail of pronounceable pseudo-words, drawn with a Zipf law as real text is. The head makes "common term"
 * searches hit most of the history; the tail makes the full-text index as wide as a real one.
 */
import { type Random, ZipfSampler } from "./random.js";

const FUNCTION_WORDS = (
  "the of and to a in is that it for on with as this be we are not or by can from at an if so but you will " +
  "should then when which have has was more all there one use also into just now need like only out new here " +
  "make what check because before after still same other each some any first next last way than them their " +
  "they our my your its do does did been being would could about over under again"
).split(" ");

const DOMAIN_WORDS = (
  "function error test build config server request response database query index cache file path module type " +
  "value return async await promise token session message context summary agent tool call result output input " +
  "string number object array map set key id name version schema table column row migration transaction lock " +
  "timeout retry queue worker thread process memory disk network socket port host client api endpoint route " +
  "handler middleware auth user password secret permission role policy deploy release branch commit merge " +
  "review diff patch fix bug issue feature refactor rename import export class interface method field property " +
  "parameter argument option flag default limit offset page cursor batch stream buffer chunk parse serialize " +
  "encode decode hash checksum compress log warn info debug trace metric latency throughput benchmark profile " +
  "plan step task goal decision reason note draft spec doc readme changelog package dependency install upgrade " +
  "node typescript javascript python rust sqlite postgres redis docker kubernetes linux shell script command " +
  "terminal editor compile lint format typecheck coverage assert expect mock fake fixture snapshot regression " +
  "failure success pending running stopped started finished empty null undefined missing invalid valid unknown " +
  "model prompt budget window compaction summarize expand grep describe search recall history turn reply"
).split(" ");

const ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch", "cl", "dr", "fl", "gr", "pl", "pr", "sh", "st", "str", "th", "tr", "qu"];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"];
const CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "x", "ck", "ng"];

const IDENTIFIER_POOL = 20_000;
const TYPE_POOL = 3_000;
const PATH_POOL = 5_000;

/**
 * Words, identifiers and paths. Identifiers, type names and paths come from fixed pools sampled with a Zipf law:
 * a real project names a few thousand things and repeats them, it does not coin a new identifier per line.
 */
export class Vocabulary {
  readonly words: string[];
  private readonly zipf: ZipfSampler;
  private readonly identifiers: string[];
  private readonly typeNames: string[];
  private readonly paths: string[];
  private readonly identifierZipf: ZipfSampler;
  private readonly pathZipf: ZipfSampler;

  constructor(random: Random, tailSize = 60_000, exponent = 1.05) {
    const seen = new Set<string>([...FUNCTION_WORDS, ...DOMAIN_WORDS]);
    const tail: string[] = [];
    while (tail.length < tailSize) {
      const syllables = random.int(2, 4);
      let word = "";
      for (let index = 0; index < syllables; index++) word += random.pick(ONSETS) + random.pick(VOWELS);
      word += random.pick(CODAS);
      if (seen.has(word)) continue;
      seen.add(word);
      tail.push(word);
    }
    this.words = [...FUNCTION_WORDS, ...DOMAIN_WORDS, ...tail];
    this.zipf = new ZipfSampler(this.words.length, exponent);
    this.identifiers = Array.from({ length: IDENTIFIER_POOL }, () => this.coinIdentifier(random));
    this.typeNames = this.identifiers.slice(0, TYPE_POOL).map((name) => name[0]!.toUpperCase() + name.slice(1));
    this.paths = Array.from({ length: PATH_POOL }, () => this.coinPath(random));
    this.identifierZipf = new ZipfSampler(IDENTIFIER_POOL, 1);
    this.pathZipf = new ZipfSampler(PATH_POOL, 1);
  }

  word(random: Random): string {
    return this.words[this.zipf.sample(random)]!;
  }

  /** A content word: skips the function-word head, so identifiers look like identifiers. */
  contentWord(random: Random): string {
    for (;;) {
      const rank = this.zipf.sample(random);
      if (rank >= FUNCTION_WORDS.length) return this.words[rank]!;
    }
  }

  identifier(random: Random): string {
    return this.identifiers[this.identifierZipf.sample(random)]!;
  }

  typeName(random: Random): string {
    return this.typeNames[this.identifierZipf.sample(random) % TYPE_POOL]!;
  }

  path(random: Random): string {
    return this.paths[this.pathZipf.sample(random)]!;
  }

  /** camelCase from one to three content words. */
  private coinIdentifier(random: Random): string {
    const count = random.int(1, 3);
    let name = this.contentWord(random);
    for (let index = 1; index < count; index++) {
      const next = this.contentWord(random);
      name += next[0]!.toUpperCase() + next.slice(1);
    }
    return name;
  }

  private coinPath(random: Random): string {
    const extension = random.pick([".ts", ".ts", ".ts", ".md", ".json", ".py", ".sql"]);
    const depth = random.int(1, 3);
    const folders: string[] = [];
    for (let index = 0; index < depth; index++) folders.push(this.contentWord(random));
    return `src/${folders.join("/")}/${this.contentWord(random)}-${this.contentWord(random)}${extension}`;
  }
}
