/**
 * `lcm compact <conversation>`: compacts now, as /compact does (a full sweep down to contextThreshold of the
 * conversation's budget), through the same CompactionService as the hooks. The summarizer: the host's model under
 * `openclaw lcm`, the standalone Anthropic client when ANTHROPIC_API_KEY and summaryModel are set, else the
 * deterministic extractive summarizer. Works with or without a gateway running (a write that finds the range changed
 * under it writes nothing, as in the gateway); the spend guard applies.
 */
import { CompactionService, type CompactOutcome } from "../../services/compaction-service.js";
import { createSummarizerSelector } from "../../summarize/summarizer-selection.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { count } from "../format.js";
import { requireConversation } from "./context-command.js";

export type CompactOutput = CompactOutcome & { conversationId: number };

export async function compactCommand(runtime: CliRuntime, conversationId: number, options: { instructions?: string; budget: boolean }): Promise<CommandOutput<CompactOutput>> {
  const { config } = runtime.settings;
  const stores = runtime.open("write");
  const conversation = await requireConversation(stores, conversationId);
  const { logger } = runtime;
  const service = new CompactionService({
    config, store: stores.store, compactionStore: stores.compactionStore, tokens: runtime.tokens, clock: runtime.clock, logger,
    summarizers: createSummarizerSelector({ config, tokens: runtime.tokens, pluginLlm: runtime.environment.model, env: runtime.environment.env }),
  });
  const progress = runtime.progress("Compacting");
  const before = conversation.contextTokens;
  let outcome: CompactOutcome;
  try {
    outcome = await service.compact({
      target: { conversationId },
      force: true,
      targetKind: options.budget ? "budget" : "threshold",
      customInstructions: options.instructions,
      trigger: "cli",
      onSummary: () => {
        void stores.store.getConversation(conversationId).then((now) => {
          if (now) progress.update(Math.max(0, before - now.contextTokens), before, "context tokens folded");
        });
      },
    });
  } finally {
    progress.stop();
  }
  const details = outcome.details;
  const text = outcome.compacted
    ? `Compacted conversation ${conversationId}: ${count(outcome.tokensBefore ?? 0)} → ${count(outcome.tokensAfter ?? 0)} tokens ` +
      `in ${details?.passes ?? 0} passes (summarizer ${details?.summarizer ?? "?"}).\n${outcome.reason}`
    : `Nothing was compacted in conversation ${conversationId}: ${outcome.reason}`;
  return { data: { conversationId, ...outcome }, text };
}
