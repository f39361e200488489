import { describe, expect, it } from "vitest";
import { renderMessageSources } from "../../src/compaction/source-text.js";
import type { MessageRecord } from "../../src/records.js";
import { MAX_IDENTIFIERS_PER_ENTRY, isSpace, readSourceEntries } from "../../src/summarize/source-entries.js";

function message(seq: number, role: string, content: string): MessageRecord {
  return {
    messageId: seq, conversationId: 1, seq, role, content, tokenCount: 10,
    createdAt: Date.UTC(2026, 10, 1, 8, seq), identityKey: `k${seq}`, flags: 0, meta: "{}", parts: [],
  };
}

const ROLES = ["user", "assistant", "toolResult"];

/** Messages whose identifiers sit at the very start and end of their text, where entries meet. */
const EDGE_MESSAGES = [
  "src/app/main.ts was changed\nthe connection was refused at the first try",
  "[tool call exec]\n{\"command\":\"npm test\"}",
  "9f3c2a1b7e is the commit.\nThe build failed, see /var/log/app/run.log",
  "ERR_RETRY_LIMIT reached\n- timed out waiting for https://ci.example.com/runs/4821",
  "v2.14.3-rc.1 then JIRA-42 and 5000 rows and 12345 more and 777\n./scripts/deploy.sh",
  "called deploy: done\nfile_0123456789abcdef holds it",
  "Plain words only, nothing to keep here.",
  "[tool result exec]",
  "deadbeef1234",
];

/**
 * Counts the characters RegExp exec examines (from where a scan starts to the end of its match, or to the end
 * of the input when nothing matched) while `body` runs. Every pattern method (test, replace, split, matchAll)
 * goes through exec once it is replaced.
 */
function charactersExamined(body: () => void): number {
  const exec = RegExp.prototype.exec;
  let examined = 0;
  RegExp.prototype.exec = function (this: RegExp, input: string) {
    const start = this.global || this.sticky ? this.lastIndex : 0;
    const result = exec.call(this, input);
    examined += (result ? result.index + result[0].length : input.length) - start;
    return result;
  };
  try {
    body();
  } finally {
    RegExp.prototype.exec = exec;
  }
  return examined;
}

describe("readSourceEntries", () => {
  it("gives each entry exactly what reading its own message alone gives", () => {
    const messages = EDGE_MESSAGES.map((content, index) => message(index, ROLES[index % 3]!, content));
    const together = readSourceEntries(renderMessageSources(messages), 24);
    const alone = messages.map((one) => readSourceEntries(renderMessageSources([one]), 24)[0]);

    expect(together.map(({ index: _, ...entry }) => entry)).toEqual(alone.map((entry) => {
      const { index: _, ...rest } = entry!;
      return rest;
    }));
    // The edges were read: identifiers at the start and the end of entries, and the error sentences.
    const identifiers = together.flatMap((entry) => entry.identifiers);
    for (const expected of ["src/app/main.ts", "/var/log/app/run.log", "9f3c2a1b7e", "https://ci.example.com/runs/4821", "./scripts/deploy.sh", "deadbeef1234"]) {
      expect(identifiers).toContain(expected);
    }
    expect(together[0]!.identifiers[0]).toBe("the connection was refused at the first try");
    expect(together.filter((entry) => entry.hasError)).toHaveLength(3);
  });

  it("reads every character of the source a bounded number of times, however many entries there are", () => {
    // 100 and 1,000 entries of the same kind: per-entry scans of the whole text would grow with the entry count.
    const ratio = (count: number) => {
      const source = renderMessageSources(Array.from({ length: count }, (_, seq) => message(seq, ROLES[seq % 3]!,
        `Step ${seq}: read src/app/module${seq}.ts and check the deploy log for errors, then report build ${1_000 + seq}.`)));
      return charactersExamined(() => readSourceEntries(source, 24)) / source.length;
    };
    const small = ratio(100);
    const large = ratio(1_000);
    // Measured 6.6 for both; a summarizer that scanned each entry once per pattern read 29 characters per character.
    expect(large).toBeLessThan(10);
    expect(Math.abs(large - small)).toBeLessThan(1);
  });

  it(`keeps the first ${MAX_IDENTIFIERS_PER_ENTRY} identifiers of an entry, in order`, () => {
    const listing = Array.from({ length: 3_000 }, (_, index) => `src/module${index}/file${index}.ts`).join("\n");
    const [entry] = readSourceEntries(renderMessageSources([message(1, "toolResult", listing)], 200_000), 24);

    expect(entry!.identifiers).toHaveLength(MAX_IDENTIFIERS_PER_ENTRY);
    expect(entry!.identifiers.slice(0, 2)).toEqual(["src/module0/file0.ts", "src/module1/file1.ts"]);
  });

  it("takes the gist from the first sentence across lines, without bullets, cut to the word limit", () => {
    const source = renderMessageSources([
      message(1, "user", "- Deploy the app\nto staging. Then tell me."),
      message(2, "assistant", `${Array.from({ length: 30 }, (_, index) => `word${index}`).join(" ")}. Done.`),
    ]);
    const [first, second] = readSourceEntries(source, 5);

    expect(first!.gist).toBe("Deploy the app to staging.");
    expect(second!.gist).toBe("word0 word1 word2 word3 word4 ...");
  });
});

describe("isSpace", () => {
  it("matches exactly the code units that \\s matches", () => {
    const mismatches: number[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (isSpace(code) !== /\s/.test(String.fromCharCode(code))) mismatches.push(code);
    }
    expect(mismatches).toEqual([]);
  });
});
