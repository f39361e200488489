/**
 * Which summaries an lcm_expand_query with a `query` starts from: a relevance-ranked full-text search over
 * summaries and messages (every word first, then the documents holding the most telling of them), where each
 * message hit stands for the summaries folded under it (they repeat it) and the summary that now covers it. Messages still in the context need no expansion (the
 * agent already sees them), so they contribute nothing. When the query finds nothing, the question is searched.
 */
import { LcmError } from "../errors.js";
import type { ConversationId, SummaryRecord } from "../records.js";
import { parseTextQuery } from "../text/text-query.js";
import type { ExpansionHint } from "./delegated-expansion.js";
import type { RetrievalEngine } from "./retrieval-engine.js";

export const MAX_CANDIDATES = 6;
/** Hits read to find the candidates: enough that a few noisy message hits cannot crowd out the summaries. */
const CANDIDATE_HITS = 40;
/** Best-matching messages named to the helper. */
const MAX_HINTS = 8;

export interface ExpansionStart {
  candidates: SummaryRecord[];
  hints: ExpansionHint[];
}

export async function findCandidates(
  retrieval: Pick<RetrievalEngine, "grep" | "locate">,
  conversationIds: ConversationId[],
  query: string,
  prompt?: string,
): Promise<ExpansionStart> {
  if (!parseTextQuery(query)) {
    throw new LcmError("invalid_input", 'Parameter "query" has no searchable words; give the words to look for, e.g. "database migration".', { parameter: "query" });
  }
  const found = await search(retrieval, conversationIds, query);
  if (found.candidates.length === 0 && prompt && parseTextQuery(prompt)) return search(retrieval, conversationIds, prompt);
  return found;
}

async function search(retrieval: Pick<RetrievalEngine, "grep" | "locate">, conversationIds: ConversationId[], text: string): Promise<ExpansionStart> {
  const found = await retrieval.grep({
    pattern: text, mode: "full_text", scope: "both", conversationIds, since: null, before: null,
    limit: CANDIDATE_HITS, sort: "relevance",
  });
  const ids: string[] = [];
  const hints: ExpansionHint[] = [];
  for (const match of found.matches) {
    // A message stands for the summaries that matched because they repeat it (nearest first), then for the one
    // that now covers it in the context.
    const own = match.type === "summary" ? [match.summaryId]
      : match.type === "message" ? [...(match.alsoIn ?? []), ...(match.coveringSummaryId ? [match.coveringSummaryId] : [])]
      : [];
    // One candidate per match: a summary already chosen that covers it, else the first that does. A message
    // repeated at every depth of the DAG would otherwise take every slot, and the next match none.
    const id = own.find((candidate) => ids.includes(candidate)) ?? own[0];
    if (!id) continue;
    if (match.type === "message" && hints.length < MAX_HINTS && (ids.includes(id) || ids.length < MAX_CANDIDATES)) {
      hints.push({ messageId: match.id, summaryId: id, snippet: match.snippet });
    }
    if (!ids.includes(id) && ids.length < MAX_CANDIDATES) ids.push(id);
  }
  const candidates: SummaryRecord[] = [];
  for (const id of ids) {
    const located = await retrieval.locate(id);
    if (located?.kind === "summary") candidates.push(located.summary);
  }
  return { candidates, hints: hints.filter((hint) => candidates.some((summary) => summary.summaryId === hint.summaryId)) };
}
