/**
 * The proof of recall (issues 14, 22, 31). `recall.forms`: two sessions (bench/recall-corpus.ts), stored in the
 * size's own database beside its history, so every search runs against that many messages:
 * - "ordinary": details planted in ordinary turns, compacted in rounds;
 * - "stored aside": most user messages carry a ~1.5k-token paste and the details sit inside pastes and long tool
 *   outputs, stored aside as in an 8k window (a message over 600 tokens).
 * Both are summarized by the extractive summarizer (it keeps ids word for word, so every level above a detail
 * repeats it) in a DAG about six levels deep.
 * Every detail has near-miss decoys planted after it. Each is looked up with the query an agent types, through
 * lcm_grep's execute with its default parameters, and counted found when the message holding it is among the
 * first five matches; beside it, a plain substring search (case-insensitive, newest first) over the messages'
 * text as stored. Each detail under a summary is also asked to lcm_expand_query with no model, whose excerpts must
 * quote its answer. Runs last in its size process (it adds two conversations to the size's database).
 */
import type { BenchContext } from "../context.js";
import { Phase, type PhaseResult, round } from "../measure.js";
import { buildRecallCorpus, type PlantedDetail, type QueryForm, QUERY_FORMS, type RecallCorpus } from "../recall-corpus.js";
import { type QualitySession, sessionTool, storeQualitySession } from "../quality-session.js";

const SESSION_MESSAGES = 10_000;
const DETAILS_PER_FORM = 15;
/** A forced compaction every this many messages: far more than five rounds. */
const COMPACT_EVERY = 1_250;
const TOP = 5;
/** A deep DAG: small leaves, condensed two at a time (6 levels over the session). */
const DEEP_DAG_SETTINGS = { leafChunkTokens: 2_000, leafMinFanout: 4, condensedMinFanout: 2, leafTargetTokens: 400, condensedTargetTokens: 400 };
/** What an 8k window stores aside: a message of half its compaction budget (~1.2k tokens) or more; 600 to be sure. */
const SMALL_WINDOW_SETTINGS = { ...DEEP_DAG_SETTINGS, largeFileTokenThreshold: 600 };

interface FormTally {
  details: number;
  plugin: number;
  baseline: number;
  compacted: number;
  excerpts: number;
}

interface SessionRun {
  name: "ordinary" | "storedAside";
  corpus: RecallCorpus;
  session: QualitySession;
}

export async function runRecallQualityPhase(context: BenchContext): Promise<PhaseResult[]> {
  const seed = context.manifest.seed;
  const runs: SessionRun[] = [];
  for (const name of ["ordinary", "storedAside"] as const) {
    const storedAside = name === "storedAside";
    const corpus = buildRecallCorpus(seed, SESSION_MESSAGES, DETAILS_PER_FORM, { sessionId: `bench-recall-${name}`, storedAside });
    const started = performance.now();
    const session = await storeQualitySession(`recall-${name}`, corpus.plan, corpus.turns, {
      compactEvery: COMPACT_EVERY, tokenBudget: storedAside ? 8_000 : 32_000, startTime: Date.UTC(2026, 3, 1),
      database: { target: context.target }, config: storedAside ? SMALL_WINDOW_SETTINGS : DEEP_DAG_SETTINGS, extractive: true,
    });
    // Maintenance indexes what waits, as the turns after would.
    await session.host.engine().maintain({ sessionId: corpus.plan.sessionId, sessionKey: corpus.plan.sessionKey });
    context.log(`    recall.forms ${name}: stored ${corpus.messages} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    runs.push({ name, corpus, session });
  }
  const phase = new Phase("recall.forms");
  const values: Record<string, number | string> = {};
  const misses: string[] = [];
  const all = new Map(QUERY_FORMS.map((form) => [form, emptyTally()]));
  try {
    for (const run of runs) {
      const tallies = new Map(QUERY_FORMS.map((form) => [form, emptyTally()]));
      await measure(run, phase, tallies, misses);
      await describeSession(run, tallies, values);
      for (const [form, tally] of tallies) {
        const total = all.get(form)!;
        for (const key of Object.keys(tally) as (keyof FormTally)[]) total[key] += tally[key];
      }
    }
    let excerpts = 0;
    let compacted = 0;
    for (const [form, tally] of all) {
      values[`plugin:${form}`] = percent(tally.plugin, tally.details);
      values[`baseline:${form}`] = percent(tally.baseline, tally.details);
      values[`excerpts:${form}`] = tally.compacted > 0 ? percent(tally.excerpts, tally.compacted) : "n/a";
      excerpts += tally.excerpts;
      compacted += tally.compacted;
    }
    values.details = [...all.values()].reduce((sum, tally) => sum + tally.details, 0);
    values.pluginMin = Math.min(...[...all.values()].map((tally) => percent(tally.plugin, tally.details)));
    values.excerptsAll = percent(excerpts, compacted);
    values.excerptsMin = Math.min(...[...all.values()].filter((tally) => tally.compacted > 0).map((tally) => percent(tally.excerpts, tally.compacted)));
    values.excerptDetails = compacted;
    if (misses.length > 0) values.misses = misses.join(" | ");
    context.log(`    recall.forms: lowest form ${values.pluginMin}%, excerpts ${values.excerptsAll}% (${compacted} compacted details)`);
    if (misses.length > 0) context.log(`    recall.forms misses: ${misses.slice(0, 12).join(" | ")}`);
    return [phase.finish({ values })];
  } finally {
    for (const run of runs) await run.session.close();
  }
}

async function measure(run: SessionRun, phase: Phase, tallies: Map<QueryForm, FormTally>, misses: string[]): Promise<void> {
  const { corpus, session } = run;
  const grep = sessionTool(session.host, "lcm_grep", corpus.plan);
  const expand = sessionTool(session.excerptHost, "lcm_expand_query", corpus.plan);
  const texts = await storedTexts(session, corpus);
  for (const detail of corpus.details) {
    const tally = tallies.get(detail.form)!;
    const messageId = session.messageIds[detail.messageIndex]!;
    tally.details++;
    const result = await phase.time(() => grep.execute("recall", { ...detail.grep }));
    if (matchIds(result.details).slice(0, TOP).includes(messageId)) tally.plugin++;
    else if (misses.length < 24) misses.push(`${run.name} ${detail.form}: ${JSON.stringify(detail.grep.pattern)} (${describeTop(result.details)})`);
    if (substringSearch(texts, detail.substring).includes(messageId)) tally.baseline++;
    if (!(await isCompacted(session, messageId))) continue;
    tally.compacted++;
    const expanded = await expand.execute("recall", { prompt: detail.question, query: queryWords(detail) });
    const answer = expanded.content.map((part) => part.text).join("\n");
    if (answer.includes(detail.answer)) tally.excerpts++;
    else if (misses.length < 36) misses.push(`${run.name} excerpts ${detail.form}: ${detail.answer}`);
  }
}

/** Per session: its size, how deep its DAG went, what it stored aside, and its lowest form. */
async function describeSession(run: SessionRun, tallies: Map<QueryForm, FormTally>, values: Record<string, number | string>): Promise<void> {
  const { session, corpus, name } = run;
  const conversation = (await session.database.get<{ id: number }>("SELECT conversation_id AS id FROM conversations WHERE session_id = ?", corpus.plan.sessionId))!.id;
  const counts = await session.database.get<{ tokens: number; depth: number | null; summaries: number; files: number; bytes: number | null }>(
    `SELECT (SELECT coalesce(sum(token_count), 0) FROM messages WHERE conversation_id = ?1) AS tokens,
            (SELECT max(depth) FROM summaries WHERE conversation_id = ?1) AS depth,
            (SELECT count(*) FROM summaries WHERE conversation_id = ?1) AS summaries,
            (SELECT count(*) FROM large_files WHERE conversation_id = ?1) AS files,
            (SELECT coalesce(sum(byte_size), 0) FROM large_files WHERE conversation_id = ?1) AS bytes`,
    conversation,
  );
  // PostgreSQL returns sums and counts as text (numeric and bigint beyond a JS number): read them as numbers.
  const shape = Object.fromEntries(Object.entries(counts!).map(([key, value]) => [key, value === null ? null : Number(value)])) as typeof counts & object;
  const inside = corpus.details.filter((detail) => detail.insideStoredContent).length;
  Object.assign(values, {
    [`${name}.messages`]: corpus.messages, [`${name}.tokens`]: Math.round(shape.tokens), [`${name}.compactions`]: session.compactions,
    [`${name}.summaries`]: shape.summaries, [`${name}.dagDepth`]: shape.depth ?? 0, [`${name}.storedFiles`]: shape.files,
    [`${name}.storedMb`]: round((shape.bytes ?? 0) / 1e6, 1), [`${name}.detailsInsideStoredContent`]: inside,
    [`${name}.pluginMin`]: Math.min(...[...tallies.values()].map((tally) => percent(tally.plugin, tally.details))),
  });
}

function emptyTally(): FormTally {
  return { details: 0, plugin: 0, baseline: 0, compacted: 0, excerpts: 0 };
}

/** What an agent would pass as lcm_expand_query's `query`: the grep words, or the question's for a regex. */
function queryWords(detail: PlantedDetail): string {
  return detail.grep.mode === "full_text" ? detail.grep.pattern : detail.question;
}

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : round((100 * part) / whole, 1);
}

/** Message ids among the matches of an lcm_grep result, in order (a summary or file match holds a place too). */
function matchIds(details: unknown): (number | string)[] {
  const matches = ((details ?? {}) as { matches?: { type: string; id: number | string }[] }).matches ?? [];
  return matches.map((match) => (match.type === "message" ? match.id : `${match.type}:${match.id}`));
}

function describeTop(details: unknown): string {
  const matches = ((details ?? {}) as { matches?: { type: string; id: number | string }[] }).matches ?? [];
  return matches.length === 0 ? "no match" : matches.slice(0, TOP).map((match) => `${match.type} ${match.id}`).join(", ");
}

async function isCompacted(session: QualitySession, messageId: number): Promise<boolean> {
  return Number((await session.database.get<{ n: number }>("SELECT count(*) AS n FROM context_items WHERE message_id = ?", messageId))!.n) === 0;
}

/** Every message's text as stored (a message stored aside holds only its reference), newest first, lower-cased. */
async function storedTexts(session: QualitySession, corpus: RecallCorpus): Promise<{ id: number; text: string }[]> {
  return (await session.database.all<{ id: number; text: string }>(
    `SELECT m.message_id AS id, m.content AS text FROM messages m
     WHERE m.conversation_id = (SELECT conversation_id FROM conversations WHERE session_id = ?) ORDER BY m.message_id DESC`,
    corpus.plan.sessionId,
  )).map((row) => ({ id: Number(row.id), text: row.text.toLowerCase() }));
}

/** The baseline: the newest messages whose stored text contains `substring` (case-insensitive), at most five. */
function substringSearch(texts: readonly { id: number; text: string }[], substring: string): number[] {
  const needle = substring.toLowerCase();
  const found: number[] = [];
  for (const { id, text } of texts) {
    if (text.includes(needle)) found.push(id);
    if (found.length >= TOP) break;
  }
  return found;
}
