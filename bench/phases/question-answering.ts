/**
 * Issue 14's question answering. `recall.questions`: a generated conversation between two people over many
 * dated sessions (bench/qa-corpus.ts), compacted after every session; each question is asked in natural language
 * and scored by evidence recall@5: lcm_grep with the question as typed (scope messages: an evidence message among
 * the first five matches), lcm_expand_query with no model (an evidence message among the first five it quotes),
 * and a BM25 baseline the bench computes over the same messages (k1 1.2, b 0.75, lower-cased words, no stemming,
 * no stopword list). Independent of the history size: it runs in the size process of 10k only.
 */
import type { BenchContext } from "../context.js";
import { Phase, type PhaseResult, round } from "../measure.js";
import { buildQaCorpus } from "../qa-corpus.js";
import { quotedMessageIds, sessionTool, storeQualitySession } from "../quality-session.js";

const SESSIONS = 40;
const EXCHANGES_PER_SESSION = 40;
const FACTS_PER_SESSION = 3;
const TOP = 5;
const SESSION = { agentId: "main", sessionId: "bench-qa", sessionKey: "agent:main:qa" };

export async function runQuestionAnsweringPhase(context: BenchContext): Promise<PhaseResult[]> {
  const corpus = buildQaCorpus(context.manifest.seed, SESSIONS, EXCHANGES_PER_SESSION, FACTS_PER_SESSION);
  const session = await storeQualitySession("qa", SESSION, corpus.turns, {
    compactEvery: EXCHANGES_PER_SESSION * 2, tokenBudget: 8_000, startTime: Date.UTC(2026, 0, 5), database: await context.scratchDatabase("qa"),
  });
  const phase = new Phase("recall.questions");
  try {
    const grep = sessionTool(session.host, "lcm_grep", SESSION);
    const expand = sessionTool(session.excerptHost, "lcm_expand_query", SESSION);
    const texts = (await session.database.all<{ id: number; content: string }>("SELECT message_id AS id, content FROM messages ORDER BY message_id"))
      .map((row) => ({ id: Number(row.id), content: row.content }));
    const bm25 = new Bm25(texts);
    let grepFound = 0;
    let baselineFound = 0;
    let expandFound = 0;
    let baselineCompactedFound = 0;
    let compacted = 0;
    for (const question of corpus.questions) {
      const evidence = question.evidence.map((index) => session.messageIds[index]!);
      const result = await phase.time(() => grep.execute("qa", { pattern: question.question, mode: "full_text", scope: "messages", limit: TOP }));
      const matches = ((result.details as { matches?: { id: number }[] }).matches ?? []).map((match) => match.id);
      if (matches.some((id) => evidence.includes(id))) grepFound++;
      const baseline = bm25.top(question.question, TOP).some((id) => evidence.includes(id));
      if (baseline) baselineFound++;
      let underSummary = true;
      for (const id of evidence) {
        if (Number((await session.database.get<{ n: number }>("SELECT count(*) AS n FROM context_items WHERE message_id = ?", id))!.n) !== 0) underSummary = false;
      }
      if (!underSummary) continue;
      compacted++;
      if (baseline) baselineCompactedFound++;
      const expanded = await expand.execute("qa", { prompt: question.question, query: question.question });
      const quoted = quotedMessageIds(expanded.content.map((part) => part.text).join("\n")).slice(0, TOP);
      if (quoted.some((id) => evidence.includes(id))) expandFound++;
    }
    const total = corpus.questions.length;
    const values = {
      messages: corpus.messages, questions: total, compactions: session.compactions, compactedQuestions: compacted,
      grepRecallAt5: percent(grepFound, total),
      bm25RecallAt5: percent(baselineFound, total),
      expandRecallAt5: percent(expandFound, compacted),
      bm25RecallAt5Compacted: percent(baselineCompactedFound, compacted),
    };
    context.log(`    recall.questions: grep ${values.grepRecallAt5}% · expand ${values.expandRecallAt5}% · BM25 ${values.bm25RecallAt5}% (${values.bm25RecallAt5Compacted}% on the ${compacted} compacted)`);
    return [phase.finish({ values })];
  } finally {
    await session.close();
  }
}

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : round((100 * part) / whole, 1);
}

/** Okapi BM25 over lower-cased words (letters and digits), no stemming, no stopword list. */
class Bm25 {
  private readonly documents: { id: number; terms: Map<string, number>; length: number }[];
  private readonly frequencies = new Map<string, number>();
  private readonly averageLength: number;

  constructor(texts: readonly { id: number; content: string }[]) {
    this.documents = texts.map(({ id, content }) => {
      const terms = new Map<string, number>();
      const words = tokenize(content);
      for (const word of words) terms.set(word, (terms.get(word) ?? 0) + 1);
      for (const word of terms.keys()) this.frequencies.set(word, (this.frequencies.get(word) ?? 0) + 1);
      return { id, terms, length: words.length };
    });
    this.averageLength = this.documents.reduce((sum, document) => sum + document.length, 0) / Math.max(1, this.documents.length);
  }

  top(query: string, count: number): number[] {
    const terms = [...new Set(tokenize(query))];
    const total = this.documents.length;
    const scored = this.documents.map((document) => {
      let score = 0;
      for (const term of terms) {
        const frequency = document.terms.get(term);
        if (!frequency) continue;
        const df = this.frequencies.get(term) ?? 0;
        const idf = Math.log(1 + (total - df + 0.5) / (df + 0.5));
        score += (idf * frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * document.length) / this.averageLength));
      }
      return { id: document.id, score };
    });
    return scored.filter((entry) => entry.score > 0).sort((left, right) => right.score - left.score || right.id - left.id).slice(0, count).map((entry) => entry.id);
  }
}

function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}
