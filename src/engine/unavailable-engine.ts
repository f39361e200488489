/**
 * The engine the factory returns when LCM cannot store anything (its database is another plugin's file, not SQLite,
 * read-only, from a newer LCM, or cannot be opened). It steps aside the way OpenClaw's built-in engine works, so
 * the conversation stays safe: it claims neither compaction nor durable turns, so OpenClaw runs each turn on its
 * own path, keeps every message in its own transcript, runs its own overflow checks, and `compact` is OpenClaw's
 * own compaction. Once the database works again, bootstrap imports the missed turns from the host transcript.
 *
 * No `commitTurn`, deliberately (docs/operations.md, "When LCM cannot use its database"): answering "committed"
 * would acknowledge a turn that was not stored; a throwing one would leave each turn queued in the host's outbox,
 * retried before every later turn of the session, forever, with each of those turns degraded and warned about.
 * Without the method the host keeps the turn in its transcript only, which is where bootstrap reads it from.
 * Hooks do not log: the plugin logs the cause once per process (plugin.ts).
 */
import type {
  AssembleParams,
  AssembleResult,
  BootstrapResult,
  CompactParams,
  CompactResult,
  ContextEngineInfo,
  HostPathContextEngine,
  MaintenanceResult,
} from "../host/openclaw-types.js";
import { hostMessagesOf } from "./hook-params.js";
import { ENGINE_ID, ENGINE_VERSION } from "./lcm-context-engine.js";
import type { RuntimeCompaction } from "./runtime-compaction.js";

/** What the host does meanwhile, appended to the cause in every reason the engine gives. */
const MEANWHILE =
  "Meanwhile OpenClaw runs this conversation on its own engine, keeps every message in its own transcript and " +
  "compacts it itself; once the database works, LCM imports the turns it missed from that transcript.";

export class UnavailableEngine implements HostPathContextEngine {
  readonly info: ContextEngineInfo = {
    id: ENGINE_ID,
    name: "Lossless Context Management (unavailable; OpenClaw's own engine runs)",
    version: ENGINE_VERSION,
    ownsCompaction: false,
  };

  /**
   * OpenClaw's own compaction: the SDK's function itself when it has loaded (the host recognises it by identity);
   * while it is still loading, a call that waits for it; without it, an answer saying why nothing was compacted.
   */
  readonly compact: (params: CompactParams) => Promise<CompactResult>;

  /** `cause`: what is wrong, at which path, and the fix (database-problem.ts). */
  constructor(private readonly cause: string, compaction: RuntimeCompaction) {
    const loaded = compaction.current();
    this.compact = loaded?.delegate ?? (async (params) => {
      const settled = await compaction.settled();
      if (settled.delegate) return settled.delegate(params);
      return {
        ok: false,
        compacted: false,
        reason: `LCM is unavailable. ${this.cause} OpenClaw's own compaction could not be reached either: ${settled.reason}; nothing was compacted.`,
      };
    });
  }

  /** The cause and what happens meanwhile: every result that carries a reason gives this. */
  get reason(): string {
    return `LCM is unavailable. ${this.cause} ${MEANWHILE}`;
  }

  async bootstrap(): Promise<BootstrapResult> {
    return { bootstrapped: false, reason: this.reason };
  }
  async maintain(): Promise<MaintenanceResult> {
    return { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: this.reason };
  }
  async ingest(): Promise<{ ingested: boolean }> {
    return { ingested: false };
  }
  async ingestBatch(): Promise<{ ingestedCount: number }> {
    return { ingestedCount: 0 };
  }
  async afterTurn(): Promise<void> {}
  /** The host's own messages, unchanged: what its built-in engine does. */
  async assemble(params: AssembleParams): Promise<AssembleResult> {
    return { messages: hostMessagesOf(params), estimatedTokens: 0 };
  }
  async onSubagentEnded(): Promise<void> {}
  async dispose(): Promise<void> {}
}
