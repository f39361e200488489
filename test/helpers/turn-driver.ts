/**
 * Plays turns the way OpenClaw 2026.9.6 drives a durable turn: a new engine instance, assemble (which records
 * the turn's budget), commitTurn, maintain with a runtimeContext, dispose.
 */
import type { ContextEngine, HostLlm, MaintenanceResult } from "../../src/host/openclaw-types.js";
import type { Turn } from "./agent-session.js";

export interface TurnOptions {
  sessionId?: string;
  /** First assemble budget of the turn (window - reserve - system prompt). */
  tokenBudget?: number;
  /** runtimeContext.llm given to maintain. */
  llm?: HostLlm;
  abortSignal?: AbortSignal;
}

let advancement = 0;

export async function playTurn(newEngine: () => ContextEngine, messages: Turn, options: TurnOptions = {}): Promise<MaintenanceResult> {
  const sessionId = options.sessionId ?? "s1";
  const engine = newEngine();
  await engine.assemble({ sessionId, messages: [], ...(options.tokenBudget ? { tokenBudget: options.tokenBudget } : {}) });
  await engine.commitTurn({ sessionId, advancementKey: `turn-${++advancement}`, messages });
  const result = await engine.maintain({
    sessionId,
    runtimeContext: { tokenBudget: 32_000, ...(options.llm ? { llm: options.llm } : {}) },
    ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
  });
  await engine.dispose();
  return result;
}

export async function playTurns(newEngine: () => ContextEngine, turns: Turn[], options: TurnOptions = {}): Promise<MaintenanceResult[]> {
  const results: MaintenanceResult[] = [];
  for (const turn of turns) results.push(await playTurn(newEngine, turn, options));
  return results;
}
