/**
 * Retention on one backend, wired the same way for the gateway (in the background, on a worker thread of its own for
 * a database file), the retention worker itself and `lcm retention`: the backend's retention and conversation stores,
 * whole conversations exported as archive records, archives written as gzip JSONL under the archive folder.
 */
import type { Clock, Logger } from "../contracts.js";
import type { LcmBackend } from "../store/backend.js";
import { exportConversationRecords } from "../transfer/jsonl-export.js";
import { GzipJsonlArchiveWriter } from "./archive-writer.js";
import { type RetentionBudget, RetentionService, type RetentionServiceDeps } from "./retention-service.js";
import { runOnRetentionThread } from "./retention-thread.js";

export interface RetentionWiring {
  config: RetentionServiceDeps["config"] & { retentionArchiveDirectory: string };
  clock: Clock;
  logger: Logger;
  sliceMs?: number;
  /** Background runs on a worker thread of their own (the gateway's maintain); absent: on the calling thread. */
  onWorkerThread?: boolean;
}

export function retentionServiceOn(backend: Pick<LcmBackend, "kind" | "location" | "retention" | "store" | "exports">, wiring: RetentionWiring): RetentionService {
  const { config, clock, logger } = wiring;
  const service: RetentionService = new RetentionService({
    store: backend.retention, conversations: backend.store,
    exportConversation: (conversationId) => exportConversationRecords(backend.exports, conversationId),
    archives: new GzipJsonlArchiveWriter(config.retentionArchiveDirectory), config, clock, logger,
    ...(wiring.sliceMs === undefined ? {} : { sliceMs: wiring.sliceMs }),
    // A worker has a connection of its own: none can share an in-memory database. PostgreSQL's work runs on the
    // server, its statements awaited without blocking the event loop: no worker thread is needed for it.
    ...(!wiring.onWorkerThread || backend.kind !== "sqlite" || backend.location === ":memory:" ? {} : {
      runner: (budget: RetentionBudget) => runOnRetentionThread({
        databasePath: backend.location, archiveDirectory: config.retentionArchiveDirectory, budget,
        settings: {
          retentionMaxDatabaseMb: config.retentionMaxDatabaseMb, retentionMaxAgeDays: config.retentionMaxAgeDays,
          retentionPruneEndedSessions: config.retentionPruneEndedSessions,
        },
      }, { logger, onCallingThread: () => service.run({ apply: true, budget }) }),
    }),
  });
  return service;
}
