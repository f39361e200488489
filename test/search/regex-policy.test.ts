import type { IndexRequirement } from "../../src/store/retrieval-store.js";
import { describe, expect, it } from "vitest";
import { isLcmError } from "../../src/errors.js";
import { compileSearchRegex } from "../../src/search/regex-policy.js";
import { planPrefilter, suffixMatch } from "../../src/search/regex-prefilter.js";

function rejection(pattern: string): string {
  try {
    compileSearchRegex(pattern);
  } catch (error) {
    if (isLcmError(error, "invalid_input") && error.details?.parameter === "pattern") return error.message;
    throw error;
  }
  throw new Error(`${pattern} was accepted`);
}

describe("compileSearchRegex", () => {
  it.each(["(a+)+", "(a*)*", "(\\w+\\s?)*", "(?:x+y?)+z", "((ab)+c)+", "(a{1,500})+", "(.*a){3}"])(
    "refuses the exponential shape %s and says how to rewrite it",
    (pattern) => expect(rejection(pattern)).toMatch(/repeats a group that itself repeats/),
  );

  it.each(["(a)\\1", "(?<x>a)\\k<x>"])("refuses the backreference in %s", (pattern) => {
    expect(rejection(pattern)).toMatch(/backreference/);
  });

  it("refuses invalid syntax, empty and overlong patterns with the reason", () => {
    expect(rejection("(unclosed")).toMatch(/not a valid JavaScript regular expression \(.*\)/);
    expect(rejection("")).toMatch(/empty/);
    expect(rejection("a".repeat(501))).toMatch(/limit is 500/);
  });

  it.each(["(ab)+", "(\\d{3}-)+", "a+b+", "[a-z]+\\.", "deploy(ed|ment)?", "x{2,}", "(?=a)\\w+", "^error: .*$"])(
    "accepts %s",
    (pattern) => expect(compileSearchRegex(pattern).flags).toBe("i"),
  );
});

describe("planPrefilter", () => {
  const plan = (pattern: string) => planPrefilter(compileSearchRegex(pattern));
  /** The index requirement, one line per alternative: its words, a prefix marked with *. */
  const words = (pattern: string) => plan(pattern).requirement?.alternatives.map(show) ?? null;
  const show = (alternative: IndexRequirement["alternatives"][number]) => [
    ...alternative.words.map((word) => `${word.text}${word.prefix ? "*" : ""}`),
    ...alternative.anyOf.map((group) => `(${group.join("|")})`),
  ].join(" ");

  it("uses whole words that start at a known word boundary as index words", () => {
    expect(words("^error: timeout")).toEqual(["error timeout*"]);
    expect(words("config\\.threshold\\.value")).toEqual(["threshold value*"]);
    expect(words("\\s+deploy")).toEqual(["deploy*"]);
  });

  it("never uses a word whose start is uncertain (it may be the tail of a longer word)", () => {
    expect(words("zebra")).toBeNull();
    expect(words("\\bzebra")).toBeNull(); // \b is ASCII-only: "ézebra" matches but is one word
    // "_" separates words, so "zebra" starts one; "x" may be the tail of a longer word and is dropped.
    expect(words("x_zebra")).toEqual(["zebra*"]);
  });

  it("falls back to required ASCII substrings for SQL LIKE, never across a quote or backslash", () => {
    expect(plan("zebra-\\d+")).toMatchObject({ requirement: null, containsAny: ["zebra-"] });
    expect(plan("café au lait").containsAny).toEqual([" au lait"]);
    expect(plan("ab+c").containsAny).toBeNull();
    // Stored tool-call arguments escape " and \: the run is cut there.
    expect(plan('git commit -m "\\$\\(cat').containsAny).toEqual(["git commit -m "]);
  });

  it("handles alternatives: every branch must have a word, else no index plan", () => {
    expect(plan("^foo bar|^baz qux")).toMatchObject({ containsAny: ["foo bar", "baz qux"] });
    expect(words("^foo bar|^baz qux")).toEqual(["foo bar*", "baz qux*"]);
    expect(words("^foo bar|zz")).toBeNull();
  });

  it("keeps a word that certainly ends a word, but may start inside one, for the term dictionary", () => {
    expect(plan("INC-\\d{6}-Z").branches).toEqual([{ terms: [], suffixes: ["inc"] }]);
    expect(plan("x_zebra|Foo\\.bar").branches).toEqual([
      { terms: [{ text: "zebra", prefix: true }], suffixes: [] },
      { terms: [{ text: "bar", prefix: true }], suffixes: ["foo"] },
    ]);
    // Numbers are not in the dictionary, short words narrow nothing, and a word cut at both ends is no suffix.
    expect(plan("12345-|ab-|zebra").branches).toEqual([{ terms: [], suffixes: [] }, { terms: [], suffixes: [] }, { terms: [], suffixes: [] }]);
  });

  it("builds the messages' requirement from the words that end with each required word", () => {
    const branches = plan("INC-\\d+|^deploy").branches;
    const terms = (entries: [string, string[] | null][]) => new Map(entries);
    const shown = (requirement: ReturnType<typeof suffixMatch>) =>
      requirement === null || requirement === "none" ? requirement : requirement.alternatives.map(show);
    expect(shown(suffixMatch(branches, terms([["inc", ["inc", "xinc"]]])))).toEqual(["(inc|xinc)", "deploy*"]);
    // No word ends with "inc": that alternative matches no message; the other still needs its rows.
    expect(shown(suffixMatch(branches, terms([["inc", []]])))).toEqual(["deploy*"]);
    expect(suffixMatch(plan("INC-\\d+").branches, terms([["inc", []]]))).toBe("none");
    // Too many words end with it: no index plan for that alternative, so none for the pattern.
    expect(suffixMatch(branches, terms([["inc", null]]))).toBeNull();
  });

  it("looks inside required groups but not optional or alternative ones", () => {
    // A word that ends a group is used as a prefix: what follows the group is not part of the segment.
    expect(words("^(?:error): (timeout)")).toEqual(["error* timeout*"]);
    expect(plan("(deploy)?key").containsAny).toEqual(["key"]);
    expect(plan("(deploy|release) key").containsAny).toEqual([" key"]);
  });
});
