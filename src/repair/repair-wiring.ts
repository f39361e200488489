/**
 * Builds the repair service on one open database, with the embedded stores: for the `lcm repair` command, the
 * inspector's server and the plugin's maintain. A composition helper (like plugin.ts's openServices), kept here so
 * the three callers wire repairs the same way.
 */
import type { LcmConfig } from "../config.js";
import type { Clock, Logger, TokenEstimator } from "../contracts.js";
import type { Database } from "../sqlite/database.js";
import type { IntegrityChecker } from "../integrity/integrity-checker.js";
import { SqliteCompactionStore } from "../sqlite/sqlite-compaction-store.js";
import { SqliteRepairStore } from "../sqlite/sqlite-repair-store.js";
import { SqliteStore } from "../sqlite/sqlite-store.js";
import type { SummarizerSelector } from "../summarize/summarizer-selection.js";
import { SummaryRepairService } from "./summary-repair-service.js";

export interface RepairWiring {
  database: Database;
  config: LcmConfig;
  tokens: TokenEstimator;
  clock: Clock;
  logger: Logger;
  summarizers: SummarizerSelector;
  integrity: Pick<IntegrityChecker, "check" | "checkRecent">;
}

export function repairServiceOn(wiring: RepairWiring): { service: SummaryRepairService; repairs: SqliteRepairStore } {
  const repairs = new SqliteRepairStore(wiring.database);
  const service = new SummaryRepairService({
    repairs, store: new SqliteStore(wiring.database), compactionStore: new SqliteCompactionStore(wiring.database),
    integrity: wiring.integrity, summarizers: wiring.summarizers, config: wiring.config, tokens: wiring.tokens, clock: wiring.clock,
    logger: wiring.logger, databasePath: wiring.database.path,
  });
  return { service, repairs };
}
