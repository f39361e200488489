/**
 * Issue 14's proof of recall. `recall.forms`: a session of over a million tokens (bench/recall-corpus.ts) with
 * details of every shape planted in it, compacted in rounds as it grows; each detail is looked up with the query
 * an agent types, through lcm_grep's execute, and counted found when its message is among the first five
 * matches; beside it, a plain substring search (case-insensitive, newest first) over the same messages' text as
 * the model saw it. Each detail under a summary is also asked to lcm_expand_query with no model, whose excerpts
 * must quote its answer. Independent of the history size: it runs in the size process of 10k only.
 */
import type { BenchContext } from "../context.js";
import { Phase, type PhaseResult, round } from "../measure.js";
import { buildRecallCorpus, type PlantedDetail, QUERY_FORMS } from "../recall-corpus.js";
import { type QualitySession, sessionTool, storeQualitySession } from "../quality-session.js";

const SESSION_MESSAGES = 12_500;
const DETAILS_PER_FORM = 30;
/** A forced compaction every this many messages: far more than five rounds. */
const COMPACT_EVERY = 1_500;
const TOP = 5;

interface FormTally {
  details: number;
  plugin: number;
  baseline: number;
  compacted: number;
  excerpts: number;
}

export async function runRecallQualityPhase(context: BenchContext): Promise<PhaseResult[]> {
  const seed = context.manifest.seed;
  const corpus = buildRecallCorpus(seed, SESSION_MESSAGES, DETAILS_PER_FORM);
  const session = await storeQualitySession("recall", corpus.plan, corpus.turns, { compactEvery: COMPACT_EVERY, tokenBudget: 32_000, startTime: Date.UTC(2026, 3, 1) });
  const phase = new Phase("recall.forms");
  try {
    const grep = sessionTool(session.host, "lcm_grep", corpus.plan);
    const expand = sessionTool(session.excerptHost, "lcm_expand_query", corpus.plan);
    const texts = searchableTexts(session);
    const tokens = session.database.get<{ tokens: number }>("SELECT total(token_count) AS tokens FROM messages")!.tokens;
    const tallies = new Map(QUERY_FORMS.map((form) => [form, { details: 0, plugin: 0, baseline: 0, compacted: 0, excerpts: 0 } as FormTally]));
    const misses: string[] = [];
    for (const detail of corpus.details) {
      const tally = tallies.get(detail.form)!;
      const messageId = session.messageIds[detail.messageIndex]!;
      tally.details++;
      const result = await phase.time(() => grep.execute("recall", { ...detail.grep, limit: TOP }));
      const found = matchIds(result.details).includes(messageId);
      if (found) tally.plugin++;
      else if (misses.length < 12) misses.push(`${detail.form}: ${JSON.stringify(detail.grep.pattern)}`);
      if (substringSearch(texts, detail.substring).includes(messageId)) tally.baseline++;
      if (!isCompacted(session, messageId)) continue;
      tally.compacted++;
      const expanded = await expand.execute("recall", { prompt: detail.question, query: queryWords(detail) });
      const answer = expanded.content.map((part) => part.text).join("\n");
      if (answer.includes(detail.answer)) tally.excerpts++;
      else if (misses.length < 24) misses.push(`excerpts ${detail.form}: ${detail.answer}`);
    }
    const values: Record<string, number | string> = {
      sessionMessages: corpus.messages, sessionTokens: Math.round(tokens), details: corpus.details.length, compactions: session.compactions,
    };
    let excerpts = 0;
    let compacted = 0;
    for (const [form, tally] of tallies) {
      values[`plugin:${form}`] = percent(tally.plugin, tally.details);
      values[`baseline:${form}`] = percent(tally.baseline, tally.details);
      values[`excerpts:${form}`] = tally.compacted > 0 ? percent(tally.excerpts, tally.compacted) : "n/a";
      excerpts += tally.excerpts;
      compacted += tally.compacted;
    }
    values.pluginMin = Math.min(...[...tallies.values()].map((tally) => percent(tally.plugin, tally.details)));
    values.excerptsAll = percent(excerpts, compacted);
    values.excerptDetails = compacted;
    if (misses.length > 0) values.misses = misses.join(" | ");
    context.log(`    recall.forms: ${corpus.messages} messages, ${Math.round(tokens)} tokens, ${session.compactions} compactions; lowest form ${values.pluginMin}%, excerpts ${values.excerptsAll}%`);
    return [phase.finish({ values })];
  } finally {
    session.close();
  }
}

/** What an agent would pass as lcm_expand_query's `query`: the grep words, or the question's for a regex. */
function queryWords(detail: PlantedDetail): string {
  return detail.grep.mode === "full_text" ? detail.grep.pattern : detail.question;
}

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : round((100 * part) / whole, 1);
}

/** Message ids among the matches of an lcm_grep result. */
function matchIds(details: unknown): number[] {
  const matches = ((details ?? {}) as { matches?: { type: string; id: number }[] }).matches ?? [];
  return matches.filter((match) => match.type === "message").map((match) => match.id);
}

function isCompacted(session: QualitySession, messageId: number): boolean {
  return session.database.get<{ n: number }>("SELECT count(*) AS n FROM context_items WHERE message_id = ?", messageId)!.n === 0;
}

/** Every message's text as the model saw it (tool-call arguments decoded), newest first, lower-cased. */
function searchableTexts(session: QualitySession): { id: number; text: string }[] {
  const rows = session.database.all<{ id: number; text: string }>(
    `SELECT m.message_id AS id, m.content AS text FROM messages m ORDER BY m.message_id DESC`,
  );
  const parts = session.database.all<{ id: number; start: number; end: number }>(
    "SELECT message_id AS id, text_start AS start, text_end AS end FROM message_parts WHERE kind = 'toolCall'",
  );
  const spans = new Map<number, [number, number][]>();
  for (const part of parts) (spans.get(part.id) ?? spans.set(part.id, []).get(part.id)!).push([part.start, part.end]);
  return rows.map((row) => ({ id: row.id, text: decodeArguments(row.text, spans.get(row.id) ?? []).toLowerCase() }));
}

/** The baseline's view of a message: tool-call arguments as the strings they hold, one value per line. */
function decodeArguments(content: string, spans: [number, number][]): string {
  let text = "";
  let at = 0;
  for (const [start, end] of spans.sort((left, right) => left[0] - right[0])) {
    text += content.slice(at, start) + Object.values(JSON.parse(content.slice(start, end)) as Record<string, unknown>).map(String).join("\n");
    at = end;
  }
  return text + content.slice(at);
}

/** The baseline: the newest messages whose text contains `substring` (case-insensitive), at most five. */
function substringSearch(texts: readonly { id: number; text: string }[], substring: string): number[] {
  const needle = substring.toLowerCase();
  const found: number[] = [];
  for (const { id, text } of texts) {
    if (text.includes(needle)) found.push(id);
    if (found.length >= TOP) break;
  }
  return found;
}
