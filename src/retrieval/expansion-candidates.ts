/**
 * Which summaries an lcm_expand_query with a `query` starts from: a relevance-ranked full-text search over
 * summaries and messages, where each message hit stands for the summary that now covers it. Messages still in
 * the context need no expansion (the agent already sees them), so they contribute nothing.
 */
import { LcmError } from "../errors.js";
import type { ConversationId, SummaryRecord } from "../records.js";
import { toFullTextQuery } from "./fts-query.js";
import type { RetrievalEngine } from "./retrieval-engine.js";

export const MAX_CANDIDATES = 6;
/** Hits read to find the candidates: enough that a few noisy message hits cannot crowd out the summaries. */
const CANDIDATE_HITS = 40;

export async function findCandidates(
  retrieval: Pick<RetrievalEngine, "grep" | "locate">,
  conversationIds: ConversationId[],
  query: string,
): Promise<SummaryRecord[]> {
  if (!toFullTextQuery(query)) {
    throw new LcmError("invalid_input", 'Parameter "query" has no searchable words; give the words to look for, e.g. "database migration".', { parameter: "query" });
  }
  const found = await retrieval.grep({
    pattern: query, mode: "full_text", scope: "both", conversationIds, since: null, before: null,
    limit: CANDIDATE_HITS, sort: "relevance",
  });
  const ids: string[] = [];
  for (const match of found.matches) {
    const id = match.type === "summary" ? match.summaryId : match.type === "message" ? match.coveringSummaryId : null;
    if (id && !ids.includes(id)) ids.push(id);
    if (ids.length >= MAX_CANDIDATES) break;
  }
  const candidates: SummaryRecord[] = [];
  for (const id of ids) {
    const located = await retrieval.locate(id);
    if (located?.kind === "summary") candidates.push(located.summary);
  }
  return candidates;
}
