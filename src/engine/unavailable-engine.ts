/**
 * The engine the factory returns when LCM cannot serve turns at all (typically: the database cannot be opened
 * or migrated — a read-only disk, a file from a newer plugin version). Throwing from the factory would fail the
 * host's turn; this engine keeps the conversation going on the host's own messages and says why in every
 * result and in the log. Nothing is stored, so nothing can be half-written; bootstrap imports the turns from the
 * host transcript once the database works again.
 */
import type {
  AssembleParams,
  AssembleResult,
  BootstrapResult,
  CompactResult,
  ContextEngine,
  ContextEngineInfo,
  MaintenanceResult,
} from "../host/openclaw-types.js";
import type { Logger } from "../contracts.js";
import { ENGINE_ID, ENGINE_VERSION } from "./lcm-context-engine.js";

export class UnavailableEngine implements ContextEngine {
  readonly info: ContextEngineInfo = {
    id: ENGINE_ID,
    name: "Lossless Context Management (unavailable)",
    version: ENGINE_VERSION,
    ownsCompaction: true,
    transcriptSemantics: {
      currentTurnFence: "before-current-turn-entry-v1",
      turnAdvancementIdempotency: "atomic-idempotent-v1",
    },
  };

  constructor(private readonly reason: string, private readonly logger: Logger) {}

  private report(hook: string): string {
    const message = `LCM is unavailable (${this.reason}); ${hook} did nothing.`;
    this.logger.error(message);
    return message;
  }

  async bootstrap(): Promise<BootstrapResult> {
    return { bootstrapped: false, reason: this.report("bootstrap") };
  }
  async maintain(): Promise<MaintenanceResult> {
    return { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: this.report("maintain") };
  }
  async ingest(): Promise<{ ingested: boolean }> {
    this.report("ingest");
    return { ingested: false };
  }
  async ingestBatch(): Promise<{ ingestedCount: number }> {
    this.report("ingestBatch");
    return { ingestedCount: 0 };
  }
  async afterTurn(): Promise<void> {
    this.report("afterTurn");
  }
  async commitTurn(): Promise<{ status: "committed" | "duplicate" }> {
    this.report("commitTurn (bootstrap re-imports the turn from the host transcript later)");
    return { status: "committed" };
  }
  async assemble(params: AssembleParams): Promise<AssembleResult> {
    this.report("assemble (passing the host's messages through)");
    return { messages: Array.isArray(params.messages) ? params.messages : [], estimatedTokens: 0 };
  }
  async compact(): Promise<CompactResult> {
    return { ok: false, compacted: false, reason: this.report("compact") };
  }
  async onSubagentEnded(): Promise<void> {}
  async dispose(): Promise<void> {}
}
