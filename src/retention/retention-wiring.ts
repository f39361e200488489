/**
 * Retention on one backend, wired the same way for the gateway (in the background, on a worker thread of its own for
 * a database file or a PostgreSQL server), the retention worker itself and `lcm retention`: the backend's retention and conversation stores,
 * whole conversations exported as archive records, archives written as gzip JSONL under the archive folder.
 */
import type { Clock, Logger } from "../contracts.js";
import type { LcmBackend } from "../store/backend.js";
import { exportConversationRecords } from "../transfer/jsonl-export.js";
import { GzipJsonlArchiveWriter } from "./archive-writer.js";
import { type RetentionBudget, RetentionService, type RetentionServiceDeps } from "./retention-service.js";
import { runOnRetentionThread, type RetentionThreadRequest } from "./retention-thread.js";

export interface RetentionWiring {
  config: RetentionServiceDeps["config"] & { retentionArchiveDirectory: string; databaseUrl?: string | undefined };
  clock: Clock;
  logger: Logger;
  sliceMs?: number;
  /** Background runs on a worker thread of their own (the gateway's maintain); absent: on the calling thread. */
  onWorkerThread?: boolean;
}

export function retentionServiceOn(backend: Pick<LcmBackend, "kind" | "location" | "retention" | "store" | "exports">, wiring: RetentionWiring): RetentionService {
  const { config, clock, logger } = wiring;
  const target = wiring.onWorkerThread ? workerTarget(backend, config) : null;
  const service: RetentionService = new RetentionService({
    store: backend.retention, conversations: backend.store,
    exportConversation: (conversationId) => exportConversationRecords(backend.exports, conversationId),
    archives: new GzipJsonlArchiveWriter(config.retentionArchiveDirectory), config, clock, logger,
    ...(wiring.sliceMs === undefined ? {} : { sliceMs: wiring.sliceMs }),
    ...(!target ? {} : {
      runner: (budget: RetentionBudget) => runOnRetentionThread({
        ...target, archiveDirectory: config.retentionArchiveDirectory, budget,
        settings: {
          retentionMaxDatabaseMb: config.retentionMaxDatabaseMb, retentionMaxAgeDays: config.retentionMaxAgeDays,
          retentionPruneEndedSessions: config.retentionPruneEndedSessions,
        },
      }, { logger, onCallingThread: () => service.run({ apply: true, budget }) }),
    }),
  });
  return service;
}

/**
 * What a worker opens for the backend's background runs, or null when it cannot have a connection of its own (an
 * in-memory database). On PostgreSQL the statements run on the server, but reading the rows, writing the archive and
 * compressing it are the run's own work: on a gateway's thread its slices held the event loop up to 102 ms
 * (2026-11-28), so they go on a worker too, with a pool of its own.
 */
function workerTarget(backend: Pick<LcmBackend, "kind" | "location">, config: RetentionWiring["config"]): Pick<RetentionThreadRequest, "databasePath" | "databaseUrl"> | null {
  if (backend.kind === "sqlite") return backend.location === ":memory:" ? null : { databasePath: backend.location };
  return config.databaseUrl ? { databasePath: config.databasePath, databaseUrl: config.databaseUrl } : null;
}
