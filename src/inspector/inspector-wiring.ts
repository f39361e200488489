/**
 * Builds the inspector's API on one open backend with the host-free services, the same way
 * for `lcm inspect` (a connection of its own) and the gateway's Control UI tab (the plugin's shared connection).
 * Write mode adds the repair service; read-only mode says why it is read-only.
 */
import { access } from "node:fs/promises";
import type { LcmConfig } from "../config.js";
import type { Clock, CompletionModel, Logger, TokenEstimator } from "../contracts.js";
import { IntegrityChecker } from "../integrity/integrity-checker.js";
import { repairServiceOn } from "../repair/repair-wiring.js";
import { createRecallServices } from "../retrieval/recall-services.js";
import { RecallService } from "../services/recall-service.js";
import type { LcmBackend } from "../store/backend.js";
import { createSummarizerSelector } from "../summarize/summarizer-selection.js";
import { InspectorApi } from "./inspector-api.js";

export interface InspectorWiring {
  backend: LcmBackend;
  config: LcmConfig;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  /** Null: repairs allowed (the connection writes). Otherwise why the inspector is read-only. */
  readOnlyReason: string | null;
  /** The model for re-summarizing (the host's), when there is one; the standalone Anthropic client otherwise. */
  model?: CompletionModel | undefined;
  env?: NodeJS.ProcessEnv;
}

export function inspectorApiOn(wiring: InspectorWiring): InspectorApi {
  const { backend, config, tokens, clock, logger } = wiring;
  const { store, retrieval: retrievalStore, repairs: repairStore } = backend;
  const integrity = new IntegrityChecker({
    store: backend.integrity, clock, fileExists: (path) => access(path).then(() => true, () => false),
  });
  const recallServices = createRecallServices({
    store, retrievalStore, grants: backend.grants, config, tokens, clock, logger,
  });
  const recall = new RecallService({
    recall: recallServices, clock,
    conversations: { listRecallConversationIds: (agent) => retrievalStore.listRecallConversationIds(agent), getConversation: (id) => store.getConversation(id) },
  });
  const summarizers = createSummarizerSelector({ config, tokens, pluginLlm: wiring.model, env: wiring.env ?? {} });
  const repairs = wiring.readOnlyReason === null
    ? repairServiceOn({ backend, config, tokens, clock, logger, summarizers, integrity })
    : undefined;
  return new InspectorApi({
    config, databasePath: backend.location, store, operator: backend.operator, status: backend.status,
    recall, integrity, writers: (conversationId) => repairStore.summaryWriters(conversationId), tokens, clock,
    readOnlyReason: wiring.readOnlyReason,
    ...(repairs ? { repairs: { service: repairs.service, store: repairs.repairs } } : {}),
  });
}
