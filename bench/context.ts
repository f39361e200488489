/**
 * What every phase group receives: the host (real plugin entry, instant model), the working database (a SQLite
 * file or a PostgreSQL database) with bookkeeping reads on it, the dataset's manifest, and how many repetitions to
 * run. Phases are written against the public surface only: engine hooks from `api.engine()`, tools from
 * `registerTool`, and SQL reads for bookkeeping (counts, ids).
 */
import type { AgentMessage } from "../src/host/openclaw-types.js";
import type { BenchDatabase, BenchTarget } from "./bench-database.js";
import type { ConversationInfo, DatasetManifest } from "./dataset.js";
import { type ConversationPlan, SessionGenerator } from "./generate.js";
import type { BenchHost } from "./host.js";
import type { PhaseResult } from "./measure.js";
import { Random } from "./random.js";
import { Vocabulary } from "./vocabulary.js";

export interface BenchContext {
  host: BenchHost;
  /** The working database: a copy of the cached dataset (SQLite), or a database loaded from it (PostgreSQL). */
  target: BenchTarget;
  /** Bookkeeping reads on it, and its full-text indexing. */
  db: BenchDatabase;
  manifest: DatasetManifest;
  /** Repetitions for latency phases; a phase stops early once it has MIN_SAMPLES and has run PHASE_TIME_LIMIT_MS. */
  repetitions: number;
  log(line: string): void;
  /** A new, empty database of the same backend for a phase of its own (the whole-history backlog); drop() removes it. */
  scratchDatabase(label: string): Promise<ScratchDatabase>;
  /** The first searches after a bulk ingest, when the run measured them already (PostgreSQL: right after the load). */
  firstSearches?: PhaseResult[];
  /** PostgreSQL: the load's indexing done by the background indexer, measured as backlog.index (when asked for). */
  backlogIndexing?: PhaseResult;
}

export interface ScratchDatabase {
  target: BenchTarget;
  drop(): Promise<void>;
}

export const MIN_SAMPLES = 10;
export const PHASE_TIME_LIMIT_MS = 10_000;

/** Whether a latency phase should take sample `index` (bounded in count and, past MIN_SAMPLES, in time). */
export function wantsSample(context: BenchContext, phase: { elapsedMs: number }, index: number): boolean {
  return index < context.repetitions && (index < MIN_SAMPLES || phase.elapsedMs < PHASE_TIME_LIMIT_MS);
}

export function conversationOf(context: BenchContext, role: ConversationInfo["role"]): ConversationInfo {
  const found = context.manifest.conversations.find((conversation) => conversation.role === role);
  if (!found) throw new Error(`The dataset has no "${role}" conversation.`);
  return found;
}

export async function summaryCount(context: BenchContext, sessionId: string): Promise<number> {
  const row = await context.db.get<{ count: number }>(
    "SELECT count(*) AS count FROM summaries WHERE conversation_id = (SELECT conversation_id FROM conversations WHERE session_id = ?)",
    sessionId,
  );
  return Number(row!.count);
}

/**
 * New turns for a conversation that are not in the dataset: a generator on a different seed, with its own run
 * ids and timestamps after the dataset's, so every message is new to the store.
 */
export function freshTurns(seed: number, target: ConversationInfo, turns: number, label: string): AgentMessage[][] {
  const generator = freshSession(seed, target, label);
  return Array.from({ length: turns }, () => generator.nextTurn());
}

/** The generator behind freshTurns, for workloads too long to hold in memory at once (turns on demand). */
export function freshSession(seed: number, target: Pick<ConversationInfo, "role" | "agentId" | "sessionId" | "sessionKey">, label: string): SessionGenerator {
  const root = new Random(seed ^ 0x5bd1e995);
  const plan: ConversationPlan = {
    role: target.role,
    agentId: target.agentId,
    sessionId: `${target.sessionId}-${label}`,
    sessionKey: target.sessionKey,
    messageTarget: Number.MAX_SAFE_INTEGER,
  };
  return new SessionGenerator(plan, root.fork(), new Vocabulary(root.fork(), 20_000), Date.UTC(2027, 0, 1), false);
}
