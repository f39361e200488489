/**
 * Contracts injected into the engine's components. Each carries its promise in words; fakes in test/fakes
 * implement them and record their calls.
 */

/** Contract: pure, synchronous, never throws; the same input always gives the same count. */
export interface TokenEstimator {
  /** Tokens of a piece of text. */
  estimate(text: string): number;
  /** Fixed cost charged for one image block, whatever its size. */
  readonly imageTokens: number;
}

export type SummaryMode = "normal" | "aggressive";

export interface SummaryRequest {
  /** The source text to summarize (messages or summaries rendered with timestamps). */
  sourceText: string;
  /** 0 for a leaf summary over raw messages; n + 1 for a summary over depth-n summaries. */
  depth: number;
  mode: SummaryMode;
  /** Size the summary should aim at, in tokens. */
  targetTokens: number;
  /** The most recent earlier summary, so the new one does not repeat it. */
  previousContext?: string;
  /** Extra instructions from `/compact <text>` or configuration. */
  customInstructions?: string;
}

/** Summarizes one chunk. Contract: may reject, hang or return junk; the caller escalates and never trusts the size. */
export interface Summarizer {
  summarize(request: SummaryRequest, signal: AbortSignal): Promise<string>;
}

/** Contract: returns milliseconds since the epoch; tests inject a fixed or stepping clock. */
export interface Clock {
  now(): number;
}

/** Contract: never throws. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const systemClock: Clock = { now: () => Date.now() };

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** One request to a text model (the shape of OpenClaw's `llm.complete`, declared here so services need no host type). */
export interface CompletionRequest {
  messages: { role: "system" | "user" | "assistant"; content: string }[];
  model?: string;
  maxTokens?: number;
  temperature?: number;
  systemPrompt?: string;
  signal?: AbortSignal;
  purpose?: string;
}

/**
 * A text model the plugin may call (the host's session or plugin model, or any client shaped like it).
 * Contract: may reject, hang or return a result without text; callers bound it with a timeout and check `text`.
 */
export interface CompletionModel {
  complete(request: CompletionRequest): Promise<{ text: string }>;
}
