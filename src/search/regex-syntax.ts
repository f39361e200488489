/**
 * A small parser for JavaScript regular expressions (without the `u` flag), just deep enough for two questions
 * asked before a search runs: "can this pattern backtrack exponentially?" (regex-policy.ts) and "which literal
 * text must every match contain?" (regex-prefilter.ts). It runs after `new RegExp` accepted the pattern, so it
 * may be lenient; anything it does not understand becomes an opaque atom, which only makes both answers more
 * conservative.
 */

export interface Quantifier {
  min: number;
  /** Infinity for `*`, `+` and `{n,}`. */
  max: number;
}

export type RegexNode =
  | { kind: "char"; char: string; quantifier: Quantifier | null }
  /** `.`, `\d`, `\w`, `[...]` and friends; `whitespace` for `\s`, which always separates words. */
  | { kind: "class"; whitespace: boolean; quantifier: Quantifier | null }
  | { kind: "anchor"; anchor: "start" | "end" | "boundary" }
  | { kind: "backreference"; quantifier: Quantifier | null }
  | { kind: "group"; lookaround: boolean; alternatives: RegexNode[][]; quantifier: Quantifier | null };

/** The top-level alternatives of a pattern, each a sequence of nodes. */
export function parseRegex(pattern: string): RegexNode[][] {
  const parser = new Parser(pattern);
  return parser.alternatives();
}

const SIMPLE_ESCAPES: Record<string, string> = { t: "\t", n: "\n", v: "\v", f: "\f", r: "\r", "0": "\0" };

class Parser {
  private position = 0;
  constructor(private readonly source: string) {}

  alternatives(): RegexNode[][] {
    const alternatives: RegexNode[][] = [[]];
    while (this.position < this.source.length) {
      const character = this.source[this.position]!;
      if (character === ")") return alternatives;
      if (character === "|") {
        this.position++;
        alternatives.push([]);
        continue;
      }
      alternatives.at(-1)!.push(this.atom());
    }
    return alternatives;
  }

  private atom(): RegexNode {
    const character = this.source[this.position++]!;
    switch (character) {
      case "^":
        return { kind: "anchor", anchor: "start" };
      case "$":
        return { kind: "anchor", anchor: "end" };
      case ".":
        return { kind: "class", whitespace: false, quantifier: this.quantifier() };
      case "[":
        this.skipClass();
        return { kind: "class", whitespace: false, quantifier: this.quantifier() };
      case "(":
        return this.group();
      case "\\":
        return this.escape();
      default:
        return { kind: "char", char: character, quantifier: this.quantifier() };
    }
  }

  private group(): RegexNode {
    let lookaround = false;
    if (this.source[this.position] === "?") {
      const rest = this.source.slice(this.position + 1);
      if (rest.startsWith(":")) this.position += 2;
      else if (rest.startsWith("=") || rest.startsWith("!")) {
        lookaround = true;
        this.position += 2;
      } else if (rest.startsWith("<=") || rest.startsWith("<!")) {
        lookaround = true;
        this.position += 3;
      } else if (rest.startsWith("<")) {
        const close = this.source.indexOf(">", this.position);
        this.position = close < 0 ? this.source.length : close + 1;
      }
    }
    const alternatives = this.alternatives();
    if (this.source[this.position] === ")") this.position++;
    return { kind: "group", lookaround, alternatives, quantifier: this.quantifier() };
  }

  private escape(): RegexNode {
    const character = this.source[this.position++] ?? "\\";
    if ("dDwWS".includes(character)) return { kind: "class", whitespace: false, quantifier: this.quantifier() };
    if (character === "s") return { kind: "class", whitespace: true, quantifier: this.quantifier() };
    if (character === "b" || character === "B") return { kind: "anchor", anchor: "boundary" };
    if (/[1-9]/.test(character)) {
      while (/[0-9]/.test(this.source[this.position] ?? "")) this.position++;
      return { kind: "backreference", quantifier: this.quantifier() };
    }
    if (character === "k" && this.source[this.position] === "<") {
      const close = this.source.indexOf(">", this.position);
      this.position = close < 0 ? this.source.length : close + 1;
      return { kind: "backreference", quantifier: this.quantifier() };
    }
    if (character === "x" || character === "u") {
      const digits = character === "x" ? 2 : 4;
      const hex = this.source.slice(this.position, this.position + digits);
      if (new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) {
        this.position += digits;
        return { kind: "char", char: String.fromCharCode(parseInt(hex, 16)), quantifier: this.quantifier() };
      }
      return { kind: "char", char: character, quantifier: this.quantifier() };
    }
    if (character === "c") {
      // A control character (\cJ); its exact value does not matter to either analysis.
      if (/[a-zA-Z]/.test(this.source[this.position] ?? "")) this.position++;
      return { kind: "class", whitespace: false, quantifier: this.quantifier() };
    }
    return { kind: "char", char: SIMPLE_ESCAPES[character] ?? character, quantifier: this.quantifier() };
  }

  private skipClass(): void {
    if (this.source[this.position] === "^") this.position++;
    while (this.position < this.source.length) {
      const character = this.source[this.position++];
      if (character === "\\") this.position++;
      else if (character === "]") return;
    }
  }

  /** Reads a quantifier after an atom, if any (a `{` that does not form one is a literal, as in Annex B). */
  private quantifier(): Quantifier | null {
    const character = this.source[this.position];
    let quantifier: Quantifier | null = null;
    if (character === "*") quantifier = { min: 0, max: Infinity };
    else if (character === "+") quantifier = { min: 1, max: Infinity };
    else if (character === "?") quantifier = { min: 0, max: 1 };
    else if (character === "{") {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.position));
      if (!match) return null;
      const min = Number(match[1]);
      const max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
      this.position += match[0].length - 1;
      quantifier = { min, max };
    }
    if (!quantifier) return null;
    this.position++;
    if (this.source[this.position] === "?") this.position++; // lazy variant: same shape
    return quantifier;
  }
}
