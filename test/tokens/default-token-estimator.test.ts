import { Tiktoken } from "js-tiktoken/lite";
import cl100kBase from "js-tiktoken/ranks/cl100k_base";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { DEFAULT_IMAGE_TOKENS, DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { calibrationCorpus } from "../fixtures/token-calibration/calibration-corpus.js";

const estimator = new DefaultTokenEstimator();
const encodings = [
  ["o200k_base", new Tiktoken(o200kBase)],
  ["cl100k_base", new Tiktoken(cl100kBase)],
] as const;

/** The estimate may fall short of a real count by this much at most (it should not fall short at all). */
const MAX_UNDER_COUNT = 0.03;
/** Prose and code, the bulk of a conversation, must stay tight: over-counting wastes context the model could use. */
const MAX_OVER_COUNT_FOR_PROSE_AND_CODE = 0.3;
const HELD_OUT_SEED = 7;
const PROSE_AND_CODE = new Set(["english-prose", "markdown-chat", "typescript-code", "python-code", "json-pretty"]);

/** Special-token strings such as "<|endoftext|>" are counted as the plain text they are. */
function realCount(encoding: Tiktoken, text: string): number {
  return encoding.encode(text, [], []).length;
}

function expectNoUnderCount(text: string): void {
  const estimate = estimator.estimate(text);
  for (const [name, encoding] of encodings) {
    expect(estimate, name).toBeGreaterThanOrEqual(realCount(encoding, text) * (1 - MAX_UNDER_COUNT));
  }
}

describe("DefaultTokenEstimator against real tokenizers", () => {
  const corpus = calibrationCorpus();
  // The generated kinds again with another seed: text the weights were not chosen on.
  const heldOut = calibrationCorpus(HELD_OUT_SEED).filter(({ origin }) => origin === "generated");

  it.each(corpus.map(({ category, text }) => [category, text] as const))(
    "does not under-count %s by more than 3% in either encoding",
    (_category, text) => expectNoUnderCount(text),
  );

  it.each(heldOut.map(({ category, text }) => [category, text] as const))(
    "does not under-count held-out %s by more than 3% in either encoding",
    (_category, text) => expectNoUnderCount(text),
  );

  it.each(corpus.filter(({ category }) => PROSE_AND_CODE.has(category)).map(({ category, text }) => [category, text] as const))(
    "stays within 30% above the larger real count for %s",
    (_category, text) => {
      const larger = Math.max(...encodings.map(([, encoding]) => realCount(encoding, text)));
      expect(estimator.estimate(text)).toBeLessThanOrEqual(larger * (1 + MAX_OVER_COUNT_FOR_PROSE_AND_CODE));
    },
  );
});

describe("DefaultTokenEstimator", () => {
  it("counts the empty string as zero tokens", () => {
    expect(estimator.estimate("")).toBe(0);
  });

  it("counts any non-empty text as at least one token", () => {
    for (const text of ["a", " ", "\n", "7", ".", "漢", "😀", "\u0000"]) expect(estimator.estimate(text)).toBeGreaterThanOrEqual(1);
  });

  it("gives the same count for the same text, across instances", () => {
    const text = calibrationCorpus().map((sample) => sample.text).join("\n");
    expect(new DefaultTokenEstimator().estimate(text)).toBe(estimator.estimate(text));
    expect(estimator.estimate(text)).toBe(estimator.estimate(text));
  });

  it("never counts less for a text than for its beginning", () => {
    const text = calibrationCorpus()
      .map((sample) => sample.text.slice(0, 400))
      .join("\n");
    let previous = 0;
    for (let end = 0; end <= text.length; end += 37) {
      const count = estimator.estimate(text.slice(0, end));
      expect(count).toBeGreaterThanOrEqual(previous);
      previous = count;
    }
  });

  it("never throws on lone surrogates, control characters or unassigned code points", () => {
    const hostile = ["\ud800", "\udc00x", "a\ud83d", "\ud83d\ude00\ud83d", "\u0000\u0007\u001b[31m", "\uffff\ufffe", "\u{10ffff}", "\u{e0067}"];
    for (const text of hostile) expect(Number.isInteger(estimator.estimate(text))).toBe(true);
  });

  it("charges a rare symbol at least one token per character", () => {
    // Private-use and astral characters are 3-4 UTF-8 bytes that no vocabulary merges.
    expect(estimator.estimate("\ue000\ue001\ue002")).toBeGreaterThanOrEqual(3);
    expect(estimator.estimate("\u{1d400}\u{1d401}")).toBeGreaterThanOrEqual(2);
  });

  it("charges a fixed cost per image, configurable", () => {
    expect(estimator.imageTokens).toBe(DEFAULT_IMAGE_TOKENS);
    expect(new DefaultTokenEstimator({ imageTokens: 800 }).imageTokens).toBe(800);
  });
});
