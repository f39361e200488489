/**
 * The performance bar of issue 7 (at 1M messages on a 2-core machine), as data: which figure of which phase,
 * compared how, against what. The report shows every figure at every size with the bar beside it; pass/fail is
 * judged at 1M (the bar's size) and shown as indicative at smaller sizes.
 */
import type { PhaseResult } from "./measure.js";

export interface SizeResult {
  size: number;
  label: string;
  measuredAt: string;
  /** 1-minute load average before and after the size's phases: above ~1 on 2 cores means the figures are noisy. */
  loadAverage: { before: number; after: number };
  nodeVersion: string;
  sqliteVersion: string;
  messages: number;
  textBytes: number;
  /** Batch ingest from an empty file, then full-text indexing of it (as maintain does), when the dataset was built. */
  build: { seconds: number; messagesPerSecond: number; cached: boolean; indexMessagesPerSecond?: number; termsMessagesPerSecond?: number };
  maxRssMb: number;
  phases: PhaseResult[];
}

export interface Bar {
  /** What the figure is, for the table. */
  label: string;
  phase: string;
  /** The figure read from the phase (undefined when not measured). */
  figure(phase: PhaseResult): number | undefined;
  unit: string;
  comparison: "<=" | ">=";
  target: number;
}

const p95 = (phase: PhaseResult) => phase.latency?.p95;
const value = (key: string) => (phase: PhaseResult) => {
  const found = phase.values?.[key];
  return typeof found === "number" ? found : undefined;
};

const latencyBar = (label: string, phase: string, target: number): Bar => ({ label, phase, figure: p95, unit: "ms p95", comparison: "<=", target });

export const BARS: Bar[] = [
  { label: "ingest, batches of 1,000", phase: "ingest.batch", figure: (phase) => phase.rate?.value, unit: "messages/s", comparison: ">=", target: 20_000 },
  { label: "ingest, one turn at a time (commitTurn)", phase: "ingest.turn", figure: (phase) => phase.rate?.value, unit: "messages/s", comparison: ">=", target: 5_000 },
  latencyBar("assemble, raw history, 32k budget", "assemble.raw.32k", 25),
  latencyBar("assemble, raw history, 128k budget", "assemble.raw.128k", 25),
  latencyBar("assemble, compacted history, 32k budget", "assemble.compacted.32k", 25),
  latencyBar("assemble, compacted history, 128k budget", "assemble.compacted.128k", 25),
  latencyBar("engine construction", "engine.construct", 5),
  latencyBar("cold open, new process (first engine + assemble)", "open.cold.new-process", 100),
  latencyBar("cold open, connection closed in process", "open.cold.in-process", 100),
  latencyBar("full-text, rare term, this conversation", "grep.fts.rare.conversation", 50),
  latencyBar("full-text, common term, this conversation", "grep.fts.common.conversation", 50),
  latencyBar("full-text, rare term, relevance order", "grep.fts.rare.relevance.conversation", 50),
  latencyBar("full-text, common term, relevance order", "grep.fts.common.relevance.conversation", 50),
  latencyBar("full-text, rare term, all conversations", "grep.fts.rare.all", 50),
  latencyBar("full-text, common term, all conversations", "grep.fts.common.all", 50),
  latencyBar("full-text, common term, relevance, all conversations", "grep.fts.common.relevance.all", 50),
  latencyBar("regex, rare pattern, this conversation", "grep.regex.rare.conversation", 100),
  latencyBar("regex, common pattern, this conversation", "grep.regex.common.conversation", 100),
  latencyBar("regex, rare pattern, all conversations", "grep.regex.rare.all", 100),
  latencyBar("regex, common pattern, all conversations", "grep.regex.common.all", 100),
  latencyBar("lcm_describe", "describe", 5),
  { label: "compaction overhead per pass (engine time)", phase: "compaction.pass", figure: p95, unit: "ms p95", comparison: "<=", target: 10 },
  { label: "full sweep, engine seconds per 10M tokens", phase: "compaction.sweep", figure: value("engineSecondsPer10MTokens"), unit: "s", comparison: "<=", target: 30 },
  { label: "longest event-loop block during a turn's hooks", phase: "turn.hooks", figure: (phase) => phase.eventLoopMaxMs, unit: "ms", comparison: "<=", target: 50 },
  { label: "database bytes per byte of message text", phase: "storage", figure: value("bytesPerTextByte"), unit: "×", comparison: "<=", target: 2.5 },
];

/** The cross-size bar: assemble at 1M within 1.5× of assemble at 10k for the same context. */
export const SCALING_PHASES = ["assemble.raw.32k", "assemble.raw.128k", "assemble.compacted.32k", "assemble.compacted.128k"];
export const SCALING_LIMIT = 1.5;

export function passes(bar: Pick<Bar, "comparison" | "target">, figure: number): boolean {
  return bar.comparison === "<=" ? figure <= bar.target : figure >= bar.target;
}

export function sizeLabel(size: number): string {
  if (size >= 1_000_000 && size % 1_000_000 === 0) return `${size / 1_000_000}M`;
  if (size >= 1_000 && size % 1_000 === 0) return `${size / 1_000}k`;
  return String(size);
}

export function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!match) throw new Error(`Invalid size "${text}": expected a number with an optional k or M suffix, e.g. 10k, 1M.`);
  const factor = match[2]?.toLowerCase() === "k" ? 1_000 : match[2]?.toLowerCase() === "m" ? 1_000_000 : 1;
  return Math.round(Number(match[1]) * factor);
}
