/**
 * What the MCP server reads through, built once on the command's backend (one connection): the same host-free services as the
 * agent tools and the `lcm` CLI (RecallService over RetrievalEngine and the expansion service, StatusService, the
 * operator's conversation listing) and the reader every call runs as: a client of the agents it was given. The MCP
 * layer itself only translates parameters and results.
 */
import type { LcmConfig } from "../config.js";
import type { Clock, CompletionModel, Logger, TokenEstimator } from "../contracts.js";
import { createRecallServices } from "../retrieval/recall-services.js";
import { RecallService, type RecallReader } from "../services/recall-service.js";
import { StatusService } from "../services/status-service.js";
import type { LcmBackend } from "../store/backend.js";
import type { McpSettings } from "./mcp-settings.js";

export type ClientReader = RecallReader & { kind: "client" };

export interface McpBackend {
  /** Where the history is stored: the SQLite file, or the PostgreSQL URL without its password. */
  location: string;
  recall: RecallService;
  status: StatusService;
  reader: ClientReader;
  stores: Pick<LcmBackend, "store" | "operator"> & { readOnly: boolean };
  config: LcmConfig;
  tokens: TokenEstimator;
  /** lcm_expand_query answers with one model call when there is a model, else with excerpts. */
  hasModel: boolean;
  logger: Logger;
}

export interface McpBackendDeps {
  backend: LcmBackend;
  settings: Pick<McpSettings, "agentIds" | "maxResultChars">;
  config: LcmConfig;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  model?: CompletionModel | undefined;
}

export function createMcpBackend(deps: McpBackendDeps): McpBackend {
  const { backend, config, tokens, clock, logger, model } = deps;
  const services = createRecallServices({
    store: backend.store, retrievalStore: backend.retrieval, grants: backend.grants, config, tokens, clock, logger,
    ...(model ? { llm: model } : {}),
  });
  const recall = new RecallService({
    recall: services,
    conversations: {
      listRecallConversationIds: (agentId) => backend.retrieval.listRecallConversationIds(agentId),
      getConversation: (conversationId) => backend.store.getConversation(conversationId),
    },
    clock,
  });
  const status = new StatusService({ location: backend.location, conversations: backend.store, sessions: backend.retrieval, status: backend.status, config, clock });
  return {
    location: backend.location,
    recall,
    status,
    reader: { kind: "client", agentIds: deps.settings.agentIds, maxResultChars: deps.settings.maxResultChars },
    stores: { store: backend.store, operator: backend.operator, readOnly: !backend.writable },
    config,
    tokens,
    hasModel: model !== undefined,
    logger,
  };
}
