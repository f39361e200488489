/**
 * Unit tests of the relevance ranking (src/search/text-ranking.ts) with competing candidates: each test lists
 * documents whose best is neither the newest nor the oldest, so an ordering by age in either direction fails
 * (docs/mutations.md, M1, M1b and M1c). Documents are scored from real text with the real matcher; the corpus
 * statistics are given, as the index would give them.
 */
import { describe, expect, it } from "vitest";
import {
  type CorpusStatistics,
  compareScores,
  type DocumentScore,
  inverseDocumentFrequency,
  scoreDocument,
  someTermsScore,
} from "../../src/search/text-ranking.js";
import { QueryMatcher } from "../../src/text/text-matcher.js";
import { parseTextQuery, queryTerms, termKey } from "../../src/text/text-query.js";

/** A score with every field given or neutral. */
function score(fields: Partial<DocumentScore>): DocumentScore {
  return { allTerms: 0, coverage: 1, phrase: 0, spread: 0, bm25: 1, information: 1, matchedTerms: [0], ...fields };
}

interface Candidate {
  name: string;
  score: DocumentScore;
  /** When it was written (larger is newer). */
  time: number;
}

function ranked(candidates: Candidate[]): string[] {
  return [...candidates].sort((left, right) => compareScores(left.score, left.time, right.score, right.time)).map((candidate) => candidate.name);
}

/**
 * Scores `text` for `query` as the search does: `documents` in the corpus averaging `averageWords` words, and how
 * many documents hold each word (words not listed: one; function words: nine in ten).
 */
function scoreText(text: string, query: string, corpus: { documents: number; averageWords: number; holding: Record<string, number> }): DocumentScore {
  const parsed = parseTextQuery(query)!;
  const terms = queryTerms(parsed);
  const indexOf = new Map(terms.map((term, index) => [termKey(term), index]));
  const groups = parsed.groups.map((group) => group.filter((term) => !term.isStopword).map((term) => indexOf.get(termKey(term))!));
  const statistics: CorpusStatistics = {
    documents: corpus.documents,
    averageWords: corpus.averageWords,
    frequencies: terms.map((term) => corpus.holding[term.words.join(" ")] ?? (term.isStopword ? corpus.documents * 0.9 : 1)),
  };
  const wordCount = text.split(/\s+/).filter((word) => word !== "").length;
  return scoreDocument(new QueryMatcher(terms).match(text), terms, groups, wordCount, statistics);
}

const CORPUS = { documents: 1_000, averageWords: 12, holding: { ledger: 3, nightly: 300, export: 300 } };

describe("compareScores", () => {
  it("ranks a document holding every word above one holding some, however the other scores and whenever it was written", () => {
    expect(ranked([
      { name: "some, strong, newest", score: score({ allTerms: 0, coverage: 2, bm25: 40 }), time: 3 },
      { name: "all, weak, oldest", score: score({ allTerms: 1, coverage: 2, spread: 9, bm25: 0.2 }), time: 1 },
    ])).toEqual(["all, weak, oldest", "some, strong, newest"]);
  });

  it("ranks documents holding every word by phrase, then closeness, then BM25, and only then by age", () => {
    const all = (fields: Partial<DocumentScore>) => score({ allTerms: 1, coverage: 3, ...fields });
    expect(ranked([
      { name: "far apart", score: all({ spread: 8, bm25: 9 }), time: 5 },
      { name: "phrase", score: all({ phrase: 1, spread: 5, bm25: 1 }), time: 2 },
      { name: "close, low BM25", score: all({ spread: 5, bm25: 2 }), time: 4 },
      { name: "close, high BM25", score: all({ spread: 5, bm25: 3 }), time: 1 },
      { name: "close, high BM25, newer", score: all({ spread: 5, bm25: 3 }), time: 3 },
    ])).toEqual(["phrase", "close, high BM25, newer", "close, high BM25", "close, low BM25", "far apart"]);
  });

  it("ranks documents holding some words by their score, not by age in either direction", () => {
    // The best is older than one weaker match and newer than another.
    expect(ranked([
      { name: "weak, oldest", score: score({ bm25: 1 }), time: 1 },
      { name: "best, middle", score: score({ bm25: 3 }), time: 2 },
      { name: "fair, newest", score: score({ bm25: 2 }), time: 3 },
    ])).toEqual(["best, middle", "fair, newest", "weak, oldest"]);
  });

  it("breaks a tie between documents holding some words by recency", () => {
    expect(ranked([
      { name: "older", score: score({ bm25: 2 }), time: 1 },
      { name: "newer", score: score({ bm25: 2 }), time: 2 },
    ])).toEqual(["newer", "older"]);
  });

  it("puts an older document holding a rare word above newer ones holding two common words", () => {
    const query = "What broke the ledger in the nightly export?";
    const rare = scoreText("The ledger totals stopped at Saturday.", query, CORPUS);
    const common = scoreText("Check the nightly export log.", query, CORPUS);
    expect([rare.coverage, common.coverage]).toEqual([1, 2]);
    expect(ranked([
      { name: "common, oldest", score: common, time: 1 },
      { name: "rare", score: rare, time: 2 },
      { name: "common, newest", score: common, time: 3 },
    ])).toEqual(["rare", "common, newest", "common, oldest"]);
  });
});

describe("someTermsScore", () => {
  it("is the BM25 of a document holding one term", () => {
    expect(someTermsScore(score({ coverage: 1, bm25: 2.5 }))).toBeCloseTo(2.5, 10);
  });

  it("raises BM25 by 15% per extra term, 25% for a phrase and up to 15% for closeness", () => {
    // 2 × (1 + 0.15 × 2 extra terms + 0.25 phrase + 0.15 × (12 - 6) / 12 closeness) = 2 × 1.625
    expect(someTermsScore(score({ coverage: 3, phrase: 1, spread: 6, bm25: 2 }))).toBeCloseTo(3.25, 10);
    // Spread 12 or more: no closeness bonus.
    expect(someTermsScore(score({ coverage: 2, spread: 14, bm25: 2 }))).toBeCloseTo(2.3, 10);
  });

  it("grows with BM25 and with the terms found, so a rare word outweighs two common ones", () => {
    const query = "ledger nightly export";
    const rare = scoreText("The ledger totals stopped at Saturday.", query, CORPUS);
    const common = scoreText("Check the nightly export log.", query, CORPUS);
    expect(someTermsScore(rare)).toBeGreaterThan(someTermsScore(common));
    expect(someTermsScore({ ...common, coverage: 1 })).toBeLessThan(someTermsScore(common));
    expect(someTermsScore({ ...common, bm25: common.bm25 * 2 })).toBeGreaterThan(someTermsScore(common));
  });
});

describe("the share of the query's information a document holds", () => {
  // The bench's recall miss (issue 22): near misses hold three words of the question as a phrase, exactly as typed,
  // in short messages; the answer holds the name the question is about, another form of its day, in a longer line.
  const question = "Who takes over the zqbasovu on-call rotation on Sundays?";
  const roster = { documents: 126_153, averageWords: 40, holding: { zqbasovu: 4, "on call": 234, rotation: 210, sundays: 13, takes: 0 } };
  // The answer as the bench stored it: a line of a paste stored aside, scored with the words around it (50).
  const answer = "Note for the roster: the on-call rotation for the zqbasovu team moves to Amara every Sunday. Info the and " +
    "encode await a result? The just plabeathun paichustra, as tedrat the at cloustrealound. A as the by be. Here is what I " +
    "have: the rest of the pasted notes follow below.";
  const otherTeam = "Note for the roster: the zqfenwevu team keeps its on-call rotation on Sundays.";
  const otherDay = "Note for the roster: the zqbasovu team keeps its on-call rotation on Saturdays.";

  it("ranks the answer holding the question's rarest word above near misses holding the rest as typed", () => {
    const scores = [answer, otherTeam, otherDay].map((text) => scoreText(text, question, roster));
    expect(scores.map((each) => each.allTerms)).toEqual([0, 0, 0]);
    expect(scores[1]!.phrase).toBe(1); // "on-call rotation on Sundays": a phrase of the question, and BM25 as high
    expect(ranked(scores.map((score, index) => ({ name: ["answer", "other team", "other day"][index]!, score, time: 3 - index }))))
      .toEqual(["answer", "other team", "other day"]);
  });

  it("is the rarity of the words held over that of all the question's words (a word no document holds counts in neither)", () => {
    const idf = (holding: number) => inverseDocumentFrequency(roster.documents, holding);
    const all = idf(4) + idf(234) + idf(210) + idf(13);
    expect(scoreText(otherTeam, question, roster).information).toBeCloseTo((idf(234) + idf(210) + idf(13)) / all, 10);
    expect(scoreText(answer, question, roster).information).toBeCloseTo((idf(4) + idf(234) + idf(210) + 0.9 * idf(13)) / all, 10);
    expect(scoreText("the zqbasovu on-call rotation on Sundays", question, roster)).toMatchObject({ information: 1 });
  });

  it("scales the score of a document holding some words", () => {
    expect(someTermsScore(score({ bm25: 2, information: 0.5 }))).toBeCloseTo(1, 10);
  });
});

describe("scoreDocument", () => {
  it("weighs a term by how few documents hold it", () => {
    const text = "The ledger totals stopped at Saturday.";
    const rare = scoreText(text, "ledger", { ...CORPUS, holding: { ledger: 3 } });
    const common = scoreText(text, "ledger", { ...CORPUS, holding: { ledger: 400 } });
    expect(rare.bm25).toBeGreaterThan(common.bm25 * 5);
  });

  it("scores the same hits lower in a longer document", () => {
    const short = scoreText("The ledger totals stopped.", "ledger", CORPUS);
    const long = scoreText(`The ledger totals stopped. ${"Nothing else happened that day. ".repeat(10)}`, "ledger", CORPUS);
    expect(long.bm25).toBeLessThan(short.bm25);
    expect(long.bm25).toBeGreaterThan(0);
  });

  it("counts the word as typed above another form of it", () => {
    const exact = scoreText("we renew the certificate", "renew certificate", CORPUS);
    const other = scoreText("we renewed the certificate", "renew certificate", CORPUS);
    expect([exact.allTerms, other.allTerms]).toEqual([1, 1]);
    expect(exact.bm25).toBeGreaterThan(other.bm25);
  });

  it("finds a phrase in query order with at most one short word between, and measures how close the terms are", () => {
    const query = "rotate staging key";
    expect(scoreText("rotate the staging key tonight", query, CORPUS)).toMatchObject({ allTerms: 1, phrase: 1 });
    expect(scoreText("the key of staging: rotate it", query, CORPUS)).toMatchObject({ allTerms: 1, phrase: 0 });
    expect(scoreText("rotate every single staging key", query, CORPUS)).toMatchObject({ phrase: 0 });
    const near = scoreText("staging key, rotate", query, CORPUS);
    const far = scoreText(`staging key ${"and so on ".repeat(20)}rotate`, query, CORPUS);
    expect(near.spread).toBeLessThan(far.spread);
    expect(scoreText("rotate", query, CORPUS)).toMatchObject({ allTerms: 0, coverage: 1, spread: 0, matchedTerms: [0] });
  });

  it("holds every term when it holds every term of one OR alternative", () => {
    expect(scoreText("the beta release", "alpha OR beta", CORPUS)).toMatchObject({ allTerms: 1, matchedTerms: [1] });
    expect(scoreText("the gamma release", "alpha OR beta", CORPUS).matchedTerms).toEqual([]);
  });
});

describe("inverseDocumentFrequency", () => {
  it("is larger for rarer terms and floored for a term in most documents", () => {
    expect(inverseDocumentFrequency(1_000, 3)).toBeGreaterThan(inverseDocumentFrequency(1_000, 300));
    expect(inverseDocumentFrequency(1_000, 900)).toBe(0.01);
    expect(inverseDocumentFrequency(1_000, 3)).toBeCloseTo(Math.log(997.5 / 3.5), 10);
  });
});
