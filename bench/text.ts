/**
 * Text of the kinds an agent session holds: prose, code, command output, test runs, search hits and file
 * contents, built from the Zipf vocabulary. Sizes are in UTF-16 code units (the generator's text is ASCII, so
 * this is also bytes).
 */
import type { Random } from "./random.js";
import type { Vocabulary } from "./vocabulary.js";

export class TextMaker {
  constructor(readonly vocabulary: Vocabulary) {}

  sentence(random: Random, minWords = 6, maxWords = 18): string {
    const count = random.int(minWords, maxWords);
    const words: string[] = [];
    for (let index = 0; index < count; index++) {
      const roll = random.next();
      if (roll < 0.04) words.push(`\`${this.vocabulary.identifier(random)}\``);
      else if (roll < 0.055) words.push(this.vocabulary.path(random));
      else if (roll < 0.07) words.push(String(random.int(0, 5000)));
      else words.push(this.vocabulary.word(random));
    }
    const first = words[0]!;
    words[0] = first[0]!.toUpperCase() + first.slice(1);
    return words.join(" ") + random.pick([".", ".", ".", "?", ":"]);
  }

  prose(random: Random, minSentences: number, maxSentences: number): string {
    const count = random.int(minSentences, maxSentences);
    const sentences: string[] = [];
    for (let index = 0; index < count; index++) sentences.push(this.sentence(random));
    return sentences.join(" ");
  }

  codeLine(random: Random, indent: string): string {
    const v = this.vocabulary;
    switch (random.int(0, 9)) {
      case 0:
        return `${indent}const ${v.identifier(random)} = await ${v.identifier(random)}.${v.identifier(random)}(${v.identifier(random)});`;
      case 1:
        return `${indent}if (!${v.identifier(random)}) throw new Error("${this.sentence(random, 3, 7)}");`;
      case 2:
        return `${indent}export function ${v.identifier(random)}(${v.identifier(random)}: ${v.typeName(random)}): ${v.typeName(random)} {`;
      case 3:
        return `${indent}return ${v.identifier(random)}.map((item) => item.${v.identifier(random)});`;
      case 4:
        return `${indent}// ${this.sentence(random, 4, 12)}`;
      case 5:
        return `${indent}import { ${v.typeName(random)} } from "./${v.contentWord(random)}.js";`;
      case 6:
        return `${indent}${v.identifier(random)}.${v.identifier(random)} = ${random.int(0, 100_000)};`;
      case 7:
        return `${indent}for (const ${v.contentWord(random)} of ${v.identifier(random)}) ${v.identifier(random)}.push(${v.contentWord(random)});`;
      case 8:
        return `${indent}}`;
      default:
        return `${indent}let ${v.identifier(random)}: ${v.typeName(random)} | undefined = undefined;`;
    }
  }

  code(random: Random, minLines: number, maxLines: number): string {
    const count = random.int(minLines, maxLines);
    const lines: string[] = [];
    for (let index = 0; index < count; index++) lines.push(this.codeLine(random, "  ".repeat(random.int(0, 2))));
    return lines.join("\n");
  }

  logLine(random: Random, time: number): string {
    const level = random.pick(["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]);
    return `${new Date(time).toISOString()} ${level} [${this.vocabulary.contentWord(random)}] ${this.sentence(random, 4, 12)}`;
  }

  testLine(random: Random): string {
    const ok = random.chance(0.92);
    return `${ok ? "  ✓" : "  ✗"} ${this.sentence(random, 3, 9)} (${random.int(1, 900)} ms)`;
  }

  grepLine(random: Random): string {
    return `${this.vocabulary.path(random)}:${random.int(1, 900)}:${this.codeLine(random, " ")}`;
  }

  /** About `size` characters of the given output kind. */
  output(random: Random, kind: "log" | "test" | "grep" | "file", size: number, time: number): string {
    const lines: string[] = [];
    let length = 0;
    while (length < size) {
      const line =
        kind === "log" ? this.logLine(random, time + lines.length * 37)
        : kind === "test" ? this.testLine(random)
        : kind === "grep" ? this.grepLine(random)
        : this.codeLine(random, "  ".repeat(random.int(0, 3)));
      lines.push(line);
      length += line.length + 1;
    }
    return lines.join("\n");
  }
}
