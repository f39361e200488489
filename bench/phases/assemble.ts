/**
 * Assemble phases at the host's typical prompt budget (32k) and the plugin's default (128k): over the main
 * conversation (hundreds of thousands of raw context items at 1M messages, filling the budget), and over a
 * compacted history whose context fills about 75% of the budget (summaries of several depths, then raw turns
 * up to the fill), as a conversation stands between two compactions. The compacted history is a conversation of
 * its own, built here the same way at every size, so 32k and 128k assemble different contexts and each size
 * assembles the same one. A new engine per call, as the host builds one per turn.
 */
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { type BenchContext, conversationOf, freshSession, summaryCount, wantsSample } from "../context.js";
import { compactOnce } from "../dataset.js";
import { Phase, type PhaseResult, pending, round } from "../measure.js";

export const ASSEMBLE_BUDGETS = [32_000, 128_000] as const;
/** Share of the budget the compacted history's context fills when it is assembled. */
export const COMPACTED_FILL = 0.75;
/** History written before the sweep: enough for leaf summaries and condensed ones above them. */
const HISTORY_TOKENS = 400_000;
const BATCH_MESSAGES = 500;

interface Session {
  sessionId: string;
  sessionKey: string;
}

export async function runAssemblePhases(context: BenchContext): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (const budget of ASSEMBLE_BUDGETS) results.push(await assemble(context, conversationOf(context, "main"), `assemble.raw.${budget / 1000}k`, budget));
  const compacted = await buildCompactedHistory(context);
  for (const budget of ASSEMBLE_BUDGETS) {
    const name = `assemble.compacted.${budget / 1000}k`;
    if ("reason" in compacted) {
      results.push(pending(name, compacted.reason));
      continue;
    }
    // Raw turns on top of the summaries, up to the fill; the 32k row is measured before the 128k fill.
    await fillTo(context, compacted, Math.floor(budget * COMPACTED_FILL));
    results.push(await assemble(context, compacted.session, name, budget));
  }
  // The turns written here are indexed as maintain would, so no later search phase finds them waiting.
  await context.db.indexPending();
  return results;
}

interface CompactedHistory {
  session: Session;
  turns: () => AgentMessage[];
}

/** A new conversation of the compacted agent: HISTORY_TOKENS of turns, swept by a forced compaction. */
async function buildCompactedHistory(context: BenchContext): Promise<CompactedHistory | { reason: string }> {
  const source = conversationOf(context, "compacted");
  const session = { sessionId: "bench-assemble-compacted", sessionKey: `agent:${source.agentId}:assemble-compacted` };
  const generator = freshSession(context.manifest.seed + 7, { ...source, ...session }, "assemble");
  const compacted = { session, turns: () => generator.nextTurn() };
  await fillTo(context, compacted, HISTORY_TOKENS);
  const sweep = await compactOnce(context.host, { ...source, ...session }, context.db);
  if (sweep.status !== "compacted") return { reason: `the compacted history could not be swept: ${sweep.reason}` };
  if ((await summaryCount(context, session.sessionId)) === 0) return { reason: "the sweep of the compacted history wrote no summary" };
  return compacted;
}

/**
 * Writes new turns (ingestBatch, as the host's non-durable path does) until the context holds `tokens`: batches
 * of about what is missing (a message is about 100 tokens), a turn at a time once close, so the fill passes the
 * target by at most a turn.
 */
async function fillTo(context: BenchContext, history: CompactedHistory, tokens: number): Promise<void> {
  for (let missing = tokens - (await contextTokens(context, history.session)); missing > 0; missing = tokens - (await contextTokens(context, history.session))) {
    const messages: AgentMessage[] = [];
    const wanted = Math.min(BATCH_MESSAGES, Math.floor(missing / 400));
    do messages.push(...history.turns()); while (messages.length < wanted);
    await context.host.engine().ingestBatch({ ...history.session, messages });
  }
}

async function contextTokens(context: BenchContext, session: Session): Promise<number> {
  const row = await context.db.get<{ tokens: number }>("SELECT context_tokens AS tokens FROM conversations WHERE session_id = ?", session.sessionId);
  return Number(row?.tokens ?? 0);
}

async function assemble(context: BenchContext, conversation: Session, name: string, tokenBudget: number): Promise<PhaseResult> {
  const items = (await context.db.get<{ items: number; tokens: number }>(
    "SELECT context_items AS items, context_tokens AS tokens FROM conversations WHERE session_id = ?", conversation.sessionId,
  ))!;
  const params = { sessionId: conversation.sessionId, sessionKey: conversation.sessionKey, messages: [], tokenBudget };
  await context.host.engine().assemble(params); // warm the statement cache, as every turn after the first finds it
  const phase = new Phase(name);
  let result = { messages: [] as unknown[], estimatedTokens: 0 };
  for (let index = 0; wantsSample(context, phase, index); index++) {
    result = await phase.time(() => context.host.engine().assemble(params));
  }
  const summaries = result.messages.filter(
    (message) => typeof (message as { content?: unknown }).content === "string" && String((message as { content: string }).content).startsWith("<summary"),
  ).length;
  return phase.finish({
    values: {
      storedContextItems: items.items,
      storedContextTokens: items.tokens,
      budgetFilled: round(items.tokens / tokenBudget, 3),
      assembledMessages: result.messages.length,
      assembledSummaries: summaries,
      assembledTokens: result.estimatedTokens,
    },
  });
}
