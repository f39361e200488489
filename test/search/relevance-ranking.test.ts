/**
 * Relevance ranking through lcm_grep's execute, with competing candidates: the best match is OLDER than most of
 * the weaker ones and LONGER than all of them, and some weaker matches are older still, so neither newest-first
 * nor oldest-first ordering can pass, and BM25's length penalty must be outweighed by what the best match holds
 * (a rare word against common ones, a phrase against scattered words). Messages are ranked among messages and
 * summaries among summaries. docs/mutations.md: M1, M1b, M1c.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { GrepMatch } from "../../src/search/grep.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, exchanges, MAIN, type RecallEnv } from "../helpers/recall.js";
import { insertLeafSummary } from "../helpers/summaries.js";

type GrepDetails = { matches: GrepMatch[]; matched: string; sort: string };

/**
 * The only message with "ledger" (twice), 33 words: five times the length of the weaker matches. (At 51 words it
 * ranks below the six-word notes holding "nightly export": BM25's length penalty wins; see docs/mutations.md.)
 */
const LEDGER_ANSWER =
  "Found it: the ledger job could not read the bank files because the bucket credentials expired on Sunday, so the " +
  "ledger totals stopped at Saturday. I rotated the key and reran the job.";
/** Holds the four words of the key question as a phrase ("rotate the reporting bucket key"), 45 words. */
const ROTATION_PLAN =
  "Plan for tonight, so nobody is surprised: at 22:00 I will rotate the reporting bucket key, then update the two " +
  "services that read from it, watch the error rate for ten minutes, and only then revoke the old key. If anything " +
  "fails I roll back by restoring the previous secret version.";

/** Short, common: "nightly export" in a third of the messages. */
function nightlyNote(index: number) {
  return index % 2 === 0 ? userMessage(`Check the nightly export log ${index}.`) : assistantMessage(`The nightly export ran at 0${index % 10}:00 without errors.`);
}

/** Short, all four words of the key question, scattered. */
function scatteredKeyNote(index: number) {
  return assistantMessage(`Key question ${index}: which reporting job reads that bucket, and should we rotate anything?`);
}

describe("full-text relevance with competing candidates", () => {
  let env: RecallEnv;
  const seqs = { ledgerAnswer: 0, rotationPlan: 0 };
  const grep = async (params: Record<string, unknown>) =>
    detailsOf<GrepDetails>(await env.call("lcm_grep", { mode: "full_text", scope: "messages", ...params }));
  const seqOf = (match: GrepMatch | undefined) => (match?.type === "message" ? match.seq : null);

  beforeAll(async () => {
    env = createRecallEnv();
    // seq 1-20 filler, 21-26 nightly notes and 27-29 scattered notes (older than the best), 30 the ledger answer,
    // 31 the rotation plan, 32-51 nightly notes and 52-57 scattered notes (newer), 58-77 filler.
    await env.commit(MAIN, [
      ...exchanges(10, "filler"),
      ...Array.from({ length: 6 }, (_, index) => nightlyNote(index)),
      ...Array.from({ length: 3 }, (_, index) => scatteredKeyNote(index)),
      assistantMessage(LEDGER_ANSWER),
      assistantMessage(ROTATION_PLAN),
      ...Array.from({ length: 20 }, (_, index) => nightlyNote(index + 6)),
      ...Array.from({ length: 6 }, (_, index) => scatteredKeyNote(index + 3)),
      ...exchanges(10, "filler", 11),
    ]);
    seqs.ledgerAnswer = 30;
    seqs.rotationPlan = 31;
    const stored = env.db.get<{ content: string }>("SELECT content FROM messages WHERE seq = 30")!;
    expect(stored.content).toBe(LEDGER_ANSWER);
  });

  it("answers a question with the message holding its rarest word, above shorter messages holding two common words", async () => {
    for (const sort of ["relevance", "recency"]) {
      const found = await grep({ pattern: "What broke the ledger in the nightly export?", sort });
      // No message holds every word: both sorts rank by relevance, and say so.
      expect(found.matched, sort).toBe("some words");
      expect(seqOf(found.matches[0]), sort).toBe(seqs.ledgerAnswer);
      // Weaker matches, older and newer, are there and come after it.
      const weaker = found.matches.slice(1).map(seqOf);
      expect(weaker.some((seq) => seq !== null && seq < seqs.ledgerAnswer), sort).toBe(true);
      expect(weaker.some((seq) => seq !== null && seq > seqs.ledgerAnswer), sort).toBe(true);
    }
  });

  it("puts the message holding the words as a phrase first among those holding them all, though older and longer", async () => {
    const found = await grep({ pattern: "rotate reporting bucket key", sort: "relevance" });
    expect(found.matched).toBe("all words");
    expect(seqOf(found.matches[0])).toBe(seqs.rotationPlan);
    // The nine scattered notes hold every word too: three older, six newer.
    expect(found.matches.slice(1).map(seqOf).sort((left, right) => left! - right!)).toEqual([27, 28, 29, 52, 53, 54, 55, 56, 57]);
  });

  it("still lists messages holding every word newest first when asked for recency", async () => {
    const found = await grep({ pattern: "rotate reporting bucket key", sort: "recency" });
    expect(found.matches.map(seqOf)).toEqual([57, 56, 55, 54, 53, 52, seqs.rotationPlan, 29, 28, 27]);
  });
});

describe("full-text relevance among summaries", () => {
  it("ranks an older, longer summary holding the question's rare word above newer and older ones holding common words", async () => {
    const env = createRecallEnv();
    await env.commit(MAIN, exchanges(40, "filler"));
    const conversation = env.conversationId(MAIN);
    const weak = (from: number) => insertLeafSummary(env.db, conversation, from, from + 9, `The nightly export ran for messages ${from} to ${from + 9}; nothing else.`);
    const oldest = weak(1);
    const best = insertLeafSummary(env.db, conversation, 11, 20, LEDGER_ANSWER);
    const newer = [weak(21), weak(31), weak(41), weak(51), weak(61), weak(71)];
    const found = detailsOf<GrepDetails>(await env.call("lcm_grep", {
      pattern: "What broke the ledger in the nightly export?", mode: "full_text", scope: "summaries", sort: "relevance",
    }));
    expect(found.matches.map((match) => match.id)).toEqual([best, ...newer.reverse(), oldest]);
  });
});
