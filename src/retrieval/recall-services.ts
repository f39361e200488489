/**
 * Builds the recall components on one database connection: the RetrievalEngine, access control, and the
 * expansion service. The plugin calls this lazily (inside a tool's execute), so listing tools never opens the
 * database; building it is a handful of allocations, cheap enough to do per call.
 */
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { LcmConfig } from "../config.js";
import type { HostLlm, SubagentRuntime } from "../host/openclaw-types.js";
import type { GrantStore } from "../store/grant-store.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import type { LcmStore } from "../store/store.js";
import { ExpansionService } from "./delegated-expansion.js";
import { LargeFileReader } from "../large-files/large-file-reader.js";
import type { FileContentReader } from "./file-content.js";
import { RecallAccess } from "./recall-access.js";
import { RetrievalEngine } from "./retrieval-engine.js";

export interface RecallServices {
  retrieval: RetrievalEngine;
  access: RecallAccess;
  expansion: ExpansionService;
  grants: GrantStore;
}

export interface RecallComponentDeps {
  store: Pick<LcmStore, "getSummary" | "getSummariesByRowIds" | "getLargeFile" | "listLargeFiles" | "findLargeFileByHash" | "readablePath" | "findConversation" | "getConversation">;
  retrievalStore: RetrievalStore;
  grants: GrantStore;
  config: Pick<LcmConfig, "maxExpandTokens" | "expansionTimeoutMs" | "allowCrossAgentRecall">;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  subagent?: SubagentRuntime;
  llm?: HostLlm;
  files?: FileContentReader;
  regexBudgetMs?: number;
}

export function createRecallServices(deps: RecallComponentDeps): RecallServices {
  const { store, retrievalStore, grants, config, tokens, clock, logger } = deps;
  const fileReader = new LargeFileReader({ store });
  const retrieval = new RetrievalEngine({
    store: retrievalStore,
    records: store,
    tokens,
    clock,
    files: deps.files ?? largeFileContent(fileReader),
    fileSearch: fileReader,
    ...(deps.regexBudgetMs !== undefined ? { regexBudgetMs: deps.regexBudgetMs } : {}),
  });
  const access = new RecallAccess({
    store: {
      listRecallConversationIds: (agentId) => retrievalStore.listRecallConversationIds(agentId),
      findConversationBySessionKey: (agentId, sessionKey) => retrievalStore.findConversationBySessionKey(agentId, sessionKey),
      findConversation: (key) => store.findConversation(key),
      getConversation: (conversationId) => store.getConversation(conversationId),
    },
    grants,
    clock,
    allowCrossAgentRecall: config.allowCrossAgentRecall,
  });
  const expansion = new ExpansionService({
    retrieval,
    store: retrievalStore,
    grants,
    tokens,
    clock,
    logger,
    config,
    ...(deps.subagent ? { subagent: deps.subagent } : {}),
    ...(deps.llm ? { llm: deps.llm } : {}),
  });
  return { retrieval, access, expansion, grants };
}

/** Adapts the large-file reader's byte and line pages to recall's FileContentReader (missing content → null). */
function largeFileContent(reader: LargeFileReader): FileContentReader {
  const isMissing = async (fileId: string) => (await reader.describe(fileId)).content.status === "missing";
  return {
    async readPage(file, offset, maxBytes) {
      if (await isMissing(file.fileId)) return null;
      const page = await reader.readBytes(file.fileId, { offset, length: maxBytes });
      return { offset: page.start, nextOffset: page.hasMore ? page.end : null, totalBytes: page.totalBytes, text: page.text };
    },
    async readLines(file, startLine, maxLines) {
      if (await isMissing(file.fileId)) return null;
      const page = await reader.readLines(file.fileId, { startLine, maxLines });
      return {
        startLine: page.startLine, endLine: page.endLine, totalLines: page.totalLines, nextStartLine: page.nextStartLine,
        clippedLines: page.clippedLines, text: page.text,
      };
    },
  };
}
