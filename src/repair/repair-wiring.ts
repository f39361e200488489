/**
 * Builds the repair service on one open backend: for the `lcm repair` command, the inspector's server and the
 * plugin's maintain. A composition helper, kept here so the three callers wire repairs the same way.
 */
import type { LcmConfig } from "../config.js";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { IntegrityChecker } from "../integrity/integrity-checker.js";
import type { LcmBackend } from "../store/backend.js";
import type { RepairStore } from "../store/repair-store.js";
import type { SummarizerSelector } from "../summarize/summarizer-selection.js";
import { SummaryRepairService } from "./summary-repair-service.js";

export interface RepairWiring {
  backend: Pick<LcmBackend, "location" | "store" | "compaction" | "repairs">;
  config: LcmConfig;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  summarizers: SummarizerSelector;
  integrity: Pick<IntegrityChecker, "check" | "checkRecent">;
}

export function repairServiceOn(wiring: RepairWiring): { service: SummaryRepairService; repairs: RepairStore } {
  const { repairs, store, compaction, location } = wiring.backend;
  const service = new SummaryRepairService({
    repairs, store, compactionStore: compaction,
    integrity: wiring.integrity, summarizers: wiring.summarizers, config: wiring.config, tokens: wiring.tokens, clock: wiring.clock,
    logger: wiring.logger, databasePath: location,
  });
  return { service, repairs };
}
