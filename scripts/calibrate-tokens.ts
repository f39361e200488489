/**
 * Measures the default token estimator against real tokenizers (OpenAI's o200k_base and cl100k_base, via the
 * js-tiktoken dev dependency) on the calibration corpus, and times it. Prints a Markdown table per kind of text, so
 * the figures in docs/configuration.md can be regenerated after any change to the weights.
 *
 *   npm run calibrate:tokens                 the published corpus
 *   npm run calibrate:tokens -- --seed 7     the same kinds with other generated text (held out)
 */
import { Tiktoken } from "js-tiktoken/lite";
import cl100kBase from "js-tiktoken/ranks/cl100k_base";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { DefaultTokenEstimator } from "../src/tokens/default-token-estimator.js";
import { CALIBRATION_SEED, calibrationCorpus } from "../test/fixtures/token-calibration/calibration-corpus.js";

const seedFlag = process.argv.indexOf("--seed");
const seed = seedFlag >= 0 ? Number(process.argv[seedFlag + 1]) : CALIBRATION_SEED;
if (!Number.isInteger(seed)) {
  console.error(`--seed needs an integer, got "${process.argv[seedFlag + 1]}"`);
  process.exit(2);
}

const encodings = { o200k: new Tiktoken(o200kBase), cl100k: new Tiktoken(cl100kBase) };
const estimator = new DefaultTokenEstimator();
const corpus = calibrationCorpus(seed);

/** Special-token strings such as "<|endoftext|>" are counted as the plain text they are. */
function countTokens(encoding: Tiktoken, text: string): number {
  return encoding.encode(text, [], []).length;
}

function percent(ratio: number): string {
  const difference = Math.round((ratio - 1) * 100);
  return `${difference >= 0 ? "+" : ""}${difference}%`;
}

console.log(`Calibration corpus, seed ${seed}: estimate vs the larger of the two real counts\n`);
console.log("| kind of text | chars | o200k | cl100k | estimate | vs larger |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
let worst = { category: "", ratio: Infinity };
let loosest = { category: "", ratio: 0 };
for (const { category, text } of corpus) {
  const o200k = countTokens(encodings.o200k, text);
  const cl100k = countTokens(encodings.cl100k, text);
  const estimate = estimator.estimate(text);
  const ratio = estimate / Math.max(o200k, cl100k);
  if (ratio < worst.ratio) worst = { category, ratio };
  if (ratio > loosest.ratio) loosest = { category, ratio };
  console.log(`| ${category} | ${[...text].length} | ${o200k} | ${cl100k} | ${estimate} | ${percent(ratio)} |`);
}
console.log(`\nClosest: ${worst.category} ${percent(worst.ratio)}; loosest: ${loosest.category} ${percent(loosest.ratio)}.`);

const sample = corpus.map(({ text }) => text).join("\n");
const megabytes = Buffer.byteLength(sample, "utf8") / 1e6;
let rounds = 0;
const started = process.hrtime.bigint();
let elapsedSeconds = 0;
while (elapsedSeconds < 1) {
  estimator.estimate(sample);
  rounds++;
  elapsedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
}
const megabytesPerSecond = (megabytes * rounds) / elapsedSeconds;
console.log(`Speed: ${megabytesPerSecond.toFixed(0)} MB/s of UTF-8 text (${rounds} passes over ${megabytes.toFixed(2)} MB).`);
