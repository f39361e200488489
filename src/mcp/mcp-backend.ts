/**
 * What the MCP server reads through, built once on the command's one connection: the same host-free services as the
 * agent tools and the `lcm` CLI (RecallService over RetrievalEngine and the expansion service, StatusService, the
 * operator's conversation listing) and the reader every call runs as: a client of the agents it was given. The MCP
 * layer itself only translates parameters and results.
 */
import type { CliStores } from "../cli/cli-runtime.js";
import type { LcmConfig } from "../config.js";
import type { Clock, CompletionModel, Logger, TokenEstimator } from "../contracts.js";
import { createRecallServices } from "../retrieval/recall-services.js";
import { RecallService, type RecallReader } from "../services/recall-service.js";
import { StatusService } from "../services/status-service.js";
import type { McpSettings } from "./mcp-settings.js";

export type ClientReader = RecallReader & { kind: "client" };

export interface McpBackend {
  recall: RecallService;
  status: StatusService;
  reader: ClientReader;
  stores: Pick<CliStores, "store" | "operator" | "readOnly">;
  config: LcmConfig;
  tokens: TokenEstimator;
  /** lcm_expand_query answers with one model call when there is a model, else with excerpts. */
  hasModel: boolean;
  logger: Logger;
}

export interface McpBackendDeps {
  stores: CliStores;
  settings: Pick<McpSettings, "agentIds" | "maxResultChars">;
  config: LcmConfig;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  model?: CompletionModel | undefined;
}

export function createMcpBackend(deps: McpBackendDeps): McpBackend {
  const { stores, config, tokens, clock, logger, model } = deps;
  const services = createRecallServices({
    store: stores.store, retrievalStore: stores.retrievalStore, grants: stores.grantStore, config, tokens, clock, logger,
    ...(model ? { llm: model } : {}),
  });
  const recall = new RecallService({
    recall: services,
    conversations: {
      listRecallConversationIds: (agentId) => stores.retrievalStore.listRecallConversationIds(agentId),
      getConversation: (conversationId) => stores.store.getConversation(conversationId),
    },
    clock,
  });
  const status = new StatusService({ conversations: stores.store, sessions: stores.retrievalStore, status: stores.statusStore, config, clock });
  return {
    recall,
    status,
    reader: { kind: "client", agentIds: deps.settings.agentIds, maxResultChars: deps.settings.maxResultChars },
    stores,
    config,
    tokens,
    hasModel: model !== undefined,
    logger,
  };
}
