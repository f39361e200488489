/**
 * Assemble phases: the main conversation (hundreds of thousands of raw context items at 1M messages) and the
 * compacted one (summaries of several depths plus a fresh tail), at the host's typical prompt budget (32k) and
 * the plugin's default (128k). A new engine per call, as the host builds one per turn.
 */
import { type BenchContext, conversationOf, databaseOf, wantsSample } from "../context.js";
import { Phase, type PhaseResult, pending } from "../measure.js";

export const ASSEMBLE_BUDGETS = [32_000, 128_000] as const;

export async function runAssemblePhases(context: BenchContext): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (const budget of ASSEMBLE_BUDGETS) results.push(await assemble(context, "main", `assemble.raw.${budget / 1000}k`, budget));
  for (const budget of ASSEMBLE_BUDGETS) {
    const name = `assemble.compacted.${budget / 1000}k`;
    if (context.manifest.compaction.status !== "compacted") {
      results.push(pending(name, `the dataset's compacted conversation could not be built: ${context.manifest.compaction.reason}`));
    } else {
      results.push(await assemble(context, "compacted", name, budget));
    }
  }
  return results;
}

async function assemble(context: BenchContext, role: "main" | "compacted", name: string, tokenBudget: number): Promise<PhaseResult> {
  const conversation = conversationOf(context, role);
  const items = databaseOf(context).get<{ items: number; tokens: number }>(
    "SELECT context_items AS items, context_tokens AS tokens FROM conversations WHERE session_id = ?", conversation.sessionId,
  )!;
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
      assembledMessages: result.messages.length,
      assembledSummaries: summaries,
      assembledTokens: result.estimatedTokens,
    },
  });
}
