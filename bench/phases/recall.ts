/**
 * Recall phases through the registered tools: `lcm_describe` on summaries of the compacted conversation, and
 * expansion with `lcm_expand_query` on one summary. The bench host has no sub-agent runtime, so expansion takes
 * the bounded direct path answered by the instant model: what is measured is the DAG walk and source reads.
 */
import type { AgentTool } from "../../src/host/openclaw-types.js";
import { type BenchContext, conversationOf, wantsSample } from "../context.js";
import { Phase, type PhaseResult, pending } from "../measure.js";

export async function runRecallPhases(context: BenchContext): Promise<PhaseResult[]> {
  const compacted = conversationOf(context, "compacted");
  const toolContext = { agentId: compacted.agentId, sessionKey: compacted.sessionKey, sessionId: compacted.sessionId };
  const describe = context.host.tool("lcm_describe", toolContext);
  const expand = context.host.tool("lcm_expand_query", toolContext);
  const summaryIds = await sampleSummaryIds(context, compacted.sessionId, context.repetitions);
  const noSummaries = "the dataset has no summaries (compaction, issue 3)";
  return [
    !describe ? pending("describe", "lcm_describe is not registered yet (issue 4)")
      : summaryIds.length === 0 ? pending("describe", noSummaries)
      : await run(context, describe, "describe", summaryIds.map((id) => ({ id }))),
    !expand ? pending("expand", "lcm_expand_query is not registered yet (issue 4)")
      : summaryIds.length === 0 ? pending("expand", noSummaries)
      : await run(context, expand, "expand", summaryIds.slice(0, 50).map((id) => ({ summaryIds: [id], prompt: "What was decided, exactly?" }))),
  ];
}

/** Summary ids spread evenly over the conversation's summaries (every depth). */
async function sampleSummaryIds(context: BenchContext, sessionId: string, count: number): Promise<string[]> {
  const rows = await context.db.all<{ summary_id: string }>(
    `SELECT summary_id FROM summaries WHERE conversation_id = (SELECT conversation_id FROM conversations WHERE session_id = ?)
     ORDER BY id`,
    sessionId,
  );
  if (rows.length === 0) return [];
  return Array.from({ length: count }, (_, index) => rows[Math.floor((index * rows.length) / count)]!.summary_id);
}

async function run(context: BenchContext, tool: AgentTool, name: string, calls: Record<string, unknown>[]): Promise<PhaseResult> {
  await tool.execute("bench-warmup", calls[0]);
  const llmBefore = context.host.llm.millis;
  const phase = new Phase(name);
  let errors = 0;
  let lastError = "";
  for (const [index, params] of calls.entries()) {
    if (!wantsSample(context, phase, index)) break;
    const result = await phase.time(() => tool.execute(`bench-${index}`, params));
    if (result.isError) {
      errors++;
      lastError = result.content.map((part) => part.text).join(" ").slice(0, 200);
    }
  }
  return phase.finish({
    values: { calls: phase.samples.length, errors, summarizerMs: context.host.llm.millis - llmBefore, ...(lastError ? { lastError } : {}) },
  });
}
